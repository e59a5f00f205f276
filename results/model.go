// Package results holds the result model (versioned JSON), its statistics and renderers, and
// the store: the result file, written atomically, and the journal that keeps the samples of
// an interrupted run. Nothing here needs root; only the store touches files.
package results

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Schema is the version of the result JSON; readers refuse any other.
const Schema = "nsperf.result/v1"

// Result is everything one `nsperf run` measured, with what is needed to reproduce it.
type Result struct {
	Schema      string       `json:"schema"`
	RunID       string       `json:"run_id"`
	Scenario    ScenarioInfo `json:"scenario"`
	Label       string       `json:"label,omitempty"` // e.g. the kernel under test
	Start       time.Time    `json:"start"`
	End         time.Time    `json:"end"`
	Complete    bool         `json:"complete"` // false when interrupted
	Settings    Settings     `json:"settings"`
	Environment Environment  `json:"environment"`
	Cases       []Case       `json:"cases"` // one per matrix combination; one when there is no matrix
	// FirstSampleSeconds is the time from the start of the run (before the topology was
	// built) to the start of its first measurement.
	FirstSampleSeconds float64 `json:"first_sample_seconds,omitempty"`
	// Warnings say what makes the figures unlike the path they stand for.
	Warnings []string `json:"warnings,omitempty"`
	// Kernels are the kernels' own results of an A/B run of two kernels (nsperf run --kernel A
	// --kernel B); the cases of this result then hold the states of both, named state@A and
	// state@B, and compare each state of B with the same state of A.
	Kernels []*Result `json:"kernels,omitempty"`
	// Build is how nsperf built this kernel under test from a patch series (run --patch).
	Build *KernelBuild `json:"build,omitempty"`
	// Coverage is how often this kernel called the functions the patch changes, counted in
	// a pass before the measured runs (run --patch, reproduce).
	Coverage *Coverage `json:"coverage,omitempty"`
	// Trace is which functions ran (nsperf coverage).
	Trace *Trace `json:"trace,omitempty"`
	// Reproduction holds the claims a run reproduced (nsperf reproduce) beside what it
	// measured for each.
	Reproduction *Reproduction `json:"reproduction,omitempty"`
	// Capabilities are the states one side cannot apply and another can (a patch that raises
	// a device's limit): in an A/B run of two kernels, or a comparison of stored runs.
	Capabilities []Capability `json:"capabilities,omitempty"`
	// Turns are the A/B run's schedule: which kernel ran which round while the other was
	// paused, and the host CPU the paused one used meanwhile.
	Turns []Turn `json:"turns,omitempty"`
}

// Turn is one kernel's turn in an A/B run: it ran its round Gate while the other was paused,
// or (Together) at the same time as the other's round Gate, each guest on a host CPU of its
// own, in virtual time.
type Turn struct {
	Gate    int     `json:"gate"`    // the guest's N-th round (counted over all cases)
	Kernel  string  `json:"kernel"`  // A or B
	Seconds float64 `json:"seconds"` // how long the turn took
	// PausedCPUSeconds is the host CPU time the paused guest (its QEMU) used meanwhile.
	PausedCPUSeconds float64 `json:"paused_cpu_seconds"`
	Together         bool    `json:"together,omitempty"`
}

// ScenarioInfo identifies the scenario exactly: its full text and hash.
type ScenarioInfo struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Text   string `json:"text"`
}

// Settings are the run's effective method, after command-line overrides.
type Settings struct {
	Runs  int    `json:"runs"`
	Order string `json:"order"`
	Seed  *int64 `json:"seed,omitempty"`
	// Policy is how the comparisons were decided; `nsperf report` recomputes with it.
	Policy Policy `json:"policy"`
	// Concurrent: measured while another nsperf run measured on this machine (--concurrent).
	Concurrent string `json:"concurrent,omitempty"`
	// Adaptive describes an adaptive run (runs: auto); Policy.Alpha is then the alpha of each
	// look.
	Adaptive *Adaptive `json:"adaptive,omitempty"`
	// Gates are each workload's gated metrics: they decide the run; others are information.
	Gates map[string][]string `json:"gates,omitempty"`
	// RunLength is how long one run of each workload takes, warm-up included ("12s"), after
	// overrides: the part of the method that the scenario text alone does not tell.
	RunLength map[string]string `json:"run_length,omitempty"`
}

