package knobs

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// A sysctl is a namespace's setting, not a device's: `ip netns exec NS sysctl -w NAME=VALUE`.
// nsperf sets only the network sysctls that each network namespace has of its own, in the
// namespaces it built, so that nothing it changes reaches the machine: a name is refused
// unless it starts with one of SysctlPrefixes and is not one of hostWideSysctls, and at run
// time unless the namespace has the file (a setting this kernel has not, or has machine-wide
// where a newer kernel has it per namespace).
var SysctlPrefixes = []string{"net.core.", "net.ipv4.", "net.ipv6."}

// hostWideSysctls are the sysctls under SysctlPrefixes that are the machine's on every kernel
// up to 6.18, not a namespace's: the kernel registers their tables for the initial namespace
// only (register_net_sysctl(&init_net, ...)), so that another namespace has no such file, or
// it registers them per namespace over global data and makes them read-only outside the
// initial one. Writing one in a scenario's namespace could only fail (ENOENT, EACCES) or, were
// it writable, change the machine; a scenario that sets one is refused at validation. A name
// that a later kernel makes a namespace's own (as optmem_max and tstamp_allow_data were) comes
// off the list; one that an older kernel keeps machine-wide is found at run time instead.
var hostWideSysctls = sysctlSet(
	// net/core/sysctl_net_core.c: net_core_table, registered for init_net only.
	"net.core.bpf_jit_enable", "net.core.bpf_jit_harden", "net.core.bpf_jit_kallsyms", "net.core.bpf_jit_limit",
	"net.core.busy_poll", "net.core.busy_read", "net.core.default_qdisc", "net.core.dev_weight",
	"net.core.dev_weight_rx_bias", "net.core.dev_weight_tx_bias", "net.core.devconf_inherit_init_net",
	"net.core.fb_tunnels_only_for_init_net", "net.core.flow_limit_cpu_bitmap", "net.core.flow_limit_table_len",
	"net.core.gro_normal_batch", "net.core.high_order_alloc_disable", "net.core.max_skb_frags",
	"net.core.mem_pcpu_rsv", "net.core.message_burst", "net.core.message_cost", "net.core.netdev_budget",
	"net.core.netdev_budget_usecs", "net.core.netdev_max_backlog", "net.core.netdev_rss_key",
	"net.core.netdev_tstamp_prequeue", "net.core.netdev_unregister_timeout_secs", "net.core.rps_sock_flow_entries",
	"net.core.skb_defer_max", "net.core.warnings", "net.core.xsk_max_per_socket_budget",
	// net/core/sysctl_net_core.c: the end of netns_core_table, global data that
	// sysctl_core_net_init makes read-only outside init_net (older kernels have them in
	// net_core_table: absent outside init_net).
	"net.core.rmem_default", "net.core.rmem_max", "net.core.wmem_default", "net.core.wmem_max",
	// net/ipv4/sysctl_net_ipv4.c: ipv4_table, registered for init_net only.
	"net.ipv4.cipso_cache_bucket_size", "net.ipv4.cipso_cache_enable", "net.ipv4.cipso_rbm_optfmt",
	"net.ipv4.cipso_rbm_strictvalid", "net.ipv4.fib_sync_mem", "net.ipv4.inet_peer_maxttl",
	"net.ipv4.inet_peer_minttl", "net.ipv4.inet_peer_threshold", "net.ipv4.tcp_available_ulp",
	"net.ipv4.tcp_low_latency", "net.ipv4.tcp_max_orphans", "net.ipv4.tcp_mem", "net.ipv4.udp_mem",
	// net/ipv4/sysctl_net_ipv4.c: ipv4_net_table's entries without per-namespace data, which
	// ipv4_sysctl_init_net makes read-only outside init_net (or that are read-only anywhere).
	"net.ipv4.tcp_allowed_congestion_control", "net.ipv4.tcp_available_congestion_control",
	"net.ipv4.tcp_ehash_entries", "net.ipv4.udp_hash_entries",
	// net/ipv4/route.c: ipv4_route_table, registered for init_net only (flush, min_pmtu,
	// mtu_expires and min_adv_mss are each namespace's).
	"net.ipv4.route.error_burst", "net.ipv4.route.error_cost", "net.ipv4.route.gc_elasticity",
	"net.ipv4.route.gc_interval", "net.ipv4.route.gc_min_interval", "net.ipv4.route.gc_min_interval_ms",
	"net.ipv4.route.gc_thresh", "net.ipv4.route.gc_timeout", "net.ipv4.route.max_size",
	"net.ipv4.route.redirect_load", "net.ipv4.route.redirect_number", "net.ipv4.route.redirect_silence",
	// net/ipv4/ip_fragment.c and net/ipv6/reassembly.c: the frags tables of init_net only.
	"net.ipv4.ipfrag_secret_interval", "net.ipv6.ip6frag_secret_interval",
	// net/ipv6/sysctl_net_ipv6.c: ipv6_rotable, registered for init_net only.
	"net.ipv6.calipso_cache_bucket_size", "net.ipv6.calipso_cache_enable", "net.ipv6.mld_max_msf", "net.ipv6.mld_qrv",
)

