package claims

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// Scenario drafting: `nsperf reproduce --write-scenario` writes a scenario made from the
// claims for the user to edit: the claims' tool with its options, a duration short enough for
// virtual time, a workload per address family the claims name, their MTUs as a matrix, and the
// toggles as two states (the knobs at their 64 KiB defaults, then as the toggle sets them).

// DraftDuration is each run's measured time in a drafted scenario: a guest in virtual time
// decides in seconds what a host's wall clock needs a minute for.
const DraftDuration = "2s"

// WriteScenario writes a scenario for r's claims, named name, as YAML with comments.
func (r *Report) WriteScenario(w io.Writer, name string) error {
	tool, opts := r.draftTool()
	families := r.draftFamilies()
	mtus := r.draftMTUs()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: drafted by nsperf reproduce --write-scenario from %s (lines %s): edit it.\n", name, r.Input, results.LineRanges(r.claimLines()))
	fmt.Fprintf(&b, "# The claims' tool (%s) and options; each run %s long, for a guest's virtual time (the\n# claims' runs were longer); ", tool, DraftDuration)
	if len(r.Toggles) > 0 {
		b.WriteString("the message's toggles as the state \"after\" against \"before\".\n")
	} else {
		b.WriteString("one state: with --patch, the run is the base kernel against the patched one.\n")
	}
	fmt.Fprintf(&b, "name: %s\n", name)
	fmt.Fprintf(&b, "description: drafted from the claims of %s\n", yamlString(r.Input))
	b.WriteString("topology:\n  namespaces: [client, server]\n  links:\n    - veth:\n")
	var ca, sa []string
	for _, f := range families {
		c, s := draftAddrs[f][0], draftAddrs[f][1]
		ca, sa = append(ca, yamlString(c+draftAddrs[f][2])), append(sa, yamlString(s+draftAddrs[f][2]))
	}
	fmt.Fprintf(&b, "        a: {ns: client, name: eth0, addrs: [%s]}\n", strings.Join(ca, ", "))
	fmt.Fprintf(&b, "        b: {ns: server, name: eth0, addrs: [%s]}\n", strings.Join(sa, ", "))
	if len(mtus) > 0 {
		b.WriteString("        mtu: ${mtu}\n")
	}
	r.writeStates(&b)
	b.WriteString("workloads:\n")
	for _, f := range families {
		fmt.Fprintf(&b, "  - name: %s\n    %s:\n", draftWorkloadName(tool, opts, f), tool)
		fmt.Fprintf(&b, "      client: {ns: client, cpu: 0}\n      server: {ns: server, addr: %s, cpu: 1}\n", yamlString(draftAddrs[f][1]))
		fmt.Fprintf(&b, "      duration: %s\n", DraftDuration)
		writeToolOptions(&b, tool, opts)
	}
	b.WriteString("runs: 5\norder: alternate\n")
	if len(mtus) > 0 {
		fmt.Fprintf(&b, "matrix: {mtu: [%s]}\n", strings.Join(mtus, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// draftAddrs are a drafted topology's addresses per family: client, server, prefix length.
var draftAddrs = map[string][3]string{"IPv4": {"198.18.0.1", "198.18.0.2", "/24"}, "IPv6": {"2001:2::1", "2001:2::2", "/64"}}

func (r *Report) claimLines() []int {
	var out []int
	for _, c := range r.Claims {
		out = append(out, c.Lines...)
	}
	sort.Ints(out)
	return slices.Compact(out)
}

// draftTool is the claims' measuring tool and the first claim's options of it: netperf where
// a claim was measured with netperf, else iperf3 (prose, tables and nsperf's own tables name
// no tool nsperf can run otherwise).
func (r *Report) draftTool() (string, map[string]string) {
	for _, c := range r.Claims {
		if c.Tool == "netperf" {
			return "netperf", c.Options
		}
	}
	for _, c := range r.Claims {
		if c.Tool == "iperf3" {
			return "iperf3", c.Options
		}
	}
	return "iperf3", nil
}

// draftFamilies are the address families the claims name, IPv4 when none does.
func (r *Report) draftFamilies() []string {
	var out []string
	for _, f := range []string{"IPv4", "IPv6"} {
		for _, c := range r.Claims {
			if c.Conditions["family"] == f && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		out = []string{"IPv4"}
		if slices.ContainsFunc(r.draftSettings(), func(d scenarios.SettingDraft) bool { return d.IPv6Only }) {
			out = []string{"IPv6"}
		}
	}
	return out
}

// draftMTUs are the MTUs the claims are split by, as numbers ("standard" is 1500, "8k" 8000).
func (r *Report) draftMTUs() []string {
	var out []string
	for _, c := range r.Claims {
		mtu, ok := c.Conditions["mtu"]
		if !ok {
			continue
		}
		n := mtuValue(mtu)
		if n > 0 && !slices.Contains(out, strconv.Itoa(n)) {
			out = append(out, strconv.Itoa(n))
		}
	}
	return out
}

// draftTopology is what the drafted scenario's topology has, for the setting kinds' drafts.
var draftTopology = scenarios.DraftTopology{
	Devices:    []string{"client/eth0", "server/eth0"},
	Namespaces: []string{"client", "server"},
	Sender:     "client/eth0",
}

// DraftSettings are the message's toggles drafted as states by their setting kinds
// (scenarios.ToggleDrafter), in the kinds' key order, those with something drafted or said.
func (r *Report) DraftSettings() []scenarios.SettingDraft { return r.draftSettings() }

func (r *Report) draftSettings() []scenarios.SettingDraft {
	var out []scenarios.SettingDraft
	for _, key := range scenarios.SettingKeys() {
		drafter, ok := scenarios.NewSetting(key).(scenarios.ToggleDrafter)
		if !ok {
			continue
		}
		var shown []scenarios.SettingToggle
		for _, t := range r.Toggles {
			if v, ok := t.Settings[key]; ok {
				shown = append(shown, scenarios.SettingToggle{Device: t.Device, Values: v, Measured: t.measured})
			}
		}
		if len(shown) > 0 {
			out = append(out, drafter.DraftToggles(shown, draftTopology))
		}
	}
	return out
}

// writeStates writes the states: before and after of the toggles as their kinds draft them
// (the message's device is the client's and the server's eth0 here), or one default state.
func (r *Report) writeStates(b *strings.Builder) {
	b.WriteString("states:\n")
	if len(r.Toggles) == 0 {
		b.WriteString("  - name: default\n")
		return
	}
	drafts := r.draftSettings()
	for _, d := range drafts {
		for _, note := range d.Notes {
			fmt.Fprintf(b, "  # %s\n", note)
		}
	}
	var lines []int
	for _, t := range r.Toggles {
		lines = append(lines, t.Line)
	}
	b.WriteString("  - name: \"before\"\n")
	for _, d := range drafts {
		b.WriteString(indentLines(d.Before, "    "))
	}
	fmt.Fprintf(b, "  - name: \"after\"  # line %s\n    compare_to: \"before\"\n", results.LineRanges(lines))
	for _, d := range drafts {
		b.WriteString(indentLines(d.After, "    "))
	}
}

// indentLines puts prefix before each line of text.
func indentLines(text, prefix string) string {
	if text == "" {
		return ""
	}
	return prefix + strings.ReplaceAll(strings.TrimSuffix(text, "\n"), "\n", "\n"+prefix) + "\n"
}

// draftWorkloadName is a workload's name: rr4, stream6, tcp4.
func draftWorkloadName(tool string, opts map[string]string, family string) string {
	n := family[len(family)-1:]
	if tool == "netperf" {
		if strings.Contains(opts["test"], "RR") {
			return "rr" + n
		}
		return "stream" + n
	}
	return "tcp" + n
}

// writeToolOptions writes what the claim's command set: netperf's test, sizes and output
// selectors; iperf3's streams.
func writeToolOptions(b *strings.Builder, tool string, opts map[string]string) {
	if tool == "netperf" {
		if t := opts["test"]; t != "" {
			fmt.Fprintf(b, "      test: %s\n", yamlScalar(t))
		}
		if req, resp, ok := strings.Cut(opts["sizes"], ","); ok {
			if _, e1 := strconv.Atoi(req); e1 == nil {
				if _, e2 := strconv.Atoi(resp); e2 == nil {
					fmt.Fprintf(b, "      request: %s\n      response: %s\n", req, resp)
				}
			}
		}
		if sel := opts["selectors"]; sel != "" {
			var outs []string
			for _, o := range strings.Split(sel, ",") {
				outs = append(outs, yamlScalar(o))
			}
			fmt.Fprintf(b, "      outputs: [%s]\n", strings.Join(outs, ", "))
		}
		return
	}
	if s := opts["streams"]; s != "" {
		if _, err := strconv.Atoi(s); err == nil {
			fmt.Fprintf(b, "      streams: %s\n", s)
		}
	}
}

// yamlString quotes s for YAML.
func yamlString(s string) string { return strconv.Quote(s) }

var plainWordRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// yamlScalar is s as it is where it is a plain word (TCP_RR, MIN_LATENCY), else quoted: a
// message's option may hold anything, invalid UTF-8 included.
func yamlScalar(s string) string {
	if plainWordRe.MatchString(s) {
		return s
	}
	return yamlString(s)
}