// Environment is the fingerprint of the machine the run measured.
type Environment struct {
	KernelRelease string            `json:"kernel_release"`
	KernelVersion string            `json:"kernel_version"`
	Machine       string            `json:"machine"`
	CPUModel      string            `json:"cpu_model"`
	CPUs          int               `json:"cpus"`
	Tools         map[string]string `json:"tools"` // name -> version
	Hostname      string            `json:"hostname"`
	OVS           *OVSInfo          `json:"ovs,omitempty"`
	// VM is the virtual machine the run measured in (nsperf run --kernel); the kernel fields
	// above are then the guest's.
	VM *VMInfo `json:"vm,omitempty"`
	// System is how the machine was tuned for measuring (nsperf check): governor, turbo, SMT,
	// irqbalance, IRQs, isolation, THP, steal, KVM.
	System []SystemFact `json:"system,omitempty"`
}

// SystemFact is one item of nsperf check: its value, whether it helps measuring, and what to
// change when it does not.
type SystemFact struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	OK     bool   `json:"ok"`
	Advice string `json:"advice,omitempty"`
}

// EmulatedNICNote is said of a run in virtual time over emulated NICs: what of them the
// clock does not hold.
const EmulatedNICNote = "emulated NICs in virtual time: QEMU's main loop does part of the devices' work in host time, and host load reaches these figures (an A/A of virtio-net pairs: CV 1.4-4% on a quiet host, 16% beside other guests); measure an A/A first, on a quiet machine"

// VMInfo is the QEMU guest of a run on a kernel under test.
type VMInfo struct {
	Accel    string      `json:"accel"` // kvm or tcg
	CPUs     int         `json:"cpus"`
	MemoryMB int         `json:"memory_mb"`
	QEMU     string      `json:"qemu"` // version
	Image    KernelImage `json:"image"`
	Modules  string      `json:"modules,omitempty"` // --modules DIR
	Loaded   []string    `json:"loaded,omitempty"`  // the modules loaded, in order
	// NICs are the emulated NICs the machine had for the scenario's NIC pairs, as QEMU's
	// -device values ("virtio-net-pci,netdev=nic0_0,mac=52:54:00:...").
	NICs        []string `json:"nics,omitempty"`
	BootSeconds float64  `json:"boot_seconds"` // QEMU's start to nsperf's start in the guest
	// Boot is how QEMU entered the kernel: vm.BootPVH (the image's vmlinux, decompressed on
	// the host) or "bzimage"; "" in results written before it was recorded (bzImages).
	Boot string `json:"boot,omitempty"`
	// FirstSampleSeconds is the time from the start of nsperf run on the host to the guest's
	// first measurement: boot, module loading and the topology's build.
	FirstSampleSeconds float64 `json:"first_sample_seconds,omitempty"`
	Warning            string  `json:"warning,omitempty"` // e.g. why KVM was not used
	// TCGThreads is TCG's threading (multi: one host thread per vCPU; single: one for all,
	// as virtual time needs); "" under KVM.
	TCGThreads string `json:"tcg_threads,omitempty"`
	// CPU is QEMU's -cpu as passed (qemu64,-cx16 under TCG: vm.TCGCPUModel says why); "" for
	// QEMU's default model.
	CPU string `json:"cpu,omitempty"`
	// Clock is the guest's clock: "virtual" (QEMU's icount: time counts the instructions
	// the guest executes) or "wall"; "" in results written before the clock was recorded,
	// all of which ran on the wall clock.
	Clock string `json:"clock,omitempty"`
	// Icount is QEMU's -icount option string as passed, for the virtual clock.
	Icount string `json:"icount,omitempty"`
	// RTC is QEMU's -rtc as passed, for the virtual clock: the real-time clock on the virtual
	// clock from a date in whole seconds ("2026-12-06T10:31:07,clock=vm", vm.VirtualRTC); ""
	// in results written before it was set, whose guests' real-time clocks ran on the host's.
	RTC string `json:"rtc,omitempty"`
	// IdleGate says how the guest's idle gate ran: "skipped: virtual time" where host load
	// cannot reach the figures; "" where it ran as on a host.
	IdleGate string `json:"idle_gate,omitempty"`
	// CPUBringUp is how the guest's CPUs came up where not by the kernel at boot: "after
	// boot: maxcpus=1, the others onlined by /init" in virtual time with several vCPUs.
	CPUBringUp string `json:"cpu_bring_up,omitempty"`
	// Pinning is where QEMU's threads ran on the host; nil when they were not pinned
	// (--vm-pin=false).
	Pinning *VMPinning `json:"pinning,omitempty"`
}

