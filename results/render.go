package results

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/knobs"
)

// scaled are the units printed with a prefix, as commit messages write them (65.567 Gbps,
// 3.640 Mpps): each step's factor and name, largest first; the last is the floor.
var scaled = map[string][]struct {
	factor float64
	name   string
}{
	"bit/s": {{1e9, "Gbps"}, {1e6, "Mbps"}, {1e3, "kbps"}},
	"pps":   {{1e6, "Mpps"}, {1e3, "kpps"}, {1, "pps"}},
}

// FormatValue prints a value in its unit the way commit messages do (65.567 Gbps).
func FormatValue(v float64, unit string) string {
	if steps, ok := scaled[unit]; ok {
		for i, s := range steps {
			if v >= s.factor || i == len(steps)-1 {
				if s.factor == 1 {
					return fmt.Sprintf("%.1f %s", v, s.name)
				}
				return fmt.Sprintf("%.3f %s", v/s.factor, s.name)
			}
		}
	}
	switch unit {
	case "count":
		return fmt.Sprintf("%.1f", v)
	case "%":
		return fmt.Sprintf("%.1f%%", v)
	case "us":
		return fmt.Sprintf("%.1f us", v)
	case "trans/s":
		return fmt.Sprintf("%.2f trans/s", v)
	}
	return strings.TrimSpace(fmt.Sprintf("%.3f %s", v, unit))
}

// formatCentre prints a median with its CI as ± the larger distance, in percent.
func formatCentre(s Summary) string {
	c := s.Centre
	v := FormatValue(c.Median, s.Unit)
	if c.Lo == nil || c.Hi == nil || c.Median == 0 {
		return v + " ±n/a"
	}
	spread := math.Max(*c.Hi/c.Median-1, 1-*c.Lo/c.Median)
	if !FinitePercent(spread) {
		return v + " ±n/a" // a median so near 0 that its interval is no percentage of it
	}
	return fmt.Sprintf("%s ±%.1f%%", v, 100*spread)
}

// FormatChange prints a comparison's change: "+12.3%", or "from 0" where the baseline's median
// is 0 and no ratio exists.
func FormatChange(c Comparison) string {
	if c.FromZero {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%%", 100*c.Change)
}

// FormatChangeCI prints a comparison's change with its CI, "+12.3% [+10.1%, +14.6%]", or
// "from 0" (no ratio, no interval).
func FormatChangeCI(c Comparison) string {
	if c.FromZero {
		return "from 0"
	}
	return fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%]", 100*c.Change, 100*c.ChangeLo, 100*c.ChangeHi)
}

// FormatComparison prints a change with its CI, p (and Holm's adjusted p) and verdict, as the
// table does; "~" for no significant change.
func FormatComparison(c Comparison) string {
	switch c.Verdict {
	case TooFewRuns:
		if c.Note == noRuns {
			return "n/a (" + noRuns + ")" // no change was measured, not a change of 0
		}
		return fmt.Sprintf("%s (%s)", FormatChange(c), c.Note)
	case Undecided:
		return fmt.Sprintf("%s undecided: %s", FormatChange(c), c.Note)
	case NoChange:
		return fmt.Sprintf("~ (%s)", formatP(c))
	case TooNoisy:
		return fmt.Sprintf("~ too noisy (%s, %s)", formatP(c), c.Note)
	}
	ci := ""
	if c.HasCI {
		ci = fmt.Sprintf(" [%+.1f%%, %+.1f%%]", 100*c.ChangeLo, 100*c.ChangeHi)
	}
	switch c.Verdict {
	case Negligible:
		return fmt.Sprintf("~ %s (%s%s %s)", c.Note, FormatChange(c), ci, formatP(c))
	case Equivalent:
		return fmt.Sprintf("= equivalent %s (%s%s)", c.Note, FormatChange(c), ci)
	}
	return fmt.Sprintf("%s%s %s %s", FormatChange(c), ci, formatP(c), c.Verdict)
}

// formatP prints p, and for a gated comparison the p adjusted for the run's family (Holm)
// that decided it.
func formatP(c Comparison) string {
	if c.Gated && c.PAdjusted > 0 && c.PAdjusted != c.P {
		return fmt.Sprintf("p=%.3f, adjusted %.3f", c.P, c.PAdjusted)
	}
	return fmt.Sprintf("p=%.3f", c.P)
}

