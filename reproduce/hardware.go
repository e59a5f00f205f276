package reproduce

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/scenarios"
)

// hardwareRoots are the source folders of drivers for devices a guest does not have: a NIC,
// a wireless or USB or CAN device. The virtual devices nsperf builds (veth, vxlan, macvlan,
// tun, a bridge, Open vSwitch) live elsewhere (drivers/net/*.c, net/).
var hardwareRoots = []string{"drivers/net/ethernet/", "drivers/net/wireless/", "drivers/net/usb/", "drivers/net/can/", "drivers/net/wwan/",
	"drivers/net/phy/", "drivers/net/pcs/", "drivers/net/dsa/", "drivers/infiniband/", "drivers/usb/", "drivers/bluetooth/", "drivers/soc/",
	"arch/arm64/boot/dts/", "arch/arm/boot/dts/"}

// HardwareDrivers names the hardware drivers a series changes ("drivers/net/ethernet/mellanox
// (mlx5)"), and whether every file it changes is in one: such a series' code runs only on its
// device, and nothing of it can be measured here. The drivers of the NICs QEMU emulates are
// not hardware drivers here: a guest with a NIC pair runs them.
func HardwareDrivers(touched []string) (drivers []string, all bool) {
	seen := map[string]bool{}
	all = len(touched) > 0
	for _, f := range touched {
		if emulated(f) {
			all = false // a guest runs it on the NIC QEMU emulates (a NIC pair)
			continue
		}
		root := ""
		for _, r := range hardwareRoots {
			if strings.HasPrefix(f, r) {
				root = r
				break
			}
		}
		wholeArch := false
		if arch, rest, ok := strings.Cut(strings.TrimPrefix(f, "arch/"), "/"); root == "" && ok && strings.HasPrefix(f, "arch/") && arch != "x86" && rest != "" {
			root, wholeArch = "arch/"+arch+"/", true // another architecture's code: a guest here is x86
		}
		if root == "" {
			if strings.HasSuffix(f, ".c") || strings.HasSuffix(f, ".h") {
				all = false
			}
			continue
		}
		rest := strings.TrimPrefix(f, root)
		name := strings.TrimSuffix(root, "/")
		if dir := path.Dir(rest); dir != "." && !wholeArch {
			name = root + strings.SplitN(dir, "/", 2)[0]
		}
		if !seen[name] {
			seen[name] = true
			drivers = append(drivers, name)
		}
	}
	return drivers, all && len(drivers) > 0
}

// emulated says whether file is a driver's of a NIC QEMU emulates (scenarios.NICModels).
func emulated(file string) bool {
	for _, src := range scenarios.EmulatedSources() {
		if file == src || (strings.HasSuffix(src, "/") && strings.HasPrefix(file, src)) {
			return true
		}
	}
	return false
}

// HardwareReason is what reproduce says of a series that changes only hardware drivers, or
// another architecture's code.
func HardwareReason(drivers []string) string {
	return fmt.Sprintf("it changes only %s: code that runs on its device or architecture, which an x86 guest or a namespace does not have; measure it on a machine with it", strings.Join(drivers, ", "))
}

// diffstatRe is a line of git's diffstat: " net/ipv4/tcp_output.c | 33 ++++++----".
var diffstatRe = regexp.MustCompile(`(?m)^ \S+\s+\|\s+\d+ [+-]*$`)

// HasDiffstat says whether a series' messages list changed files without carrying the diff
// (a cover letter, a mail whose diff was cut).
func HasDiffstat(series []patches.Patch) bool {
	for _, p := range series {
		if diffstatRe.MatchString(p.Message) {
			return true
		}
	}
	return false
}

// treeTagRe is the tree a patch was posted for, in its subject's tags: net-next, bpf-next,
// net, a stable review ("6.6").
var treeTagRe = regexp.MustCompile(`(?i)\[[^\]]*?\b(net-next|bpf-next|net|bpf|nf-next|nf|wireless-next|\d+\.\d+)\b[^\]]*\]`)

// BaseHint says which base a series was made for, where its mail says it (the tree in its
// subject's tags, its date): what to give as --source when it does not apply to Debian's.
func BaseHint(series []patches.Patch) string {
	for _, p := range series {
		tree := ""
		if m := treeTagRe.FindStringSubmatch(p.Subject); m != nil {
			tree = m[1]
		}
		if tree == "" && p.Date == "" {
			continue
		}
		what := "it was posted"
		if tree != "" {
			what += " for " + tree
		}
		if p.Date != "" {
			what += " on " + p.Date
		}
		return what + ": build it on that tree (--source DIR, a checkout of it)\n"
	}
	return ""
}

// Lacks says what a message's measurement had that a run here has not, in words a developer
// acts on: the programs it names that nsperf does not drive, and two hosts or a NIC; "" when
// it names neither.
func Lacks(rep *claims.Report) string {
	var parts []string
	if len(rep.OtherTools) > 0 {
		parts = append(parts, fmt.Sprintf("it was measured with %s, which nsperf does not drive (it drives %s)",
			strings.Join(rep.OtherTools, ", "), strings.Join(scenarios.ToolNames(), ", ")))
	}
	for _, s := range rep.Setup {
		switch {
		case s == "two hosts":
			parts = append(parts, "it was measured between two hosts (nsperf measures between namespaces of one machine)")
		case strings.HasPrefix(s, "device "):
			parts = append(parts, "it was measured on the NIC "+strings.TrimPrefix(s, "device "))
		case s == "a 100Gbit NIC":
			parts = append(parts, "it was measured on a 100Gbit NIC")
		case s == "mlx5", s == "liquidio":
			parts = append(parts, "it was measured on a "+s+" NIC")
		}
	}
	return strings.Join(slices.Compact(parts), "; ")
}
