package scenarios

import (
	"fmt"
	"reflect"
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
		check: func(q Qdisc) map[string]string {
			switch {
			case q.TBF.Rate == 0:
				return map[string]string{"rate": "missing: the rate, e.g. 5gbit"}
			case q.TBF.Burst < 64<<10:
				return map[string]string{"burst": fmt.Sprintf("%s: at least 64kb, so that a 64K GSO packet fits", q.TBF.Burst)}
			}
			return nil
		}},
	{Name: "netem", Module: "sch_netem", Kconfig: "NET_SCH_NETEM", set: func(q Qdisc) bool { return q.Netem != nil },
		shell: func(q Qdisc) string { return q.Netem.shell() },
		check: func(q Qdisc) map[string]string {
			n, out := q.Netem, map[string]string{}
			if n.Delay <= 0 && n.Loss == 0 {
				out["delay"] = "missing: a delay (e.g. 100us) or a loss (e.g. 1%)"
			}
			if n.Jitter > 0 && n.Jitter > n.Delay {
				out["jitter"] = fmt.Sprintf("%s exceeds the delay %s", n.Jitter, n.Delay)
			}
			if n.Reorder > 0 && n.Delay <= 0 {
				out["reorder"] = "netem reorders by sending some packets at once and delaying the rest: give a delay"
			}
			if n.Limit < 0 {
				out["limit"] = fmt.Sprintf("%d: a number of packets, at least 1", n.Limit)
			}
			for key, p := range map[string]Percent{"loss": n.Loss, "reorder": n.Reorder} {
				if p < 0 || p > 1 {
					out[key] = fmt.Sprintf("%g%%: want 0%% to 100%%", float64(p)*100)
				}
			}
			return out
		}},
	{Name: "fq", Module: "sch_fq", Kconfig: "NET_SCH_FQ", set: func(q Qdisc) bool { return q.FQ != nil },
		shell: func(q Qdisc) string { return q.FQ.shell() },
		check: func(q Qdisc) map[string]string {
			out := map[string]string{}
			if q.FQ.MaxRate > 0 && q.FQ.MaxRate/8 > 1<<32-1 {
				out["maxrate"] = fmt.Sprintf("%s: fq takes at most 34gbit per flow", q.FQ.MaxRate)
			}
			if q.FQ.Quantum > 1<<20 {
				out["quantum"] = fmt.Sprintf("%s: fq takes at most 1mb", q.FQ.Quantum)
			}
			for key, n := range map[string]int{"flow_limit": q.FQ.FlowLimit, "limit": q.FQ.Limit} {
				if n < 0 {
					out[key] = fmt.Sprintf("%d: a number of packets, at least 1", n)
				}
			}
			return out
		}},
	{Name: "fq_codel", Module: "sch_fq_codel", Kconfig: "NET_SCH_FQ_CODEL", set: func(q Qdisc) bool { return q.FQCodel != nil },
		shell: func(q Qdisc) string { return q.FQCodel.shell() },
		check: func(q Qdisc) map[string]string {
			c, out := q.FQCodel, map[string]string{}
			if c.Target > 0 && c.Interval > 0 && c.Target >= c.Interval {
				out["target"] = fmt.Sprintf("%s: below the interval %s (CoDel's target is a few percent of it)", c.Target, c.Interval)
			}
			if c.Limit < 0 {
				out["limit"] = fmt.Sprintf("%d: a number of packets, at least 1", c.Limit)
			}
			return out
		}},
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
		for key, p := range kinds[0].check(q) {
			return q, fmt.Errorf("%s %s: %s", kinds[0].Name, key, p)
		}
	}
	return q, nil
}
