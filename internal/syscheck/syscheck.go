// Package syscheck reads what of a machine's tuning makes measurements noisy, as pyperf's
// `system show` does: CPU frequency governor and limits, turbo, SMT, irqbalance, the IRQs that
// may run on the pinned CPUs, isolcpus / nohz_full / rcu_nocbs, transparent huge pages, steal
// time and whether guests get KVM. Each item reads OK or says what to change. Everything is
// read below a root directory ("/", or a test's fake tree); nothing is changed.
package syscheck

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/nsperf/nsperf/internal/procstat"
)

// Item is one fact of the machine: what it is, and whether it helps measuring.
type Item struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	OK     bool   `json:"ok"`
	Advice string `json:"advice,omitempty"` // what to change, when not OK
}

// Check reads the items below root for the CPUs the tools are pinned to (nil: every CPU).
// kvmHung is the file (below root) that holds the boot id of a boot in which a KVM guest hung.
func Check(root string, pinned []int, kvmHung string) []Item {
	c := checker{root: root, online: Online(root), kvmHung: kvmHung}
	if len(pinned) == 0 {
		pinned = c.online
	}
	c.pinned = pinned
	return []Item{c.governor(), c.frequency(), c.turbo(), c.smt(), c.irqbalance(), c.irqs(), c.isolation(), c.thp(), c.steal(), c.kvm()}
}

type checker struct {
	root           string
	online, pinned []int
	kvmHung        string
}

// read is a file's text, its control characters (ESC, ...) written as Go escapes: what /sys
// and /proc say is printed to terminals, and must not drive them.
func read(root, path string) string {
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(data))
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
		q := strconv.QuoteToGraphic(s)
		s = q[1 : len(q)-1]
	}
	return s
}

// Online are the online CPUs below root.
func Online(root string) []int {
	return procstat.ParseCPUList(read(root, "sys/devices/system/cpu/online"))
}

func (c checker) read(path string) string { return read(c.root, path) }

