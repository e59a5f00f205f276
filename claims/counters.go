package claims

import (
	"fmt"
	"regexp"
	"sort"

	"github.com/nsperf/nsperf/results"
)

// counterRef is the counter nsperf records for a claim about a count, and the end of the
// workload whose namespace counts it.
type counterRef struct {
	name string // nstat's name, or a field of results.Counters.TCP
	end  string // "server", "client", or "" for either
	// tcp: the name is of the run's connection's state (results.TCPInfoNames), a level
	// compared as it is, not a count per second.
	tcp bool
}

// countWords map what a message says it counted to the counter a namespace keeps: ACKs are
// the segments the receiver sends (a bulk flow's receiver sends almost only ACKs), backlog
// drops the receiver's TcpExtTCPBacklogDrop, retransmits the sender's TcpRetransSegs.
var countWords = []struct {
	re  *regexp.Regexp
	ref counterRef
}{
	{regexp.MustCompile(`(?i)backlog.?drop`), counterRef{name: "TcpExtTCPBacklogDrop", end: "server"}},
	{regexp.MustCompile(`(?i)(^|[^a-z])acks?([^a-z]|$)|acknowledg`), counterRef{name: "TcpOutSegs", end: "server"}},
	{regexp.MustCompile(`(?i)retransmi`), counterRef{name: "TcpRetransSegs", end: "client"}},
	{regexp.MustCompile(`(?i)(^|[^a-z])segments?_?(in|received)`), counterRef{name: "TcpInSegs", end: "server"}},
}

// nstatNameRe is a counter named as nstat names it: TcpInSegs, TcpExtTCPBacklogDrop.
var nstatNameRe = regexp.MustCompile(`^(Ip|Ip6|Icmp|Icmp6|Tcp|TcpExt|IpExt|Udp|Udp6|UdpLite|MPTcpExt)[A-Z][A-Za-z0-9]*$`)

// counterOf is the counter a claim about a count meets, if nsperf records one.
func counterOf(c Claim) (counterRef, bool) {
	if c.Metric != "" || c.Quantity == "" {
		return counterRef{}, false
	}
	if c.Quantity == results.HandshakeWindow || c.Quantity == results.RetransmitWait {
		return counterRef{name: c.Quantity, end: "client", tcp: true}, true
	}
	if nstatNameRe.MatchString(c.Quantity) {
		return counterRef{name: c.Quantity}, true
	}
	for _, w := range countWords {
		if w.re.MatchString(c.Quantity) {
			return w.ref, true
		}
	}
	return counterRef{}, false
}

// pickCounter compares the counter per second of measuring, in the namespace of the
// workload's end, between the states of the comparison that stands for the run's throughput
// (the same choice as a throughput claim's): the side metric that stands for a claim about a
// count.
func pickCounter(c Claim, ref counterRef, r *results.Result, facts Facts, toggled bool) (results.Case, *results.Summary, results.Comparison, string, string) {
	cs, s, why := pick(Claim{Metric: results.Throughput, Conditions: c.Conditions}, r, facts, toggled)
	if s == nil {
		return results.Case{}, nil, results.Comparison{}, "", why
	}
	ns := facts.Ends[s.Workload][ref.end]
	read := perSecond
	if ref.tcp {
		read = connectionLevel
	}
	base, key := read(cs.Samples, s.Workload, s.Comparison.Baseline, ns, ref.name)
	state, _ := read(cs.Samples, s.Workload, s.State, ns, ref.name)
	if len(base) == 0 || len(state) == 0 {
		return results.Case{}, nil, results.Comparison{}, "", fmt.Sprintf("the run recorded no %s to compare", ref.name)
	}
	return cs, s, results.Compare(base, state, results.NoDirection, 0, 0, 0), key, ""
}

// perSecond is a counter's delta per second of each sample of a workload in a state, from
// the namespace ns (any namespace when ns is ""), and the counter's name as recorded.
func perSecond(samples []results.Sample, workload, state, ns, name string) ([]float64, string) {
	var out []float64
	key := ""
	for _, sm := range samples {
		if sm.Workload != workload || sm.State != state || sm.Error != "" || sm.Counters == nil || sm.Seconds <= 0 {
			continue
		}
		flat := sm.Counters.Flat()
		var keys []string
		for k := range flat {
			if k == "ns "+ns+" "+name || ns == "" && len(k) > len(name) && k[len(k)-len(name)-1:] == " "+name && k[:3] == "ns " {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		v := 0.0
		if len(keys) > 0 {
			key, v = keys[0], flat[keys[0]]
		} else if ns != "" {
			key = "ns " + ns + " " + name // a delta that did not move is not recorded: 0
		}
		out = append(out, v/sm.Seconds)
	}
	return out, key
}

// connectionLevel is a field of the run's TCP connection's state (results.Counters.TCP) in
// each sample of a workload in a state that recorded it, and its name as recorded; ns is not
// needed: the connection is the client's.
func connectionLevel(samples []results.Sample, workload, state, _, name string) ([]float64, string) {
	var out []float64
	for _, sm := range samples {
		if sm.Workload != workload || sm.State != state || sm.Error != "" || sm.Counters == nil {
			continue
		}
		if v, ok := sm.Counters.TCP[name]; ok {
			out = append(out, v)
		}
	}
	return out, "tcp " + name
}

// Measurable says whether nsperf can set a claim beside a measurement: a metric a tool
// declares, or a count it records.
func Measurable(c Claim) bool {
	if c.Metric != "" {
		return true
	}
	_, ok := counterOf(c)
	return ok
}