func formatCV(s Stats) string {
	if s.N < 2 || math.IsNaN(s.CV) || math.IsInf(s.CV, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f%%", 100*s.CV)
}

// Table writes the summaries in the layout of the commit message of "openvswitch: raise
// internal port TSO limit": one row per workload and metric, the median of each state with
// its confidence interval, the CV of each state, and each state's change against the state it
// is compared with; then, per case, the states that were unavailable and what recreated
// devices inherited.
func Table(w io.Writer, r *Result) error { return TableWith(w, r, DefaultTableOptions) }

// TableOptions tune the terminal table.
type TableOptions struct {
	// SideMetrics is how many side metrics each comparison shows, the strongest first
	// (their list is sorted by change): 0 none, AllSideMetrics every one.
	SideMetrics int
}

// AllSideMetrics shows every side metric (--side-metrics all).
const AllSideMetrics = -1

// DefaultTableOptions show the ten strongest side metrics per comparison; the JSON and the
// HTML report hold them all.
var DefaultTableOptions = TableOptions{SideMetrics: 10}

// TableWith is Table with options.
func TableWith(w io.Writer, r *Result, opt TableOptions) error {
	for i, k := range r.Kernels {
		fmt.Fprintf(w, "kernel %c: %s\n", 'A'+i, k.Label)
		if k.Build != nil {
			fmt.Fprintln(w, "  "+k.Build.Line())
		}
		if lines := k.Coverage.Lines(); len(lines) > 0 {
			fmt.Fprintf(w, "  the patch's functions, calls in a counting pass of %.0f s before the measured runs (without probes):\n", k.Coverage.Seconds)
			for _, l := range lines {
				fmt.Fprintln(w, "    "+Printable(l))
			}
		}
		if err := TableWith(w, k, opt); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if len(r.Kernels) > 0 {
		fmt.Fprintln(w, "kernel B against kernel A, state by state (STATE@A, STATE@B):")
	}
	for _, c := range r.Capabilities {
		fmt.Fprintln(w, "capability: "+c.Line())
	}
	fmt.Fprintf(w, "%s  run %s  %d runs per state, %s order", r.Scenario.Name, r.RunID, r.Settings.Runs, r.Settings.Order)
	if r.Environment.KernelRelease != "" {
		fmt.Fprintf(w, "  kernel %s", r.Environment.KernelRelease)
	}
	fmt.Fprintln(w)
	if line := DescribeVM(r); line != "" && len(r.Kernels) == 0 {
		fmt.Fprintln(w, line)
	}
	if line := DescribeTurns(r.Turns); line != "" {
		fmt.Fprintln(w, line)
	}
	for _, c := range r.Cases {
		if c.Label != "" {
			fmt.Fprintf(w, "\n[%s]\n", c.Label)
		}
		if err := caseTable(w, c, opt); err != nil {
			return err
		}
		if c.Adaptive != "" {
			fmt.Fprintln(w, "adaptive: "+c.Adaptive)
		}
	}
	fmt.Fprintln(w, "median ± 95% CI (n/a: too few runs for an interval); CV = sample standard deviation / mean;")
	fmt.Fprintln(w, "change = ratio of medians - 1 [95% CI], p = Mann-Whitney U; ~ = no significant change (p > alpha)")
	if pol := r.Settings.Policy.Effective(); pol.MinChange > 0 || r.Settings.Gates != nil {
		floor := fmt.Sprintf("min change %.4g%%", 100*pol.MinChange)
		if len(pol.Floors) > 0 {
			floor = fmt.Sprintf("min change of each series its own, at most %.4g%%", 100*pol.MinChange)
		}
		fmt.Fprintf(w, "gated metrics decide the run, their p adjusted together (Holm) at alpha %g; %s: smaller is negligible, a CI within it equivalent\n", pol.Alpha, floor)
		if pol.MinChangeFrom != "" {
			fmt.Fprintln(w, "min change from: "+Printable(pol.MinChangeFrom))
		}
	}
	if a := r.Settings.Adaptive; a != nil {
		fmt.Fprintf(w, "adaptive runs: at most %d rounds, family-wise alpha %g spent over the looks (%s)\n", a.MaxRuns, a.FamilyAlpha, a.Design)
	}
	for _, warning := range r.Warnings {
		fmt.Fprintln(w, "WARNING: "+warning)
	}
	for _, d := range r.Diagnose() {
		fmt.Fprintln(w, d)
	}
	if !r.Complete {
		fmt.Fprintln(w, "INCOMPLETE: the run ended early (interrupted, or a failure above); the figures cover the runs that finished")
	}
	for _, line := range r.Reproduction.Lines() {
		fmt.Fprintln(w, line)
	}
	return nil
}

func caseTable(w io.Writer, c Case, opt TableOptions) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	head := []string{"workload", "metric"}
	var names []string
	for _, st := range c.States {
		names = append(names, st.Name)
	}
	head = append(head, names...)
	head = append(head, "CV "+strings.Join(names, " / "))
	for _, st := range c.States {
		if st.CompareTo != "" {
			head = append(head, st.Name+" vs "+st.CompareTo)
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	order, rows := summaryRows(c)
	for _, key := range order {
		row := []string{key[0], key[1]}
		var cvs, changes []string
		for _, st := range c.States {
			s, ok := rows[key][st.Name]
			switch {
			case st.Unavailable != "":
				row = append(row, "unavailable")
				cvs = append(cvs, "-")
			case !ok || s.Stats.N == 0:
				row = append(row, "-")
				cvs = append(cvs, "-")
			default:
				row = append(row, formatCentre(s))
				cvs = append(cvs, formatCV(s.Stats))
			}
			if st.CompareTo == "" {
				continue
			}
			if ok && s.Comparison != nil {
				changes = append(changes, FormatComparison(*s.Comparison))
			} else {
				changes = append(changes, "-")
			}
		}
		row = append(row, strings.Join(cvs, " / "))
		row = append(row, changes...)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, st := range c.States {
		if st.Unavailable != "" {
			fmt.Fprintf(w, "state %s unavailable: %s\n", st.Name, st.Unavailable)
		}
	}
	for _, line := range Inheritance(c) {
		fmt.Fprintln(w, line)
	}
	explanation(w, c, opt.SideMetrics)
	for _, e := range c.Expectations {
		if e.NotApplicable != "" {
			fmt.Fprintf(w, "expect %s: N/A (%s)\n", e.Expectation, e.NotApplicable)
			continue
		}
		fmt.Fprintf(w, "expect %s: %s (measured: %s)\n", e.Expectation, e.Verdict(), e.Measured)
	}
	failed := 0
	for _, s := range c.Samples {
		if s.Error != "" {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "%d of %d runs failed and are left out of the statistics (samples[].error in the result)\n", failed, len(c.Samples))
	}
	return nil
}

// explanation writes a case's evidence lines and side-metric tables.
func explanation(w io.Writer, c Case, sideRows int) {
	if lines := EvidenceLines(c); len(lines) > 0 {
		big := "; big packets " + c.BigPackets
		if c.BigPackets == "" {
			big = "" // a result written before big packets were counted, or a case without a limit device
		}
		fmt.Fprintf(w, "evidence (device counters over the samples%s):\n", big)
		for _, line := range lines {
			fmt.Fprintln(w, "  "+line)
		}
	}
	for _, line := range SideMetricTables(c, sideRows) {
		fmt.Fprintln(w, line)
	}
}

// summaryRows groups a case's summaries into the rows of a table: one per workload and
// metric, in the order they come, each with its summaries by state.
func summaryRows(c Case) (order [][2]string, rows map[[2]string]map[string]Summary) {
	rows = map[[2]string]map[string]Summary{}
	for _, s := range c.Summaries {
		key := [2]string{s.Workload, s.Metric}
		if rows[key] == nil {
			rows[key] = map[string]Summary{}
			order = append(order, key)
		}
		rows[key][s.State] = s
	}
	return order, rows
}

// Inheritance says, for each device created anew in every state over a lower device, whether
// it takes each limit from its lower device. Only a lower-device value that changes between
// states can show it: the device then either follows it (inherited) or not; a value that is
// equal in every state is reported as equal, which shows nothing either way.
func Inheritance(c Case) []string {
	var out []string
	var states []StateRecord
	for _, st := range c.States {
		if st.Devices != nil {
			states = append(states, st)
		}
	}
	devices := map[string]string{}
	var order []string
	for _, st := range states {
		for _, dev := range st.Recreated {
			if lower, ok := st.Lower[dev]; ok && devices[dev] == "" {
				devices[dev] = lower
				order = append(order, dev)
			}
		}
	}
	for _, dev := range order {
		lower := devices[dev]
		var names []string
		for _, st := range states {
			names = append(names, st.Name)
		}
		out = append(out, fmt.Sprintf("inheritance: %s over %s, created anew in each state; values per state %s:", dev, lower, strings.Join(names, " / ")))
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
		for _, k := range knobs.ReportOrder() {
			if !k.Inherited {
				continue
			}
			a := k.Name
			var lv, dv []string
			varies, follows := false, true
			for _, st := range states {
				l, d := st.Devices[lower][a], st.Devices[dev][a]
				lv, dv = append(lv, fmt.Sprint(l)), append(dv, fmt.Sprint(d))
				varies = varies || l != states[0].Devices[lower][a]
				follows = follows && l == d
			}
			verdict := "not inherited"
			switch {
			case varies && follows:
				verdict = "inherited"
			case !varies && follows:
				verdict = "equal (the lower device's value never changed: shows nothing)"
			case !varies:
				verdict = "differs (the lower device's value never changed)"
			}
			fmt.Fprintf(tw, "  %s\tlower %s\tdevice %s\t%s\n", a, strings.Join(lv, " / "), strings.Join(dv, " / "), verdict)
		}
		tw.Flush()
		out = append(out, strings.TrimRight(b.String(), "\n"))
	}
	return out
}

// DescribeVM is a line on the guest a run measured in; "" for a run on the host.
func DescribeVM(r *Result) string {
	v := r.Environment.VM
	if v == nil {
		return ""
	}
	first := ""
	if v.FirstSampleSeconds > 0 {
		first = fmt.Sprintf(", first measurement after %.1f s", v.FirstSampleSeconds)
	}
	accel := strings.ToUpper(v.Accel)
	switch {
	case v.TCGThreads != "" && v.CPU != "":
		accel += " (" + v.TCGThreads + "-threaded, CPU " + v.CPU + ")"
	case v.TCGThreads != "":
		accel += " (" + v.TCGThreads + "-threaded)"
	case v.CPU != "":
		accel += " (CPU " + v.CPU + ")"
	}
	idle := ""
	if v.IdleGate != "" {
		idle = "; idle gate " + v.IdleGate
	}
	cpus := ""
	if v.CPUBringUp != "" {
		cpus = " (CPUs brought up " + v.CPUBringUp + ")"
	}
	return fmt.Sprintf("vm: guest kernel %s (%s, sha256 %.12s) in QEMU %s with %s, %d vCPU%s, %d MiB, %s; booted in %.1f s%s; %s%s",
		r.Environment.KernelRelease, v.Image.Path, v.Image.SHA256, v.QEMU, accel, v.CPUs, cpus, v.MemoryMB, DescribeClock(v), v.BootSeconds, first, DescribePinning(v.Pinning), idle)
}

// guestInfo is the guest a run measured in: its own, or for an A/B run of two kernels the
// first kernel's (both ran with the same QEMU options); nil on a host.
func (r *Result) guestInfo() *VMInfo {
	if r.Environment.VM == nil && len(r.Kernels) > 0 {
		return r.Kernels[0].Environment.VM
	}
	return r.Environment.VM
}

// Clock is what a run's seconds were: the wall clock (of a host or a guest), or a guest's
// virtual time with its icount options and QEMU, whose translation decides the instructions
// counted. Figures compare only under the same Clock.
type Clock struct {
	Name, Icount, QEMU string
	// CPU is the guest's -cpu in virtual time: which instructions the kernel may use (without
	// CX16 SLUB emulates cmpxchg16b) changes what is counted. "" for QEMU's default model.
	CPU string
}

// ClockOf is the clock a result measured on.
func ClockOf(r *Result) Clock {
	if v := r.guestInfo(); v != nil && v.ClockName() == "virtual" {
		return Clock{"virtual", v.Icount, v.QEMU, v.CPU}
	}
	return Clock{Name: "wall"}
}

// Key is the clock as one string: "wall", or "virtual icount=OPTIONS qemu=VERSION", with "
// cpu=MODEL" after it when the guest's CPU was not QEMU's default (the keys of results stored
// before the model was recorded stay as they were).
func (c Clock) Key() string {
	if c.Name != "virtual" {
		return c.Name
	}
	key := fmt.Sprintf("virtual icount=%s qemu=%s", c.Icount, c.QEMU)
	if c.CPU != "" {
		key += " cpu=" + c.CPU
	}
	return key
}

// ClockName is the guest's clock: virtual or wall (results that recorded none ran on the
// wall clock).
func (v *VMInfo) ClockName() string {
	if v.Clock == "" {
		return "wall"
	}
	return v.Clock
}

// DescribeClock says what the guest's seconds are: "virtual time (icount
// shift=2,sleep=off,align=off)" or "wall clock".
func DescribeClock(v *VMInfo) string {
	if v.ClockName() == "virtual" && v.RTC != "" {
		return "virtual time (icount " + v.Icount + "; rtc " + v.RTC + ")"
	}
	if v.ClockName() == "virtual" {
		return "virtual time (icount " + v.Icount + ")"
	}
	return "wall clock"
}

// VirtualTimeNote is the line every table of a virtual-time run carries: what its figures
// are, and what they cannot show.
const VirtualTimeNote = "virtual time: figures count the instructions the guest executes per unit of work (QEMU icount), not the host's speed; " +
	"per-packet and per-byte path length is modelled, cache and memory behaviour, lock contention, true parallelism and NIC/DMA timing are not: measure those on hardware"

// DescribePinning says where a guest's QEMU threads ran on the host.
func DescribePinning(p *VMPinning) string {
	if p == nil {
		return "vCPUs not pinned: the host scheduler placed QEMU's threads"
	}
	var vcpus []string
	for _, v := range p.VCPUs {
		vcpus = append(vcpus, fmt.Sprintf("vCPU %d on host CPU %s", v.VCPU, procstat.FormatCPUList(v.CPUs)))
	}
	s := "pinned: " + strings.Join(vcpus, ", ")
	if len(p.VCPUs) > 1 && !slices.ContainsFunc(p.VCPUs, func(v VCPUPin) bool { return v.ThreadID != p.VCPUs[0].ThreadID }) {
		s = fmt.Sprintf("pinned: the one TCG thread of all %d vCPUs on host CPU %s", len(p.VCPUs), procstat.FormatCPUList(p.VCPUs[0].CPUs))
	}
	if len(p.OtherCPUs) == 0 {
		return s + fmt.Sprintf("; QEMU's %d other threads unpinned (every CPU runs a vCPU)", p.OtherThreads)
	}
	s += fmt.Sprintf("; QEMU's %d other threads on CPU %s", p.OtherThreads, procstat.FormatCPUList(p.OtherCPUs))
	if len(p.PausedCPUs) > 0 {
		s += fmt.Sprintf("; paused vCPUs wait on CPU %s", procstat.FormatCPUList(p.PausedCPUs))
	}
	return s
}

// DescribeTurns sums up an A/B run's schedule: how many turns each kernel took while the
// other was paused, and the most host CPU a paused guest used during a turn.
func DescribeTurns(turns []Turn) string {
	if len(turns) == 0 {
		return ""
	}
	var order []string
	var worst Turn
	for _, t := range turns {
		if len(order) < 8 {
			order = append(order, fmt.Sprintf("%d%s", t.Gate, t.Kernel))
		}
		if t.PausedCPUSeconds >= worst.PausedCPUSeconds {
			worst = t
		}
	}
	more := ""
	if len(turns) > len(order) {
		more = " ..."
	}
	if turns[0].Together {
		return fmt.Sprintf("turns: %d (%s%s), both guests' round N at once, each on a host CPU of its own (virtual time: neither counts the other's load)",
			len(turns), strings.Join(order, " "), more)
	}
	return fmt.Sprintf("turns: %d (%s%s), the other guest paused in each; the most host CPU a paused guest used: %.2f s during %s's %.0f s turn %d",
		len(turns), strings.Join(order, " "), more, worst.PausedCPUSeconds, worst.Kernel, worst.Seconds, worst.Gate)
}
