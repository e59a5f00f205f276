package claims

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/results"
)

// Scenario drafting: `nsperf reproduce --write-scenario` writes a scenario made from the
// claims for the user to edit: the claims' tool with its options, a duration short enough for
// virtual time, a workload per address family the claims name, their MTUs as a matrix, and the
// toggles as two states (the knobs at their 64 KiB defaults, then as the toggle sets them).

// defaultKnobs are the values a device limit has before a toggle raises it: 64 KiB.
var defaultKnobs = map[string]string{"gso_max_size": "65536", "gro_max_size": "65536", "gso_ipv4_max_size": "65536", "gro_ipv4_max_size": "65536"}

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
		if r.togglesOnlyIPv6Limits() {
			out = []string{"IPv6"}
		}
	}
	return out
}

// togglesOnlyIPv6Limits: the toggles raise gso_max_size or gro_max_size without their IPv4
// twins, and since Linux 6.3 those two govern IPv6 alone (IPv4 has gso_ipv4_max_size and
// gro_ipv4_max_size): the claim is an IPv6 one.
func (r *Report) togglesOnlyIPv6Limits() bool {
	six, four := false, false
	for _, t := range r.Toggles {
		for k := range t.Knobs {
			six = six || k == "gso_max_size" || k == "gro_max_size"
			four = four || strings.Contains(k, "ipv4")
		}
	}
	return six && !four
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

// writeStates writes the states: before and after of the toggles' knobs on both ends (the
// message's device is the client's and the server's eth0 here), or one default state.
func (r *Report) writeStates(b *strings.Builder) {
	b.WriteString("states:\n")
	if len(r.Toggles) == 0 {
		b.WriteString("  - name: default\n")
		return
	}
	devices, features := map[string]string{}, map[string]string{}
	for _, t := range r.Toggles {
		for k, v := range t.Knobs {
			switch {
			case strings.HasPrefix(t.Command, "ethtool"):
				features[k] = v
			case isKnob(k, v):
				devices[k] = v
			} // other words of `ip link set` (xdp obj FILE, up) are no knob nsperf sets
		}
	}
	before, after := map[string]string{}, map[string]string{}
	for k, v := range devices {
		if d, ok := defaultKnobs[k]; ok {
			before[k] = d
		}
		after[k] = v
	}
	sysctlsBefore, sysctlsAfter, skipped := r.draftSysctls()
	qdiscBefore, qdiscAfter := r.draftQdiscs()
	writeState := func(name string, devices, offloads map[string]string, lines string) {
		fmt.Fprintf(b, "  - name: %q%s\n", name, lines)
		if name == "after" {
			b.WriteString("    compare_to: \"before\"\n")
		}
		if len(devices) > 0 {
			b.WriteString("    devices:\n")
			for _, side := range []string{"client/eth0", "server/eth0"} {
				fmt.Fprintf(b, "      %s: {%s}\n", side, flowMap(devices))
			}
		}
		if len(offloads) > 0 {
			b.WriteString("    offloads:\n")
			for _, side := range []string{"client/eth0", "server/eth0"} {
				fmt.Fprintf(b, "      %s: {%s}\n", side, flowMap(offloads))
			}
		}
		if q := map[string]string{"before": qdiscBefore, "after": qdiscAfter}[name]; q != "" && q != "none" {
			fmt.Fprintf(b, "    qdiscs: {client/eth0: %s}  # the sender's egress\n", q)
		}
		sysctls := map[string]map[string]string{"before": sysctlsBefore, "after": sysctlsAfter}[name]
		if len(sysctls) > 0 {
			b.WriteString("    sysctls:\n")
			for _, ns := range []string{"client", "server"} {
				fmt.Fprintf(b, "      %s: {%s}\n", ns, flowMap(sysctls))
			}
		}
	}
	for _, name := range skipped {
		fmt.Fprintf(b, "  # not drafted: sysctl %s (nsperf sets only a namespace's own network sysctls)\n", name)
	}
	var lines []int
	for _, t := range r.Toggles {
		lines = append(lines, t.Line)
	}
	beforeFeatures := map[string]string{}
	for k, v := range features {
		beforeFeatures[k] = map[string]string{"on": "off", "off": "on"}[v]
	}
	writeState("before", before, beforeFeatures, "")
	writeState("after", after, features, "  # line "+results.LineRanges(lines))
}

// draftSysctls are the sysctls of the message's toggles as states: a sysctl set twice or more
// to different values (`echo 0 > /proc/sys/...`, measured, `echo 9 > ...`, measured) is the
// first value before and the last after; one set once is as built before and set after.
// Names nsperf does not set are returned apart.
func (r *Report) draftSysctls() (before, after map[string]string, skipped []string) {
	before, after = map[string]string{}, map[string]string{}
	first := map[string]string{}
	for _, t := range r.Toggles {
		for name, v := range t.Sysctls {
			if knobs.CheckSysctl(name, v) != "" {
				if !slices.Contains(skipped, name) {
					skipped = append(skipped, name)
				}
				continue
			}
			if _, seen := first[name]; !seen {
				first[name] = v
			}
			after[name] = v
		}
	}
	for name, v := range first {
		if after[name] != v {
			before[name] = v
		}
	}
	slices.Sort(skipped)
	return before, after, skipped
}

// isKnob: a device knob a state may set, to a number.
func isKnob(name, value string) bool {
	k, ok := knobs.Lookup(name)
	_, err := strconv.ParseUint(value, 10, 32)
	return ok && k.Settable() && err == nil
}

// draftQdiscs are the root qdiscs of the message's tc toggles as states, as draftSysctls
// does sysctls: the first before and the last after when it changes them twice or more, else
// the device's default before.
func (r *Report) draftQdiscs() (before, after string) {
	var seen []string
	for _, t := range r.Toggles {
		if t.Qdisc != "" {
			seen = append(seen, t.Qdisc)
		}
	}
	switch len(seen) {
	case 0:
		return "", ""
	case 1:
		return "", seen[0]
	}
	return seen[0], seen[len(seen)-1]
}

// flowMap writes a YAML flow mapping of m, its keys in order, strings quoted ("off" is a
// boolean to YAML 1.1 readers).
var plainKeyRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

func flowMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		v := m[k]
		if _, err := strconv.Atoi(v); err != nil {
			v = strconv.Quote(v)
		}
		if !plainKeyRe.MatchString(k) {
			k = strconv.Quote(k)
		}
		parts = append(parts, k+": "+v)
	}
	return strings.Join(parts, ", ")
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

// yamlScalar is s as it is where it is a plain word (TCP_RR, MIN_LATENCY), else quoted: a
// message's option may hold anything, invalid UTF-8 included.
func yamlScalar(s string) string {
	if plainKeyRe.MatchString(s) {
		return s
	}
	return yamlString(s)
}
