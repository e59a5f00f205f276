package scenarios

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Qdisc is one root qdisc, exactly one of its fields set. Each kind declares itself in
// QdiscKinds: its YAML key, the module a kernel needs for it, what tc prints for it and what
// its parameters must be.
type Qdisc struct {
	TBF       *TBF      `yaml:"tbf"`
	Netem     *Netem    `yaml:"netem"`
	FQ        *FQ       `yaml:"fq"`
	FQCodel   *FQCodel  `yaml:"fq_codel"`
	PfifoFast *struct{} `yaml:"pfifo_fast"` // the classic default: three bands, no parameters
	Noqueue   *struct{} `yaml:"noqueue"`    // no queue at all: veth's and a tunnel's default
}

// QdiscKind is what nsperf knows of one kind of root qdisc.
type QdiscKind struct {
	Name    string // tc's name and the YAML key
	Module  string // the kernel module of a modular kernel; "" when it is always built in
	Kconfig string // the option that builds it
	// set reports whether q is of this kind.
	set func(q Qdisc) bool
	// shell is what follows `tc qdisc replace dev DEV root`.
	shell func(q Qdisc) string
	// check returns problems of the parameters, by key under the kind's path.
	check func(q Qdisc) map[string]string
}

// QdiscKinds are the root qdiscs a state may attach.
var QdiscKinds = []QdiscKind{
	{Name: "tbf", Module: "sch_tbf", Kconfig: "NET_SCH_TBF", set: func(q Qdisc) bool { return q.TBF != nil },
		shell: func(q Qdisc) string {
			lat := q.TBF.Latency
			if lat == 0 {
				lat = Duration(DefaultTBFLatency)
			}
			return fmt.Sprintf("tbf rate %s burst %s latency %s", q.TBF.Rate, q.TBF.Burst, lat)
		},
		check: func(q Qdisc) map[string]string { return q.TBF.check() }},
	{Name: "netem", Module: "sch_netem", Kconfig: "NET_SCH_NETEM", set: func(q Qdisc) bool { return q.Netem != nil },
		shell: func(q Qdisc) string { return q.Netem.shell() },
		check: func(q Qdisc) map[string]string { return q.Netem.check() }},
	{Name: "fq", Module: "sch_fq", Kconfig: "NET_SCH_FQ", set: func(q Qdisc) bool { return q.FQ != nil },
		shell: func(q Qdisc) string { return q.FQ.shell() },
		check: func(q Qdisc) map[string]string { return q.FQ.check() }},
	{Name: "fq_codel", Module: "sch_fq_codel", Kconfig: "NET_SCH_FQ_CODEL", set: func(q Qdisc) bool { return q.FQCodel != nil },
		shell: func(q Qdisc) string { return q.FQCodel.shell() },
		check: func(q Qdisc) map[string]string { return q.FQCodel.check() }},
	{Name: "pfifo_fast", set: func(q Qdisc) bool { return q.PfifoFast != nil },
		shell: func(Qdisc) string { return "pfifo_fast" }},
	{Name: "noqueue", set: func(q Qdisc) bool { return q.Noqueue != nil },
		shell: func(Qdisc) string { return "noqueue" }},
}

// Kinds are the kinds q sets: one for a valid qdisc.
func (q Qdisc) Kinds() []QdiscKind {
	var out []QdiscKind
	for _, k := range QdiscKinds {
		if k.set(q) {
			out = append(out, k)
		}
	}
	return out
}

// Kind is the qdisc's kind; the zero QdiscKind when it sets none or several.
func (q Qdisc) Kind() QdiscKind {
	if ks := q.Kinds(); len(ks) == 1 {
		return ks[0]
	}
	return QdiscKind{}
}

// String is the tc equivalent after `root`.
func (q Qdisc) String() string {
	if k := q.Kind(); k.shell != nil {
		return k.shell(q)
	}
	return ""
}

