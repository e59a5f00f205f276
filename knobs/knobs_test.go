package knobs

import (
	"fmt"
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
		"threaded", "gro_flush_timeout", "napi_defer_hard_irqs", "rps_cpus"}
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

// TestSysfsText: a knob's value as its sysfs file writes and reads it, decimal or a CPU mask
// in hexadecimal words of 32 bits; what no kernel writes is refused with the text.
func TestSysfsText(t *testing.T) {
	rps, _ := Lookup("rps_cpus")
	threaded, _ := Lookup("threaded")
	if got := rps.SysfsText(10); got != "a" {
		t.Errorf("rps_cpus 10 written as %q, want a", got)
	}
	if got := threaded.SysfsText(10); got != "10" {
		t.Errorf("threaded 10 written as %q", got)
	}
	for _, c := range []struct {
		k    Knob
		text string
		want uint32
		err  string
	}{
		{rps, "00000002\n", 2, ""},
		{rps, "00000000,0000000a", 10, ""},
		{rps, "ffffffff", 0xffffffff, ""},
		{rps, "0", 0, ""},
		{rps, "00000001,00000000", 0, `"00000001,00000000" sets CPUs above 31`},
		{rps, "zz", 0, `"zz" is no CPU mask`},
		{rps, "", 0, `"" is no CPU mask`},
		{threaded, "1\n", 1, ""},
		{threaded, "a", 0, `"a" is no number`},
	} {
		got, err := c.k.ParseSysfs(c.text)
		if got != c.want || fmt.Sprint(err) != c.err && !(err == nil && c.err == "") {
			t.Errorf("%s %q: %d %v, want %d %q", c.k.Name, c.text, got, err, c.want, c.err)
		}
	}
}

// FuzzParseSysfs: any text reads as a value or an error, and a value read writes back to
// text that reads as the same value.
func FuzzParseSysfs(f *testing.F) {
	for _, s := range []string{"00000002", "0,a", "ffffffff", "1\n", "", ",,,"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, text string, mask bool) {
		k := Knob{Name: "k", CPUMask: mask}
		v, err := k.ParseSysfs(text)
		if err != nil {
			return
		}
		if back, err := k.ParseSysfs(k.SysfsText(v)); err != nil || back != v {
			t.Errorf("%q read %d, written %q, read back %d %v", text, v, k.SysfsText(v), back, err)
		}
	})
}