// VMPinning is where a guest's QEMU threads were allowed to run on the host.
type VMPinning struct {
	// VCPUs is each vCPU's host thread (QMP query-cpus-fast) and its host CPUs.
	VCPUs []VCPUPin `json:"vcpus"`
	// OtherCPUs are the host CPUs of QEMU's other threads (main loop, I/O, RCU): CPUs no vCPU
	// runs on. Empty when every allowed CPU runs a vCPU: the other threads were left alone.
	OtherCPUs    []int `json:"other_cpus,omitempty"`
	OtherThreads int   `json:"other_threads"`
	// PausedCPUs is where the vCPU threads wait while an A/B run pauses the guest: OtherCPUs,
	// or empty when there are none (a paused vCPU uses no CPU, but stays where it was).
	PausedCPUs []int `json:"paused_cpus,omitempty"`
}

// VCPUPin is one vCPU's host thread and the host CPUs it may run on.
type VCPUPin struct {
	VCPU     int   `json:"vcpu"`
	ThreadID int   `json:"thread_id"`
	CPUs     []int `json:"cpus"`
}

// KernelImage is a kernel image as its boot header identifies it.
type KernelImage struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Release string `json:"release"` // uname -r of the guest
	Version string `json:"version"` // the header's whole version string
}

// OVSInfo is the Open vSwitch a run used.
type OVSInfo struct {
	Version  string `json:"version"`
	Datapath string `json:"datapath"` // system (kernel module) or netdev (userspace)
	Instance string `json:"instance"` // private, or existing unix:PATH
}

// Case is one concrete scenario (one matrix combination).
type Case struct {
	Matrix    map[string]string `json:"matrix,omitempty"`
	Label     string            `json:"label,omitempty"` // the matrix values, e.g. "mtu=8000"
	Schedule  [][]string        `json:"schedule"`        // state names per round, in the order they ran
	States    []StateRecord     `json:"states"`
	Samples   []Sample          `json:"samples"`
	Summaries []Summary         `json:"summaries"`
	// Adaptive says how many rounds an adaptive run took in this case, and why it stopped.
	Adaptive string `json:"adaptive,omitempty"`
	// Expectations are the scenario's expectations checked against this case.
	Expectations []ExpectationResult `json:"expectations,omitempty"`
	// Evidence says per state what the datapath did (packet sizes on the devices the state's
	// limits concern, packets above 64 KiB) and warns where a state did not do what it set.
	Evidence []Evidence `json:"evidence,omitempty"`
	// SideMetrics are the counters that moved between compared states beyond the noise:
	// information, never gated.
	SideMetrics []SideMetric `json:"side_metrics,omitempty"`
	// BigPackets says how packets above 64 KiB were counted, or why they were not.
	BigPackets string `json:"big_packets,omitempty"`
}

