// Package reproduce sets the benchmark claims of a message beside what nsperf measured of
// them: whether anything of a message can be measured here (Read), which scenario measures it
// (Choose, or a scenario drafted from its claims: Draft), what a scenario offers its claims
// (Facts), the claims attached to the run's result (Attach) and the table of claimed beside
// measured (Report). Pure: package measuring makes the run's plan, the command runs it and
// prints.
package reproduce

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// ErrNoScenario: no shipped scenario matches the message.
var ErrNoScenario = errors.New("no shipped scenario matches the message: give --scenario")

// ErrCodeNotRun: the coverage map measured every shipped scenario, the patch's code is where
// it traces (coverage.SourceRoots), and no scenario's traffic runs it.
var ErrCodeNotRun = errors.New("no shipped scenario's traffic runs the patch's code")

var wordRe = regexp.MustCompile(`[a-z0-9]+`)

// Choose names the scenario of shipped that measures a message, and why: the scenario whose
// scoredTerms add up to the most, the simplest of those that tie. Where the coverage map traced
// every shipped scenario and the patch's code, and none runs it, there is none
// (ErrCodeNotRun).
func Choose(rep *claims.Report, series []patches.Patch, shipped []*scenarios.Scenario) (name, why string, err error) {
	w := wantedBy(rep, series)
	runs := slices.ContainsFunc(shipped, func(s *scenarios.Scenario) bool { points, _ := runsPatch(s, w); return points > 0 })
	if !runs && traced(w.cov, shipped, w.touched) {
		return "", "", fmt.Errorf("%w: the coverage map (nsperf coverage) saw none run a function of %s; whatever a run measured would not be the patch's: give --scenario with one that runs it", ErrCodeNotRun, strings.Join(w.touched, ", "))
	}
	var ranked []candidate
	for _, s := range shipped {
		c := candidate{name: s.Name, complexity: complexity(s)}
		var reasons []string
		for _, term := range scoredTerms {
			if points, reason := term(s, w); points > 0 {
				c.score += points
				reasons = append(reasons, reason)
			}
		}
		c.why = strings.Join(reasons, "; ")
		ranked = append(ranked, c)
	}
	return best(ranked)
}

// wanted is what a message asks of the scenario that measures it: the patch's files and
// functions (and the coverage map of what runs them), the words of its subjects, messages
// and files, and its claims' tools, units, netperf tests and their sizes.
type wanted struct {
	touched                    []string
	targets                    []coverage.Target
	cov                        *coverage.Map
	words                      map[string]bool
	tools, units, tests, sizes map[string]bool
	metrics                    map[string]bool // the claims' metrics, as tools declare them
	text                       string          // the subjects, messages and files, lower case
	quantities                 map[string]bool // what the claims measure where no tool's metric is
}

// wantedBy is what a message and its series ask of a scenario.
func wantedBy(rep *claims.Report, series []patches.Patch) wanted {
	w := wanted{touched: patches.Touched(series), targets: coverage.Targets(series),
		tools: map[string]bool{}, units: map[string]bool{}, tests: map[string]bool{}, sizes: map[string]bool{}, metrics: map[string]bool{},
		quantities: map[string]bool{}}
	w.cov, _ = coverage.Shipped() // without a map (a broken build), the declared sources decide
	var text strings.Builder
	for _, p := range series {
		text.WriteString(strings.ToLower(p.Subject + " " + p.Message + " "))
		for _, t := range w.touched {
			text.WriteString(strings.ToLower(t) + " ")
		}
	}
	w.words, w.text = wordsOf(text.String()), text.String()
	for _, c := range rep.Claims {
		w.tools[c.Tool] = true
		if c.Metric != "" {
			w.units[c.Unit] = true
			w.metrics[c.Metric] = true
		} else if c.Quantity != "" {
			w.quantities[c.Quantity] = true
		}
		if t := c.Options["test"]; t != "" {
			w.tests[strings.ToUpper(t)] = true // netperf -t TCP_CRR
			w.sizes[c.Options["sizes"]] = true // -r REQ,RESP; "": netperf's default
		}
	}
	for _, tool := range append(scenarios.ToolNames(), scenarios.ToolProcesses()...) {
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(tool) + `\b`).MatchString(text.String()) {
			w.tools[tool] = true // "Regular netperf TCP_STREAM" in the prose; "xdp-bench on the peer"
		}
	}
	return w
}

