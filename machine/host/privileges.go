package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/internal/capability"
)

// ErrNotRoot: namespaces and devices need root (exit 4).
var ErrNotRoot = capability.Missing("needs root: network namespaces and devices can only be created by root (try sudo)")

// MissingCapabilities: root in a restricted container lacks what namespaces need (exit 4).
type MissingCapabilities []string

// Is makes MissingCapabilities a capability.ErrMissing.
func (m MissingCapabilities) Is(target error) bool { return target == capability.ErrMissing }

func (m MissingCapabilities) Error() string {
	return fmt.Sprintf("needs the capabilities %s, which this process lacks (a restricted container?): run as root with CAP_NET_ADMIN and CAP_SYS_ADMIN", strings.Join(m, " and "))
}

// neededCapabilities are what creating namespaces and devices takes: CAP_NET_ADMIN for
// devices and addresses, CAP_SYS_ADMIN for setns and the namespace mounts.
var neededCapabilities = []struct {
	name string
	bit  uint
}{{"CAP_NET_ADMIN", 12}, {"CAP_SYS_ADMIN", 21}}

// CheckPrivileges refuses a process that cannot create network namespaces and devices: not
// root (ErrNotRoot), or root without CAP_NET_ADMIN and CAP_SYS_ADMIN in its effective set
// (/proc/self/status CapEff: a restricted container). Both are capability errors (exit 4).
func CheckPrivileges() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil // cannot tell: let the kernel say
	}
	var missing MissingCapabilities
	for _, line := range strings.Split(string(status), "\n") {
		hex, ok := strings.CutPrefix(line, "CapEff:")
		if !ok {
			continue
		}
		eff, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
		if err != nil {
			return nil
		}
		for _, c := range neededCapabilities {
			if eff&(1<<c.bit) == 0 {
				missing = append(missing, c.name)
			}
		}
	}
	if len(missing) > 0 {
		return missing
	}
	return nil
}