// StateRecord is what a state really was: the device attributes read back after applying it.
type StateRecord struct {
	Name string `json:"name"`
	SideOf
	CompareTo string `json:"compare_to,omitempty"` // the state it is compared with; "" for the baseline
	// Unavailable says why an optional state could not be applied; it has no samples then.
	Unavailable string                       `json:"unavailable,omitempty"`
	Devices     map[string]map[string]uint64 `json:"devices,omitempty"`   // "ns/dev" -> attribute -> value
	Features    map[string]map[string]bool   `json:"features,omitempty"`  // "ns/dev" -> ethtool feature -> on
	Lower       map[string]string            `json:"lower,omitempty"`     // "ns/dev" -> its lower device
	Recreated   []string                     `json:"recreated,omitempty"` // devices created anew in this state
	Commands    []string                     `json:"commands,omitempty"`  // the iproute2/ethtool equivalent of applying it
	// ApplySeconds is how long applying the state and reading every device back took, each
	// time it was applied.
	ApplySeconds []float64         `json:"apply_seconds,omitempty"`
	Qdiscs       map[string]string `json:"qdiscs,omitempty"` // "ns/dev" -> the root qdisc read back
	// Sysctls are the sysctls any state sets, as read back in this state: namespace -> name
	// -> value (fields separated by one space).
	Sysctls map[string]map[string]string `json:"sysctls,omitempty"`
	// Routes are the attributes of the routes any state sets, as read back in this state:
	// namespace -> destination -> "initcwnd 40 quickack 1" ("(none)" for none).
	Routes map[string]map[string]string `json:"routes,omitempty"`
	// XDP are the XDP programs attached in this state, as read back: "ns/dev" -> "pass (id N,
	// native)", or "object PATH, program NAME (id N, native)" for an object's program.
	XDP map[string]string `json:"xdp,omitempty"`
	// Settings are what the setting kinds without a field of their own above read back: kind
	// -> target -> value.
	Settings map[string]map[string]string `json:"settings,omitempty"`
}

// SetReadBack puts what applying the state read back (rb, as the machine recorded it: every
// setting kind's record and the devices' places) into r, whose own fields stay.
func (r *StateRecord) SetReadBack(rb StateRecord) {
	r.Devices, r.Features, r.Lower, r.Recreated = rb.Devices, rb.Features, rb.Lower, rb.Recreated
	r.Qdiscs, r.Sysctls, r.Routes, r.XDP, r.Settings = rb.Qdiscs, rb.Sysctls, rb.Routes, rb.XDP, rb.Settings
}

// SideOf places a state, a sample or a summary of a merged result (an A/B run of two
// kernels, or nsperf compare's runs side by side): Side names its side (A, B, or compare's name
// of a run) and Of is the state's own name there. The merged name STATE@SIDE is for display
// only: code asks these fields. Zero in a result of one run.
type SideOf struct {
	Side string `json:"side,omitempty"`
	Of   string `json:"of,omitempty"`
}

// OwnState is the state's own name: Of in a merged result, else name.
func (s SideOf) OwnState(name string) string {
	if s.Of != "" {
		return s.Of
	}
	return name
}

// Sample is one tool run.
type Sample struct {
	Round int    `json:"round"` // 1-based
	State string `json:"state"`
	SideOf
	Workload string   `json:"workload"`
	Tool     string   `json:"tool"`
	Argv     []string `json:"argv"` // the client's; the first client's of several
	// ClientsArgv are the argv of each client of a workload with several clients at once.
	ClientsArgv [][]string `json:"clients_argv,omitempty"`
	Start       time.Time  `json:"start"`
	Seconds     float64    `json:"seconds"` // wall time of the client
	Metrics     []Metric   `json:"metrics,omitempty"`
	Error       string     `json:"error,omitempty"` // a failed run is kept, with why
	// Invalid says how the devices differed from the applied state when the sample ended
	// (changed from outside the run): such a sample is kept but left out of the statistics.
	Invalid string `json:"invalid,omitempty"`
	Stderr  string `json:"stderr,omitempty"`
	// Noise is what else the machine did during the sample.
	Noise *Noise `json:"noise,omitempty"`
	// IdleWaitSeconds is how long the round waited for the pinned CPUs to be idle;
	// BusyAtStart says how busy they still were when it began after the gate's limit.
	IdleWaitSeconds float64 `json:"idle_wait_seconds,omitempty"`
	BusyAtStart     string  `json:"busy_at_start,omitempty"`
	Output          string  `json:"output,omitempty"` // the tool's raw output
	Row             string  `json:"row,omitempty"`    // the values as the tool printed them (netperf's last line)
	// Counters are the deltas of the kernel's counters over the sample.
	Counters *Counters `json:"counters,omitempty"`
}

