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
// unless it starts with one of SysctlPrefixes, and at run time unless the namespace has the
// file (a machine-wide setting is not under the namespace's /proc/sys/net).
var SysctlPrefixes = []string{"net.core.", "net.ipv4.", "net.ipv6."}

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
	if strings.TrimSpace(value) == "" {
		return "missing: the value to write, e.g. 0"
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