func sysctlSet(names ...string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

// CongestionControlSysctl is a namespace's default congestion control: the kernel takes only
// an algorithm it has (ENOENT otherwise, after trying to load its module tcp_NAME) and, outside
// the initial namespace, one of the machine's net.ipv4.tcp_allowed_congestion_control (EPERM
// otherwise: tcp_set_default_congestion_control).
const CongestionControlSysctl = "net.ipv4.tcp_congestion_control"

// CongestionControlName is a congestion control's name (TCP_CA_NAME_MAX is 16 bytes with the
// NUL), which is its module's with tcp_ before it.
var CongestionControlName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,15}$`)

// sysctlNameRE: dotted words of a sysctl name. Device names inside a name
// (net.ipv4.conf.eth0.forwarding) are words too; '/' and ".." never are.
var sysctlNameRE = regexp.MustCompile(`^[a-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)+$`)

// MaxSysctlValue bounds a value: the longest network sysctl values are a few numbers
// (tcp_rmem's "4096 131072 6291456") or a list of names.
const MaxSysctlValue = 256

// CheckSysctl returns why a state cannot set name to value, or "".
func CheckSysctl(name, value string) string {
	if !sysctlNameRE.MatchString(name) {
		return fmt.Sprintf("%q is not a sysctl name: dotted words, e.g. net.ipv4.tcp_autocorking", name)
	}
	prefixed := false
	for _, p := range SysctlPrefixes {
		prefixed = prefixed || strings.HasPrefix(name, p)
	}
	if !prefixed {
		return fmt.Sprintf("%s: nsperf sets only %s sysctls, which each network namespace has of its own", name, strings.Join(SysctlPrefixes, "*, ")+"*")
	}
	if hostWideSysctls[name] {
		return fmt.Sprintf("%s is host-wide: a network namespace has it read-only or not at all, so nsperf does not change it (set it on the machine before the run if the measurement needs it)", name)
	}
	if strings.TrimSpace(value) == "" {
		return "missing: the value to write, e.g. 0"
	}
	if name == CongestionControlSysctl && !CongestionControlName.MatchString(strings.TrimSpace(value)) {
		return fmt.Sprintf("%q is not a congestion control's name (e.g. cubic, bbr, reno)", value)
	}
	if len(value) > MaxSysctlValue {
		return fmt.Sprintf("a value of %d bytes; at most %d", len(value), MaxSysctlValue)
	}
	for _, r := range value {
		if !unicode.IsPrint(r) && r != '\t' {
			return fmt.Sprintf("%q: a value is one line of printable text", value)
		}
	}
	return ""
}

// SysctlPath is the file of a sysctl under /proc/sys (sysctl(8)'s mapping: dots are
// slashes). Read and written from within the namespace, it is the namespace's own.
func SysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
}

// SysctlValue is a value as the kernel prints it back, for comparison: fields separated
// by one space (tcp_rmem reads "4096\t131072\t6291456").
func SysctlValue(s string) string { return strings.Join(strings.Fields(s), " ") }