// Noise is what else went on while a sample was measured (/proc/stat, the client's rusage
// and nsperf's own): time stolen by the hypervisor and spent in softirq, as percent of all
// CPU time; CPU time on the pinned CPUs that the tools did not use, as percent of those CPUs'
// time; the client's context switches; nsperf's own CPU time and major page faults.
type Noise struct {
	StealPct        float64 `json:"steal_pct"`
	SoftirqPct      float64 `json:"softirq_pct"`
	OtherPinnedPct  float64 `json:"other_pinned_pct"`
	ContextSwitches int64   `json:"context_switches"`
	// SelfMajorFaults are the pages nsperf itself read from storage during the sample (its
	// major page faults): in a guest, reads from the host over 9p inside the measured window,
	// which the guest locks its pages in memory to avoid (vm.LockOwnPages).
	SelfMajorFaults int64 `json:"self_major_faults,omitempty"`
	// SelfCPUSeconds is nsperf's own CPU time during the sample (reading counters, looking at
	// the connection, its runtime), which in a guest shares the measured CPUs.
	SelfCPUSeconds float64 `json:"self_cpu_seconds,omitempty"`
	// SelfGCCycles are nsperf's garbage collections inside the sample: none, unless it
	// allocated more than its headroom (runner's collectBeforeSample).
	SelfGCCycles int64 `json:"self_gc_cycles,omitempty"`
}

// Value returns a metric of the sample.
func (s Sample) Value(metric string) (float64, bool) {
	for _, m := range s.Metrics {
		if m.Name == metric {
			return m.Value, true
		}
	}
	return 0, false
}

// Summary is the statistics of one metric of one workload in one state.
type Summary struct {
	Workload string `json:"workload"`
	Metric   string `json:"metric"`
	Unit     string `json:"unit"`
	State    string `json:"state"`
	SideOf
	Stats  Stats  `json:"stats"`
	Centre Centre `json:"centre"`
	// Comparison is against the state it is compared with; nil for the baseline.
	Comparison *Comparison `json:"comparison,omitempty"`
}

// Adaptive is the design of an adaptive run.
type Adaptive struct {
	MaxRuns     int     `json:"max_runs"`
	FamilyAlpha float64 `json:"family_alpha"` // what the looks' alphas sum to
	Design      string  `json:"design"`
}

// Policy is how comparisons decide.
type Policy struct {
	Alpha   float64 `json:"alpha"`    // significance level; default 0.05
	CVLimit float64 `json:"cv_limit"` // above it, "no significant change" becomes "too noisy"; default 5%
	// MinChange is the smallest change that matters (default 2%): a significant change below
	// it is negligible, a CI within it equivalence. 0 (results written before it existed):
	// none.
	MinChange float64 `json:"min_change"`
	// MinChangeFrom says where MinChange comes from when it is not the host's default: "the
	// scenario", "--min-change", or in virtual time the A/A it was derived from (Repeatability.Why)
	// or that there was none (VirtualDefaultWhy).
	MinChangeFrom string `json:"min_change_from,omitempty"`
	// AA is the A/A in virtual time MinChange was derived from.
	AA *Repeatability `json:"aa,omitempty"`
	// Floors are minimum changes of single series (an A/A's shift of each), which their
	// comparisons decide with instead of MinChange (MinChangeOf); MinChange is then the largest.
	Floors []SeriesFloor `json:"floors,omitempty"`
}