// scoredTerms are what makes a scenario the one that measures a message, each giving its
// points and the reason it says: the patch's code running in the scenario's traffic outweighs
// everything else; then the seed it reproduces, named like the message; the claims' tool,
// their netperf test and their unit.
var scoredTerms = []func(s *scenarios.Scenario, w wanted) (points int, reason string){
	runsPatch,    // 20: the patch's functions run in its traffic; 10: some function of its files
	sharesWords,  // 1 a word its seed reference's name shares with the message
	runsTool,     // 1: a workload runs the claims' tool
	runsTest,     // 3: a workload runs the claims' netperf test with their sizes; 2: without
	measuresUnit, // 2: a workload's throughput is in the claims' unit
	gatesMetric,  // 3: a workload is for a metric of the claims' other than throughput
	setsNamed,    // 2: a state sets what the message names (a route's initrwnd, a sysctl)
	records,      // 3: a workload records the claims' side metric (a retransmission's wait)
}

// runsPatch: the patch's functions, else its files, run in the scenario's traffic (as nsperf
// coverage measured them, coverage/map.json; for a scenario the map lacks, its link kinds'
// KernelSources).
func runsPatch(s *scenarios.Scenario, w wanted) (int, string) {
	if len(w.touched) == 0 {
		return 0, ""
	}
	strength, how := w.cov.Runs(s, w.targets, w.touched)
	return 10 * strength, how
}

// sharesWords: the words the name of the seed the scenario reproduces shares with the
// message's subject, text and files.
func sharesWords(s *scenarios.Scenario, w wanted) (int, string) {
	shared := 0
	for _, word := range wordRe.FindAllString(strings.ToLower(strings.TrimSuffix(s.Reference, ".md")), -1) {
		if w.words[word] {
			shared++
		}
	}
	if shared == 0 {
		return 0, ""
	}
	return shared, fmt.Sprintf("it reproduces %s, whose name shares %d word(s) with the message", s.Reference, shared)
}

// runsTool: a workload runs the claims' tool, or a program of the claims' name (xdp-bench,
// a pktgen workload's receiver).
func runsTool(s *scenarios.Scenario, w wanted) (int, string) {
	for _, wl := range s.Workloads {
		if w.tools[wl.Tool()] {
			return 1, "it runs " + wl.Tool() + ", the claims' tool"
		}
	}
	for _, wl := range s.Workloads {
		for _, p := range runsPrograms(wl) {
			if w.tools[p] {
				return 1, "it runs " + p + ", the claims' tool"
			}
		}
	}
	return 0, ""
}

// runsPrograms are the programs a workload runs besides its tool's own name, as its tool says
// (scenarios.ProgramsRun: xdp-bench for a pktgen workload with a receiver).
func runsPrograms(wl scenarios.Workload) []string {
	if p, ok := wl.Spec().(scenarios.ProgramsRun); ok {
		return p.ProgramsRun()
	}
	return nil
}

// runsTest: a workload runs the claims' netperf test, better still with their sizes
// (netperf's default when they name none): a TCP_CRR of 1-byte transactions is not one of
// 64 KiB responses.
func runsTest(s *scenarios.Scenario, w wanted) (points int, reason string) {
	for _, wl := range s.Workloads {
		n, ok := wl.Spec().(*scenarios.Netperf)
		if !ok || !w.tests[n.Test] {
			continue
		}
		sizes := ""
		if n.Request != 0 || n.Response != 0 {
			sizes = fmt.Sprintf("%d,%d", n.Request, n.Response)
		}
		if w.sizes[sizes] {
			return 3, fmt.Sprintf("its workload %s runs the claims' %s with their sizes", wl.Name, n.Test)
		}
		if points == 0 {
			points, reason = 2, fmt.Sprintf("its workload %s runs the claims' %s", wl.Name, n.Test)
		}
	}
	return points, reason
}

// measuresUnit: a workload's throughput is in the claims' unit.
func measuresUnit(s *scenarios.Scenario, w wanted) (int, string) {
	for _, wl := range s.Workloads {
		if u := throughputUnit(wl); w.units[u] {
			return 2, fmt.Sprintf("its workload %s measures the claims' %s", wl.Name, u)
		}
	}
	return 0, ""
}

// gatesMetric: a workload is for (gates on) a metric the claims give other than a throughput,
// which measuresUnit weighs: a transfer's time, a percentile of latency, a rate of packets.
func gatesMetric(s *scenarios.Scenario, w wanted) (int, string) {
	for _, wl := range s.Workloads {
		for _, g := range wl.Gates() {
			if g != scenarios.MetricThroughput && w.metrics[g] {
				return 3, fmt.Sprintf("its workload %s is for the claims' %s", wl.Name, g)
			}
		}
	}
	return 0, ""
}

