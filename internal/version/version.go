// Package version reads a program's version out of what its --version (or -V) prints.
package version

import "strings"

// LastField is the last word of the first line: "3.1.0" of "ovs-vswitchd (Open vSwitch)
// 3.1.0", "2.7.0" of "Netperf version 2.7.0".
func LastField(out string) string {
	f := strings.Fields(strings.SplitN(out, "\n", 2)[0])
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}