// SeriesFloor is the minimum change of one series: a workload's metric in a state (its own
// name, not STATE@SIDE).
type SeriesFloor struct {
	Workload  string  `json:"workload"`
	Metric    string  `json:"metric"`
	State     string  `json:"state"`
	MinChange float64 `json:"min_change"`
}

// MinChangeOf is the minimum change a comparison of a workload's metric in a state (its own
// name) decides with: the series' floor when the policy has one, else MinChange.
func (p Policy) MinChangeOf(workload, metric, state string) float64 {
	for _, f := range p.Floors {
		if f.Workload == workload && f.Metric == metric && f.State == state {
			return f.MinChange
		}
	}
	return p.MinChange
}

// Bounds of a policy, as a scenario may set it (scenarios' validation): what a stored result
// may say of the policy it was decided with. A stored alpha of 1e-300 or a minimum change of
// 1e300 would turn any regression into "no change".
const (
	MinAlpha = 0.0001
	MaxAlpha = 0.5
)

// check refuses a policy no run is decided with; 0 is the default of each.
func (p Policy) check() error {
	switch {
	case p.Alpha != 0 && (p.Alpha < MinAlpha || p.Alpha >= MaxAlpha):
		return fmt.Errorf("alpha %g: not a significance level a run decides with (%g to below %g)", p.Alpha, MinAlpha, MaxAlpha)
	case p.MinChange < 0 || p.MinChange >= 1:
		return fmt.Errorf("min_change %g: not a minimum change a run decides with (0 to below 1)", p.MinChange)
	case slices.ContainsFunc(p.Floors, func(f SeriesFloor) bool { return !(f.MinChange > 0 && f.MinChange < 1) }):
		return errors.New("floors: a minimum change of a series is not one a run decides with (above 0, below 1)")
	case p.CVLimit < 0 || p.CVLimit > 1:
		return fmt.Errorf("cv_limit %g: not a CV limit a run decides with (0 to 1)", p.CVLimit)
	}
	return nil
}

// Effective is the policy with its defaults in place of unset (0) alpha and CV limit: what the
// comparisons decided with, and what a report says they did.
func (p Policy) Effective() Policy {
	if p.Alpha <= 0 {
		p.Alpha = DefaultAlpha
	}
	if p.CVLimit <= 0 {
		p.CVLimit = DefaultCVLimit
	}
	return p
}

// Capability is a state that some sides of a comparison cannot apply and the others can. The
// sides that apply it have that state compared with the base's baseline state instead, as
// well as the baseline with the baseline: what the change makes possible, and that it changes
// nothing by default.
type Capability struct {
	State       string            `json:"state"`
	Unavailable map[string]string `json:"unavailable"` // side -> why it cannot apply the state
	Applies     []string          `json:"applies"`     // the sides that apply it
	// ComparedWith is the base's state the appliers' STATE is compared with ("off@A"), when
	// the base cannot apply it.
	ComparedWith string `json:"compared_with,omitempty"`
}

// Line says it in one line: "on: unavailable on A (gso_max_size 524280 > tso_max_size 65536 of
// ovs/int0), applies on B; on@B compared with off@A".
func (c Capability) Line() string {
	var parts []string
	for _, side := range sortedKeys(c.Unavailable) {
		parts = append(parts, fmt.Sprintf("unavailable on %s (%s)", side, c.Unavailable[side]))
	}
	line := c.State + ": " + strings.Join(parts, ", ")
	if len(c.Applies) > 0 {
		line += ", applies on " + strings.Join(c.Applies, ", ")
	}
	if c.ComparedWith != "" {
		for _, side := range c.Applies {
			line += fmt.Sprintf("; %s@%s compared with %s", c.State, side, c.ComparedWith)
		}
	}
	return line
}