// setsNamed: a state sets something the message names by its own name (scenarios.Named:
// `initrwnd 64` on a route, tcp_rmem, gso_max_size, fq): what the message measured depends on
// it, so a scenario that sets it can show the change.
func setsNamed(s *scenarios.Scenario, w wanted) (int, string) {
	for _, st := range s.States {
		for _, name := range scenarios.StateNames(st) {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(strings.ToLower(name)) + `\b`).MatchString(w.text) {
				return 2, fmt.Sprintf("its state %s sets %s, which the message names", st.Name, name)
			}
		}
	}
	return 0, ""
}

// records: a workload's runs can record a side metric of its connection the claims give
// (scenarios.Scenario.CanRecord: the waits of retransmissions where a state drops packets
// past the client's device, a handshake's window); the run asks for it (SideRecords).
func records(s *scenarios.Scenario, w wanted) (int, string) {
	for _, wl := range s.Workloads {
		for _, q := range slices.Sorted(maps.Keys(w.quantities)) {
			if ok, _ := s.CanRecord(wl, q); ok {
				return 3, fmt.Sprintf("its workload %s can record the claims' %s", wl.Name, q)
			}
		}
	}
	return 0, ""
}

// best names the candidate of the best score, and why. A tie goes to the simpler scenario
// (fewer devices and states: it measures the claim with the least beside it), then to the
// name; either way it is said, so the list's order decides nothing and the reader sees what
// else would have served. No candidate, or none with a point, is ErrNoScenario.
func best(ranked []candidate) (name, why string, err error) {
	if len(ranked) == 0 {
		return "", "", ErrNoScenario
	}
	slices.SortStableFunc(ranked, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.complexity, b.complexity), cmp.Compare(a.name, b.name))
	})
	top := ranked[0]
	if top.score <= 0 {
		return "", "", ErrNoScenario
	}
	var tied []string
	for _, c := range ranked[1:] {
		if c.score == top.score {
			tied = append(tied, c.name)
		}
	}
	if len(tied) == 0 {
		return top.name, top.why, nil
	}
	rule := "the simplest of them (fewest namespaces, links, states and workloads)"
	if ranked[1].complexity == top.complexity {
		rule = "first by name of the equally simple (give --scenario to take another)"
	}
	with := strings.Join(tied, ", ")
	if len(tied) > 3 {
		with = fmt.Sprintf("%d others (%s, ...)", len(tied), strings.Join(tied[:3], ", "))
	}
	return top.name, top.why + fmt.Sprintf("; it ties with %s: taken as %s", with, rule), nil
}

// candidate is a shipped scenario as Choose ranks it.
type candidate struct {
	name       string
	score      int
	complexity int
	why        string
}

// wordsOf are the words of a text, lower case, and each two neighbours joined: "BIG TCP",
// "big_tcp" and "big-tcp" all give "bigtcp", and "bigger" never gives "big".
func wordsOf(text string) map[string]bool {
	ws := wordRe.FindAllString(strings.ToLower(text), -1)
	out := make(map[string]bool, 2*len(ws))
	for i, w := range ws {
		out[w] = true
		if i > 0 {
			out[ws[i-1]+w] = true
		}
	}
	return out
}

// traced reports whether the map knows every shipped scenario and every touched source file
// is where it traces: then a patch no scenario ran is known not to run, not merely unknown.
func traced(cov *coverage.Map, shipped []*scenarios.Scenario, touched []string) bool {
	code := 0
	for _, f := range touched {
		if path.Ext(f) != ".c" && path.Ext(f) != ".h" {
			continue
		}
		if !coverage.UnderRoots(f) || (path.Ext(f) == ".c" && !cov.Traces(f)) {
			return false // where the trace does not look, or a file its source does not have
		}
		code++
	}
	if code == 0 {
		return false
	}
	for _, s := range shipped {
		if !cov.Knows(s.Name) {
			return false
		}
	}
	return true
}

// complexity is how much a scenario builds and switches: its devices and states.
func complexity(s *scenarios.Scenario) int {
	n := len(s.Topology.Namespaces) + len(s.Topology.Links) + len(s.States) + len(s.Workloads)
	if s.Topology.OVS != nil {
		n += 10 // daemons, a bridge and its ports: far more than a veth pair
	}
	return n
}

