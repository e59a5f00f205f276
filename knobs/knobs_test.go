package knobs

import (
	"slices"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		knob string
		v    uint32
		ipv6 bool
		want string
	}{
		{"gso_max_size", 185000, false, ""},
		{"gso_max_size", 600000, false, "600000 is outside 193..524280 (below 193 the kernel answers ERANGE; above 524280 no kernel accepts)"},
		{"gso_max_size", 100, false, "100 is outside 193..524280 (below 193 the kernel answers ERANGE; above 524280 no kernel accepts)"},
		{"gro_max_size", 0, false, ""},
		{"gro_ipv4_max_size", 524281, false, "524281 exceeds 524280, the largest GRO size any kernel accepts"},
		{"gso_max_segs", 0, false, "0 is outside 1..65535"},
		{"mtu", 1000, false, ""},
		{"mtu", 1000, true, "1000 is below 1280, the IPv6 minimum, and the device has IPv6 addresses"},
		{"mtu", 67, false, "67 is outside 68..65535"},
	} {
		k, ok := Lookup(tc.knob)
		if !ok {
			t.Fatalf("no knob %s", tc.knob)
		}
		if got := k.Check(tc.v, tc.ipv6); got != tc.want {
			t.Errorf("%s %d: %q, want %q", tc.knob, tc.v, got, tc.want)
		}
	}
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range All {
		if seen[k.Name] {
			t.Errorf("%s twice", k.Name)
		}
		seen[k.Name] = true
		if k.Bound != "" {
			if b, ok := Lookup(k.Bound); !ok || b.Settable() {
				t.Errorf("%s: bound %s is not a read-only attribute", k.Name, k.Bound)
			}
		}
		if k.Settable() && k.Max == 0 {
			t.Errorf("%s: settable without a range", k.Name)
		}
	}
	// The IPv4 sizes come after every plain size: setting a plain size <= 64K overwrites them.
	settable := SettableNames()
	if i, j := slices.Index(settable, "gso_max_size"), slices.Index(settable, "gso_ipv4_max_size"); i > j {
		t.Errorf("settable order %v", settable)
	}
	for i, k := range Settable() {
		if !k.IPv4 && i > 0 && Settable()[i-1].IPv4 {
			t.Errorf("plain knob %s after an IPv4 one", k.Name)
		}
	}
	var order []string
	for _, k := range ReportOrder() {
		order = append(order, k.Name)
	}
	want := []string{"tso_max_size", "tso_max_segs", "gso_max_size", "gso_max_segs", "gro_max_size", "gso_ipv4_max_size", "gro_ipv4_max_size", "mtu",
		"threaded", "gro_flush_timeout", "napi_defer_hard_irqs"}
	if !slices.Equal(order, want) {
		t.Errorf("report order %v, want %v", order, want)
	}
}

// TestSizeLimitsAreTheBigTCPKnobs: the size limits come from the registry, the four knobs of
// a GSO or GRO packet's bytes; gso_max_segs bounds segments, not bytes.
func TestSizeLimitsAreTheBigTCPKnobs(t *testing.T) {
	want := []string{"gso_max_size", "gro_max_size", "gso_ipv4_max_size", "gro_ipv4_max_size"}
	if got := SizeLimits(); !slices.Equal(got, want) {
		t.Errorf("SizeLimits() = %v, want %v", got, want)
	}
}

func TestCheckSysctl(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"net.ipv4.tcp_autocorking", "0", ""},
		{"net.ipv4.tcp_rmem", "4096 131072 6291456", ""},
		{"net.ipv6.conf.all.forwarding", "1", ""},
		{"net.core.somaxconn", "1024", ""},
		{"net.core.rmem_max", "8388608", "net.core.rmem_max is host-wide: a network namespace has it read-only or not at all, so nsperf does not change it (set it on the machine before the run if the measurement needs it)"},
		{"net.core.netdev_max_backlog", "5000", "net.core.netdev_max_backlog is host-wide: a network namespace has it read-only or not at all, so nsperf does not change it (set it on the machine before the run if the measurement needs it)"},
		{"net.core.default_qdisc", "fq", "net.core.default_qdisc is host-wide: a network namespace has it read-only or not at all, so nsperf does not change it (set it on the machine before the run if the measurement needs it)"},
		{"net.ipv4.tcp_mem", "1 2 3", "net.ipv4.tcp_mem is host-wide: a network namespace has it read-only or not at all, so nsperf does not change it (set it on the machine before the run if the measurement needs it)"},
		{"net.ipv4.tcp_allowed_congestion_control", "reno cubic", "net.ipv4.tcp_allowed_congestion_control is host-wide: a network namespace has it read-only or not at all, so nsperf does not change it (set it on the machine before the run if the measurement needs it)"},
		{"net.ipv4.route.gc_thresh", "1", "net.ipv4.route.gc_thresh is host-wide: a network namespace has it read-only or not at all, so nsperf does not change it (set it on the machine before the run if the measurement needs it)"},
		{"net.ipv4.route.min_pmtu", "552", ""},
		{"net.ipv4.tcp_congestion_control", "bbr", ""},
		{"net.ipv4.tcp_congestion_control", "../../x", `"../../x" is not a congestion control's name (e.g. cubic, bbr, reno)`},
		{"kernel.pid_max", "4096", "kernel.pid_max: nsperf sets only net.core.*, net.ipv4.*, net.ipv6.* sysctls, which each network namespace has of its own"},
		{"net.netfilter.nf_conntrack_max", "1", "net.netfilter.nf_conntrack_max: nsperf sets only net.core.*, net.ipv4.*, net.ipv6.* sysctls, which each network namespace has of its own"},
		{"net/ipv4/../../../etc", "1", `"net/ipv4/../../../etc" is not a sysctl name: dotted words, e.g. net.ipv4.tcp_autocorking`},
		{"net..ipv4", "1", `"net..ipv4" is not a sysctl name: dotted words, e.g. net.ipv4.tcp_autocorking`},
		{"net.ipv4.tcp_autocorking", " ", "missing: the value to write, e.g. 0"},
		{"net.ipv4.tcp_autocorking", "1\n0", `"1\n0": a value is one line of printable text`},
	} {
		if got := CheckSysctl(tc.name, tc.value); got != tc.want {
			t.Errorf("%s=%q: %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
	if got := SysctlPath("net.ipv4.conf.all.forwarding"); got != "/proc/sys/net/ipv4/conf/all/forwarding" {
		t.Errorf("path %s", got)
	}
	if got := SysctlValue("4096\t131072\t6291456\n"); got != "4096 131072 6291456" {
		t.Errorf("value %q", got)
	}
}