// qdiscNames lists the kinds for messages: "tbf, netem, fq, ...".
func qdiscNames() string {
	names := make([]string, len(QdiscKinds))
	for i, k := range QdiscKinds {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// TBF is a token bucket filter: `tbf rate RATE burst BURST latency LATENCY`.
type TBF struct {
	Rate    Rate     `yaml:"rate"`    // e.g. 5gbit
	Burst   Size     `yaml:"burst"`   // e.g. 1mb; at least 64kb so that GSO packets pass
	Latency Duration `yaml:"latency"` // the longest a packet waits; default DefaultTBFLatency
}

// DefaultTBFLatency is tc's usual latency for a token bucket.
const DefaultTBFLatency = 50 * time.Millisecond

// Netem emulates a path: `netem delay DELAY [JITTER] loss P% reorder P%`, the way TCP
// patches are measured against a long or lossy path.
type Netem struct {
	Delay   Duration `yaml:"delay"`
	Jitter  Duration `yaml:"jitter"`
	Loss    Percent  `yaml:"loss"`    // packets dropped at random
	Reorder Percent  `yaml:"reorder"` // packets sent at once while the others wait the delay
	Limit   int      `yaml:"limit"`   // packets the queue holds (netem's default 1000)
}

func (n *Netem) shell() string {
	s := "netem"
	if n.Delay > 0 {
		s += " delay " + n.Delay.String()
		if n.Jitter != 0 {
			s += " " + n.Jitter.String()
		}
	}
	if n.Loss > 0 {
		s += fmt.Sprintf(" loss %g%%", float64(n.Loss)*100)
	}
	if n.Reorder > 0 {
		s += fmt.Sprintf(" reorder %g%%", float64(n.Reorder)*100)
	}
	if n.Limit > 0 {
		s += fmt.Sprintf(" limit %d", n.Limit)
	}
	return s
}

// FQ is the fair queue packet scheduler with pacing (sch_fq): `fq [maxrate R] [quantum Q]
// [flow_limit N] [limit N]`.
type FQ struct {
	MaxRate   Rate `yaml:"maxrate"`    // per flow
	Quantum   Size `yaml:"quantum"`    // bytes a flow may send per round
	FlowLimit int  `yaml:"flow_limit"` // packets queued per flow
	Limit     int  `yaml:"limit"`      // packets queued in all
}

func (f *FQ) shell() string {
	s := "fq"
	if f.MaxRate > 0 {
		s += " maxrate " + f.MaxRate.String()
	}
	if f.Quantum > 0 {
		s += fmt.Sprintf(" quantum %d", f.Quantum)
	}
	if f.FlowLimit > 0 {
		s += fmt.Sprintf(" flow_limit %d", f.FlowLimit)
	}
	if f.Limit > 0 {
		s += fmt.Sprintf(" limit %d", f.Limit)
	}
	return s
}

// FQCodel is fair queueing with CoDel per flow (sch_fq_codel): `fq_codel [target T] [interval
// I] [limit N] [noecn]`.
type FQCodel struct {
	Target   Duration `yaml:"target"`
	Interval Duration `yaml:"interval"`
	Limit    int      `yaml:"limit"`
	NoECN    bool     `yaml:"noecn"` // ECN marking is fq_codel's default
}

func (c *FQCodel) shell() string {
	s := "fq_codel"
	if c.Target > 0 {
		s += " target " + c.Target.String()
	}
	if c.Interval > 0 {
		s += " interval " + c.Interval.String()
	}
	if c.Limit > 0 {
		s += fmt.Sprintf(" limit %d", c.Limit)
	}
	if c.NoECN {
		s += " noecn"
	}
	return s
}

// ParseQdisc reads one root qdisc as a scenario writes it (`{fq: {maxrate: 1gbit}}`) and
// checks it as validation would: what a scenario drafted from a message may attach.
func ParseQdisc(text string) (Qdisc, error) {
	var q Qdisc
	doc, problem := parseDocument("qdisc", []byte(text))
	if problem != nil {
		return q, Problems{*problem}
	}
	d := &decoder{file: "qdisc", positions: map[string]Pos{}}
	d.decode(doc, reflect.ValueOf(&q).Elem(), "qdisc")
	if len(d.problems) > 0 {
		return q, d.problems
	}
	kinds := q.Kinds()
	if len(kinds) != 1 {
		return q, fmt.Errorf("a root qdisc is one of %s", qdiscNames())
	}
	if kinds[0].check != nil {
		problems := kinds[0].check(q)
		for _, key := range slices.Sorted(maps.Keys(problems)) {
			return q, fmt.Errorf("%s %s: %s", kinds[0].Name, key, problems[key])
		}
	}
	return q, nil
}

// What the kernel's fields for these parameters hold (include/uapi/linux/pkt_sched.h) as
// vishvananda/netlink fills them: a value beyond them would be cut to 32 bits on its way and
// applied as another, so validation refuses it and names the range.
const (
	// PschedTick is the packet scheduler's unit of time (PSCHED_SHIFT 6; /proc/net/psched's
	// second field, 0x40): tc_netem_qopt's latency and jitter and tc_tbf_qopt's buffer are
	// 32-bit counts of it.
	PschedTick = 64 * time.Nanosecond
	// MaxTicked is the longest time such a count holds, 2^32-1 ticks (274.87790688s), in the
	// whole microseconds vishvananda/netlink takes and turns into ticks (NewNetem, Xmittime).
	MaxTicked = (1<<32 - 1) * PschedTick / time.Microsecond * time.Microsecond
	// MaxNetemJitter: netem keeps at most INT_MAX ns of jitter, the range of its
	// distribution tables (netem_change caps it; older kernels kept MaxTicked).
	MaxNetemJitter = (1<<31 - 1) * time.Nanosecond / time.Microsecond * time.Microsecond
	// MaxCodelTime: fq_codel's target and interval are 32-bit counts of microseconds
	// (TCA_FQ_CODEL_TARGET, TCA_FQ_CODEL_INTERVAL).
	MaxCodelTime = (1<<32 - 1) * time.Microsecond
	// MaxFQFlowRate: fq's rate per flow is a 32-bit count of bytes a second in which 2^32-1
	// means unlimited (TCA_FQ_FLOW_MAX_RATE); nsperf sends the rate's whole bytes.
	MaxFQFlowRate Rate = (1<<32-1)*8 - 1
	// MaxPackets: every limit in packets is a 32-bit count (netem's limit, fq's plimit and
	// flow_plimit, fq_codel's limit).
	MaxPackets = 1<<32 - 1
	// MaxTBFBytes: tbf's burst and its limit (rate × latency + burst) are 32-bit counts of
	// bytes (tc_tbf_qopt.limit; Xmittime takes the burst as a uint32).
	MaxTBFBytes = 1<<32 - 1
)

// NetemProbabilityUnit is the step of netem's loss and reorder probabilities, 32-bit
// fractions of 2^32-1 (tc_netem_qopt.loss, tc_netem_reorder.probability).
const NetemProbabilityUnit = 1.0 / (1<<32 - 1)

// checkTime is the problem of a time nsperf sends in whole microseconds into a field that
// holds at most max, "" when it fits; 0 asks for the kernel's default (or none).
func checkTime(d Duration, max time.Duration, field string) string {
	switch whole := d.Std() / time.Microsecond * time.Microsecond; {
	case d < 0:
		return fmt.Sprintf("%s: want 0 to %s", d, max)
	case d > 0 && whole == 0:
		return fmt.Sprintf("%s is below 1us, the unit it is sent in: want 0 or 1us to %s", d, max)
	case whole > max:
		return fmt.Sprintf("%s exceeds %s, the most %s holds", d, max, field)
	}
	return ""
}

// checkPackets is the problem of a limit in packets; 0 leaves the kernel's default.
func checkPackets(n int) string {
	if n < 0 || n > MaxPackets {
		return fmt.Sprintf("%d: a number of packets, 1 to %d (a 32-bit count; none: the default)", n, MaxPackets)
	}
	return ""
}

// checkProbability is the problem of one of netem's probabilities. NaN fails every
// comparison, so the range is tested the way NaN falls outside it.
func checkProbability(p Percent) string {
	switch {
	case !(p >= 0 && p <= 1):
		return fmt.Sprintf("%.12g%%: want 0%% to 100%%", float64(p)*100)
	case p > 0 && float64(p) < NetemProbabilityUnit:
		return fmt.Sprintf("%.12g%% is below %.3g%%, the smallest netem holds (1/(2^32-1)): want 0%% or at least that", float64(p)*100, NetemProbabilityUnit*100)
	}
	return ""
}

// check returns the token bucket's problems by key: a rate of whole bytes, a burst a GSO
// packet fits in and whose time at the rate tbf's buffer holds, and a latency whose queue
// (rate × latency + burst bytes) tbf's 32-bit limit holds.
func (t *TBF) check() map[string]string {
	out := map[string]string{}
	bytesPerSecond := uint64(t.Rate) / 8 // what nsperf sends
	switch {
	case t.Rate == 0:
		out["rate"] = "missing: the rate, e.g. 5gbit"
	case bytesPerSecond == 0:
		out["rate"] = fmt.Sprintf("%s: at least 8bit, one byte a second (tbf counts bytes)", t.Rate)
	}
	burstTime := func() time.Duration { // the burst sent at the rate, as Xmittime truncates it
		return time.Duration(float64(t.Burst)/float64(bytesPerSecond)*1e6) * time.Microsecond
	}
	switch {
	case t.Burst < 64<<10:
		out["burst"] = fmt.Sprintf("%s: at least 64kb, so that a 64K GSO packet fits", t.Burst)
	case t.Burst > MaxTBFBytes:
		out["burst"] = fmt.Sprintf("%s exceeds %db, the most tbf's 32-bit burst holds", t.Burst, MaxTBFBytes)
	case bytesPerSecond == 0:
	case burstTime() > MaxTicked:
		out["burst"] = fmt.Sprintf("%s lasts %s at %s; tbf's buffer (32 bits of 64ns ticks) holds at most %s: a smaller burst or a higher rate", t.Burst, burstTime(), t.Rate, MaxTicked)
	case burstTime() == 0:
		out["burst"] = fmt.Sprintf("%s lasts less than 1us at %s, the unit tbf's buffer is sent in: a larger burst", t.Burst, t.Rate)
	}
	latency, shown := t.Latency.Std(), t.Latency.String()
	if latency == 0 {
		latency, shown = DefaultTBFLatency, fmt.Sprintf("the default %s", DefaultTBFLatency)
	}
	switch {
	case latency < 0:
		out["latency"] = fmt.Sprintf("%s: at least 0 (none: the default %s)", shown, DefaultTBFLatency)
	case out["rate"] != "" || out["burst"] != "":
	case float64(bytesPerSecond)*latency.Seconds()+float64(t.Burst) > MaxTBFBytes:
		most := time.Duration(float64(MaxTBFBytes-uint64(t.Burst)) / float64(bytesPerSecond) * 1e9).Truncate(time.Microsecond)
		out["latency"] = fmt.Sprintf("%s: at most %s at %s with a burst of %s; tbf's limit, rate × latency + burst, is a 32-bit count of bytes", shown, most, t.Rate, t.Burst)
	}
	return out
}

// check returns netem's problems by key.
func (n *Netem) check() map[string]string {
	out := map[string]string{}
	if p := checkTime(n.Delay, MaxTicked, "netem's latency (32 bits of 64ns ticks)"); p != "" {
		out["delay"] = p
	} else if n.Delay == 0 && n.Loss == 0 {
		out["delay"] = "missing: a delay (e.g. 100us) or a loss (e.g. 1%)"
	}
	if p := checkTime(n.Jitter, MaxNetemJitter, "netem's jitter (INT_MAX ns)"); p != "" {
		out["jitter"] = p
	} else if n.Jitter > n.Delay && out["delay"] == "" {
		out["jitter"] = fmt.Sprintf("%s exceeds the delay %s", n.Jitter, n.Delay)
	}
	if n.Reorder > 0 && n.Delay <= 0 {
		out["reorder"] = "netem reorders by sending some packets at once and delaying the rest: give a delay"
	}
	if p := checkPackets(n.Limit); p != "" {
		out["limit"] = p
	}
	for key, p := range map[string]Percent{"loss": n.Loss, "reorder": n.Reorder} {
		if problem := checkProbability(p); problem != "" {
			out[key] = problem
		}
	}
	return out
}

// check returns fq's problems by key.
func (f *FQ) check() map[string]string {
	out := map[string]string{}
	switch {
	case f.MaxRate > 0 && f.MaxRate < 8:
		out["maxrate"] = fmt.Sprintf("%s: at least 8bit, one byte a second (fq counts bytes)", f.MaxRate)
	case f.MaxRate > MaxFQFlowRate:
		out["maxrate"] = fmt.Sprintf("%s: fq takes at most %s (34.36gbit) per flow, a 32-bit count of bytes a second", f.MaxRate, MaxFQFlowRate)
	}
	if f.Quantum > 1<<20 {
		out["quantum"] = fmt.Sprintf("%s: fq takes 1b to 1mb", f.Quantum)
	}
	for key, n := range map[string]int{"flow_limit": f.FlowLimit, "limit": f.Limit} {
		if p := checkPackets(n); p != "" {
			out[key] = p
		}
	}
	return out
}

// check returns fq_codel's problems by key.
func (c *FQCodel) check() map[string]string {
	out := map[string]string{}
	for key, d := range map[string]Duration{"target": c.Target, "interval": c.Interval} {
		if p := checkTime(d, MaxCodelTime, "fq_codel's 32-bit count of microseconds"); p != "" {
			out[key] = p
		}
	}
	if c.Target > 0 && c.Interval > 0 && c.Target >= c.Interval && out["target"] == "" && out["interval"] == "" {
		out["target"] = fmt.Sprintf("%s: below the interval %s (CoDel's target is a few percent of it)", c.Target, c.Interval)
	}
	if p := checkPackets(c.Limit); p != "" {
		out["limit"] = p
	}
	return out
}