// throughputUnit is the unit of a workload's throughput: a request/response test's
// transactions per second, a TCP stream's bits per second, a UDP stream's datagrams and a
// packet generator's frames per second (their gates).
func throughputUnit(w scenarios.Workload) string {
	switch spec := w.Spec().(type) {
	case *scenarios.Netperf:
		if scenarios.Transactional(spec.Test) {
			return "trans/s"
		}
		return "bit/s"
	case *scenarios.Iperf3:
		if spec.UDP() {
			return "pps"
		}
		return "bit/s"
	case *scenarios.Pktgen:
		return "pps"
	}
	return "" // a latency tool's messages are not a throughput a claim gives
}

// Facts are the families and tools of a scenario's workloads and its states that turn
// offloads off: what claims.Match pairs claims with.
func Facts(s *scenarios.Scenario) claims.Facts {
	f := claims.Facts{Families: map[string]string{}, Tools: map[string]string{}, OffloadsOff: map[string]bool{}, Ends: map[string]map[string]string{}}
	for _, w := range s.Workloads {
		client, server := w.Sides()
		f.Ends[w.Name] = map[string]string{"client": client.NS, "server": server.NS}
		f.Families[w.Name] = map[string]string{"-4": "IPv4", "-6": "IPv6"}[server.Family()]
		f.Tools[w.Name] = w.Tool()
	}
	for _, st := range s.States {
		// A state that switches some offload off (veth-udp's gro-off, vxlan's sw-off); one that
		// only switches features on is not.
		f.OffloadsOff[st.Name] = slices.Contains(scenarios.StateToggles(st), "offloads off")
	}
	return f
}

// Attach sets each claim of rep beside its measurement in r (r.Reproduction): source is the
// message as given, data its bytes, s the scenario it was measured with and why it was.
func Attach(r *results.Result, rep *claims.Report, source string, data []byte, s *scenarios.Scenario, why string) {
	sum := sha256.Sum256(data)
	r.Reproduction = &results.Reproduction{Source: source, SHA256: hex.EncodeToString(sum[:]), Scenario: s.Name, Why: why,
		Claims: claims.Match(rep, r, Facts(s))}
	if w := results.CoverageWarning(r.Kernels); w != "" {
		for i, ch := range r.Reproduction.Claims {
			if ch.Outcome != results.NotReproducible {
				r.Reproduction.Claims[i].Outcome = results.NotExercised
				r.Reproduction.Claims[i].Reason = w + ": give a scenario whose traffic runs it (--scenario)"
			}
		}
	}
}

// Report is a message's claims and the result they were attached to: what reproduce prints.
type Report struct {
	Claims *claims.Report
	Result *results.Result
}

// WriteText writes each claim beside its measurement, one row each, then the measured runs
// in the message's own layout where it has one.
func (rr Report) WriteText(w io.Writer) error {
	rp := rr.Result.Reproduction
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\tlines\tmetric\tconditions\tclaimed\tstated\tmeasured\tcomparison\toutcome")
	for _, ch := range rp.Claims {
		fmt.Fprintln(tw, row(ch))
	}
	tw.Flush()
	for _, ch := range rp.Claims {
		if ch.Reason != "" {
			fmt.Fprintf(w, "claim %d: %s\n", ch.Claim, ch.Reason)
		}
	}
	if len(rr.Claims.Setup) > 0 {
		fmt.Fprintf(w, "the claims were measured with: %s; here: network namespaces on one machine\n", strings.Join(rr.Claims.Setup, ", "))
	}
	fmt.Fprintln(w, "magnitudes differ by machine and by clock (a guest's virtual time counts instructions): the direction and the decision are what reproduce")
	var layout strings.Builder
	if err := claims.WriteLayout(&layout, rr.Claims, rr.Result, rp.Claims); err == nil && layout.Len() > 0 {
		fmt.Fprintf(w, "measured, in the message's layout:\n%s", layout.String())
	}
	return nil
}