func list(cpus []int) string {
	s := make([]string, len(cpus))
	for i, n := range cpus {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (c checker) cpufreq(cpu int, file string) string {
	return c.read(fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpufreq/%s", cpu, file))
}

func (c checker) governor() Item {
	it := Item{Name: "CPU governor", OK: true}
	var other []string
	seen := map[string]bool{}
	for _, cpu := range c.pinned {
		g := c.cpufreq(cpu, "scaling_governor")
		if g == "" {
			continue
		}
		seen[g] = true
		if g != "performance" {
			other = append(other, fmt.Sprintf("CPU %d %s", cpu, g))
		}
	}
	switch {
	case len(seen) == 0:
		it.Value = "not exposed (no cpufreq: a VM, or a fixed frequency)"
	case len(other) > 0:
		it.Value, it.OK = strings.Join(other, ", "), false
		it.Advice = "cpupower frequency-set -g performance (the frequency then does not follow the load)"
	default:
		it.Value = "performance"
	}
	return it
}

func (c checker) frequency() Item {
	it := Item{Name: "CPU frequency", OK: true, Value: "not exposed"}
	for _, cpu := range c.pinned {
		lo, hi := c.cpufreq(cpu, "scaling_min_freq"), c.cpufreq(cpu, "scaling_max_freq")
		if lo == "" || hi == "" {
			continue
		}
		it.Value = fmt.Sprintf("CPU %d %s-%s MHz", cpu, khzToMHz(lo), khzToMHz(hi))
		if lo != hi {
			it.OK = false
			it.Advice = "a fixed frequency measures more steadily: cpupower frequency-set -d MAX -u MAX"
		}
		break
	}
	return it
}

func khzToMHz(s string) string {
	n, err := strconv.Atoi(s)
	if err != nil {
		return s
	}
	return strconv.Itoa(n / 1000)
}

func (c checker) turbo() Item {
	it := Item{Name: "turbo", OK: true, Value: "not exposed"}
	switch noTurbo, boost := c.read("sys/devices/system/cpu/intel_pstate/no_turbo"), c.read("sys/devices/system/cpu/cpufreq/boost"); {
	case noTurbo == "1" || boost == "0":
		it.Value = "off"
	case noTurbo == "0" || boost == "1":
		it.Value, it.OK = "on", false
		it.Advice = "turbo makes the frequency depend on temperature and load: echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo (or 0 > .../cpufreq/boost)"
	}
	return it
}

func (c checker) smt() Item {
	it := Item{Name: "SMT", OK: true}
	switch active := c.read("sys/devices/system/cpu/smt/active"); active {
	case "0":
		it.Value = "off"
	case "1":
		it.Value = "on"
		// Two pinned CPUs that are siblings share a core.
		for _, cpu := range c.pinned {
			siblings := procstat.ParseCPUList(c.read(fmt.Sprintf("sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu)))
			for _, s := range siblings {
				if s != cpu && slices.Contains(c.pinned, s) {
					it.OK = false
					it.Value = fmt.Sprintf("on; CPUs %d and %d are threads of one core", cpu, s)
					it.Advice = "pin client and server to different cores, or echo off > /sys/devices/system/cpu/smt/control"
					return it
				}
			}
		}
	default:
		it.Value = "not exposed"
	}
	return it
}

func (c checker) irqbalance() Item {
	it := Item{Name: "irqbalance", OK: true, Value: "not running"}
	entries, _ := os.ReadDir(filepath.Join(c.root, "proc"))
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if c.read(filepath.Join("proc", e.Name(), "comm")) == "irqbalance" {
			it.Value, it.OK = "running (pid "+e.Name()+")", false
			it.Advice = "irqbalance moves interrupts during a run: stop it while measuring (systemctl stop irqbalance)"
			break
		}
	}
	return it
}

func (c checker) irqs() Item {
	it := Item{Name: "IRQs on the pinned CPUs", OK: true}
	matches, _ := filepath.Glob(filepath.Join(c.root, "proc", "irq", "*", "smp_affinity_list"))
	on := 0
	for _, m := range matches {
		data, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		for _, cpu := range procstat.ParseCPUList(strings.TrimSpace(string(data))) {
			if slices.Contains(c.pinned, cpu) {
				on++
				break
			}
		}
	}
	it.Value = fmt.Sprintf("%d of %d IRQs may run on CPU %s", on, len(matches), list(c.pinned))
	spare := slices.DeleteFunc(slices.Clone(c.online), func(n int) bool { return slices.Contains(c.pinned, n) })
	switch {
	case on > 0 && len(spare) == 0:
		it.Value += " (no other CPU to move them to)"
	case on > 0:
		it.OK = false
		it.Advice = fmt.Sprintf("move them to CPU %s: echo %s > /proc/irq/N/smp_affinity_list", list(spare), list(spare))
	}
	return it
}

func (c checker) isolation() Item {
	it := Item{Name: "isolcpus, nohz_full, rcu_nocbs", OK: true}
	cmdline := " " + c.read("proc/cmdline") + " "
	var found []string
	isolated := map[string][]int{}
	for _, k := range []string{"isolcpus", "nohz_full", "rcu_nocbs"} {
		if i := strings.Index(cmdline, " "+k+"="); i >= 0 {
			v, _, _ := strings.Cut(cmdline[i+len(k)+2:], " ")
			found = append(found, k+"="+v)
			isolated[k] = procstat.ParseCPUList(v) // flags such as "domain" or "managed_irq" are not CPUs: skipped
		}
	}
	if len(found) == 0 {
		it.Value, it.OK = "none", false
		it.Advice = fmt.Sprintf("optional, for the quietest runs: boot with isolcpus=%[1]s nohz_full=%[1]s rcu_nocbs=%[1]s", list(c.pinned))
		return it
	}
	it.Value = strings.Join(found, " ")
	var not []int
	for _, cpu := range c.pinned {
		if !slices.Contains(isolated["isolcpus"], cpu) {
			not = append(not, cpu)
		}
	}
	if len(not) > 0 {
		it.OK = false
		it.Advice = fmt.Sprintf("the pinned CPUs %s are not isolated: add them to isolcpus=", list(not))
	}
	return it
}

func (c checker) thp() Item {
	it := Item{Name: "transparent huge pages", OK: true, Value: "not exposed"}
	v := c.read("sys/kernel/mm/transparent_hugepage/enabled")
	if i, j := strings.Index(v, "["), strings.Index(v, "]"); i >= 0 && j > i {
		it.Value = v[i+1 : j]
		if it.Value == "always" {
			it.OK = false
			it.Advice = "khugepaged compacts memory during runs: echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"
		}
	}
	return it
}

func (c checker) steal() Item {
	it := Item{Name: "steal time", OK: true, Value: "not exposed"}
	all := procstat.ReadFile(filepath.Join(c.root, "proc", "stat")).All
	if all.Total() == 0 {
		return it
	}
	pct := 100 * float64(all.Steal) / float64(all.Total())
	it.Value = fmt.Sprintf("%.1f%% since boot", pct)
	if pct >= 1 {
		it.OK = false
		it.Advice = "the hypervisor gives this VM's CPUs to others: measure on a dedicated host, and read the noise lines"
	}
	return it
}

func (c checker) kvm() Item {
	it := Item{Name: "KVM for guests", OK: true}
	_, err := os.Stat(filepath.Join(c.root, "dev", "kvm"))
	// The marker holds the boot id of the boot in which a KVM guest hung.
	bootID := c.read("proc/sys/kernel/random/boot_id")
	switch hung := c.kvmHung != "" && bootID != "" && c.read(c.kvmHung) == bootID; {
	case err != nil:
		it.Value, it.OK = "no /dev/kvm: guests run under TCG", false
		it.Advice = "TCG emulates the CPU (CV 11-44% here): compare kernels only with each other; KVM needs virtualization enabled"
	case hung:
		it.Value, it.OK = "/dev/kvm, but a KVM guest hung after the BIOS since this boot: guests run under TCG", false
		it.Advice = "nested KVM does not work here: compare kernels only with each other under TCG"
	default:
		it.Value = "/dev/kvm"
	}
	return it
}

// Write prints the items as a table: each OK, or with what to change.
func Write(w io.Writer, items []Item) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "item\tvalue\tverdict")
	for _, it := range items {
		verdict := "OK"
		if !it.OK {
			verdict = "-> " + it.Advice
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", it.Name, it.Value, verdict)
	}
	return tw.Flush()
}