// row is one claim's row of the table, its cells tab-separated.
func row(ch results.ClaimCheck) string {
	stated, measured, comparison := "-", "-", "-"
	if ch.StatedChange != nil {
		stated = fmt.Sprintf("%+.1f%%", 100**ch.StatedChange)
	}
	if m := ch.Measured; m != nil {
		measured = fmt.Sprintf("%s p=%.3g", results.FormatChangeCI(*m), m.P)
		comparison = ch.State + " vs " + ch.Baseline
		if ch.Workload != "" {
			comparison = ch.Workload + " " + comparison
		}
		if ch.Case != "" {
			comparison = "[" + ch.Case + "] " + comparison
		}
	}
	conds := "-"
	if len(ch.Conditions) > 0 {
		var parts []string
		for k, v := range ch.Conditions {
			parts = append(parts, k+"="+v)
		}
		conds = strings.Join(parts, ",")
	}
	return fmt.Sprintf("%d\t%s\t%s\t%s\t%+.1f%%\t%s\t%s\t%s\t%s", ch.Claim, results.LineRanges(ch.Lines), ch.Metric, conds, 100*ch.ClaimedChange, stated, measured, comparison, ch.Outcome)
}

// Outcomes are the claims contradicted and undecided, which decide reproduce's exit.
func (rr Report) Outcomes() (contradicted, undecided []string) {
	for _, ch := range rr.Result.Reproduction.Claims {
		switch ch.Outcome {
		case results.Contradicted:
			contradicted = append(contradicted, fmt.Sprint(ch.Claim))
		case results.Undecided:
			undecided = append(undecided, fmt.Sprint(ch.Claim))
		}
	}
	return contradicted, undecided
}

// What the claims' outcomes decide of a reproduction (Verdict).
const (
	Reproduced   = "reproduced"   // every claim measured was reproduced
	NotMeasured  = "not measured" // no claim could be set beside a measurement here
	Contradicted = "contradicted" // some claim was contradicted
	Undecided    = "undecided"    // some claim was undecided, none contradicted
)

// Verdict is what the claims' outcomes decide of the reproduction, and why: the reason no
// claim was measured (a patch whose code did not run, else each claim's own), or the claims
// contradicted or undecided.
func (rr Report) Verdict() (verdict, why string) {
	contradicted, undecided := rr.Outcomes()
	measured, notExercised := 0, ""
	for _, ch := range rr.Result.Reproduction.Claims {
		switch ch.Outcome {
		case results.NotExercised:
			notExercised = ch.Reason
		case results.NotReproducible:
		default:
			measured++
		}
	}
	switch {
	case measured == 0 && notExercised != "":
		return NotMeasured, notExercised
	case measured == 0:
		return NotMeasured, "none of the claims can be set beside a measurement here (see each claim's reason)"
	case len(contradicted) > 0:
		return Contradicted, "claim(s) " + strings.Join(contradicted, ", ") + " contradicted"
	case len(undecided) > 0:
		return Undecided, "claim(s) " + strings.Join(undecided, ", ") + " undecided"
	}
	return Reproduced, ""
}

// DraftFor says why a message's toggles need a scenario drafted from them rather than a
// shipped one: they set sysctls or attach root qdiscs that no shipped scenario's states set (a sysctl toggled
// between the message's runs is the change measured, and a shipped scenario's own states
// would set the claims beside something else). "" when a shipped scenario models them.
func DraftFor(rep *claims.Report, shipped []*scenarios.Scenario) string {
	var toggled []string // "sysctl NAME", "qdisc KIND": what the setting kinds' drafts need
	for _, d := range rep.DraftSettings() {
		for _, what := range d.Toggles {
			if !slices.Contains(toggled, what) {
				toggled = append(toggled, what)
			}
		}
	}
	if len(toggled) == 0 {
		return ""
	}
	slices.Sort(toggled)
	for _, s := range shipped {
		set := map[string]bool{}
		for _, st := range s.States {
			for _, what := range scenarios.StateToggles(st) {
				set[what] = true
			}
		}
		if !slices.ContainsFunc(toggled, func(what string) bool { return !set[what] }) {
			return ""
		}
	}
	return fmt.Sprintf("the message toggles %s, which no shipped scenario's states set: its toggles as the states of a drafted scenario", strings.Join(toggled, ", "))
}

var draftNameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)

// Draft is the scenario drafted from a message's claims, to be written to path and named
// after its file (else "drafted"), checked to load: their tool and options, 2 s runs, the
// toggles as states before and after.
func Draft(rep *claims.Report, source, path string) ([]byte, error) {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if !draftNameRe.MatchString(name) {
		name = "drafted"
	}
	var b strings.Builder
	if err := rep.WriteScenario(&b, name); err != nil {
		return nil, err
	}
	if _, err := scenarios.Parse(path, []byte(b.String()), scenarios.Options{}); err != nil {
		return nil, fmt.Errorf("the scenario drafted from %s does not load (a bug of nsperf; the draft follows):\n%w\n%s", source, err, b.String())
	}
	return []byte(b.String()), nil
}
