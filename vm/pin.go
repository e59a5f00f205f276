package vm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/results"
)

// Pinning keeps each vCPU on one host CPU, as NIPA's qemu_pin.py and virtme-ng's --pin do: a
// vCPU thread the host scheduler moves between CPUs measures the moves along with the
// kernel. QEMU's other threads (main loop, 9p and block I/O workers, RCU) go to the CPUs no
// vCPU runs on, when there are any; threads QEMU starts later inherit the main thread's CPUs.

// PinPlan is where one guest's threads may run: vCPU i on VCPUs[i], the others on Other.
type PinPlan struct {
	VCPUs [][]int
	Other []int // empty: every allowed CPU runs a vCPU, the other threads are left alone
	// Park moves the vCPU threads to Other while the guest is paused (an A/B run's other
	// guest measures meanwhile).
	Park bool
}

// PlanPinning places vcpus vCPUs on the host CPUs nsperf may use. Fewer vCPUs than CPUs take
// the last ones (CPU 0 does most of the host's housekeeping and interrupts) and leave the
// rest to QEMU's other threads; as many or more take one CPU each, in turn.
func PlanPinning(allowed []int, vcpus int) PinPlan {
	var p PinPlan
	if len(allowed) == 0 || vcpus <= 0 {
		return p
	}
	if vcpus < len(allowed) {
		free := len(allowed) - vcpus
		for i := 0; i < vcpus; i++ {
			p.VCPUs = append(p.VCPUs, []int{allowed[free+i]})
		}
		p.Other = slices.Clone(allowed[:free])
		return p
	}
	for i := 0; i < vcpus; i++ {
		p.VCPUs = append(p.VCPUs, []int{allowed[i%len(allowed)]})
	}
	return p
}

// How the guests of an A/B take their rounds (Options.Turns, --vm-turns).
const (
	TurnsAuto      = "auto"
	TurnsTogether  = "together"
	TurnsAlternate = "alternate"
)

// CheckTurns refuses a --vm-turns value nsperf does not know, and together on a clock that is
// not virtual (two guests at once on the wall clock measure each other's load).
func CheckTurns(turns, clock string) error {
	switch turns {
	case "", TurnsAuto, TurnsAlternate:
		return nil
	case TurnsTogether:
		if clock == ClockWall {
			return fmt.Errorf("--vm-turns together with --vm-clock wall: two guests at once on the wall clock measure each other's load; use --vm-clock virtual (or auto under TCG)")
		}
		return nil
	}
	return fmt.Errorf("--vm-turns %q: want auto, together or alternate", turns)
}

// PlanTogether places guest i of guests so that all run at once, each vCPU thread on a host
// CPU of its own: A on the last CPU nsperf may use, B on the one before, and QEMU's other
// threads (9p, I/O, the main loop) on the CPUs left, or with none left on the guest's own CPU:
// a guest waiting at its gate polls the exchange directory through 9p, and its workers must
// not take the other guest's CPU. It applies in virtual time only,
// where a guest's figures count its own instructions and no host load (the other guest's
// included) can move them; on the wall clock two guests at once would measure each other, so
// they take turns. ok is false where the guests take turns: the wall clock, one guest, a
// guest with more than one vCPU thread, fewer CPUs than guests, or turns asked for
// (TurnsAlternate).
func PlanTogether(allowed []int, i, guests, threads int, clock, turns string) (p PinPlan, ok bool) {
	if turns == TurnsAlternate || clock != ClockVirtual || guests < 2 || threads != 1 || len(allowed) < guests {
		return PinPlan{}, false
	}
	own := allowed[len(allowed)-1-i]
	p.VCPUs = [][]int{{own}}
	p.Other = slices.Clone(allowed[:len(allowed)-guests])
	if len(p.Other) == 0 {
		p.Other = []int{own}
	}
	return p, true
}

// preferFree orders the allowed CPUs for PlanPinning and PlanTogether, which take theirs from
// the end: the CPUs other nsperf guests' vCPUs are pinned to first, the most taken first, the
// others after them in their order. Two runs on one host (two users, a test suite's lanes)
// then pin their guests to different CPUs where there are enough: on the wall clock a guest
// sharing its CPU measures the other's load, and in virtual time it takes twice as long.
func preferFree(allowed []int, busy map[int]int) []int {
	out := slices.Clone(allowed)
	slices.SortStableFunc(out, func(a, b int) int { return busy[b] - busy[a] })
	return out
}

// busyCPUs counts, per host CPU, the vCPUs other nsperf runs' guests are pinned to it: each
// live guest (its directory's lock held) records its vCPUs' CPUs when it pins them
// (vcpusFile).
func busyCPUs() map[int]int {
	busy := map[int]int{}
	entries, err := os.ReadDir(Dir())
	if err != nil {
		return busy
	}
	for _, e := range entries {
		dir := filepath.Join(Dir(), e.Name())
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "vm-") || !locked(dir) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, vcpusFile))
		if err != nil || len(data) > 4096 {
			continue
		}
		for _, cpu := range procstat.ParseCPUList(strings.TrimSpace(string(data))) {
			busy[cpu]++
		}
	}
	return busy
}

// vcpusFile, in a guest's directory, lists the host CPUs its vCPU threads are pinned to (one
// entry per vCPU thread, `0,1` or `1,1`).
const vcpusFile = "vcpus"

// AllowedCPUs are the host CPUs this process may run on (taskset, cgroup cpusets).
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for cpu := 0; cpu < len(set)*64; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus, nil
}

// vcpuThreads asks QMP for the host thread of each vCPU, by vCPU index.
func (m *Instance) vcpuThreads() ([]int, error) {
	raw, err := m.mon.Run([]byte(`{"execute":"query-cpus-fast"}`))
	if err != nil {
		return nil, fmt.Errorf("vm %s: QMP query-cpus-fast: %w", m.cfg.Name, err)
	}
	var reply struct {
		Return []struct {
			Index  int `json:"cpu-index"`
			Thread int `json:"thread-id"`
		} `json:"return"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return nil, fmt.Errorf("vm %s: QMP query-cpus-fast: %w", m.cfg.Name, err)
	}
	threads := make([]int, len(reply.Return))
	for _, c := range reply.Return {
		if c.Index < 0 || c.Index >= len(threads) || c.Thread <= 0 {
			return nil, fmt.Errorf("vm %s: QMP query-cpus-fast: vCPU %d on thread %d", m.cfg.Name, c.Index, c.Thread)
		}
		threads[c.Index] = c.Thread
	}
	return threads, nil
}

// Pin applies the plan to QEMU's threads (sched_setaffinity; `taskset -pc CPUS TID` does the
// same) and returns what it did.
func (m *Instance) Pin(plan PinPlan) (*results.VMPinning, error) {
	threads, err := m.vcpuThreads()
	if err != nil {
		return nil, err
	}
	// Single-threaded TCG runs every vCPU on one thread: the plan then has one entry, for it.
	var distinct []int
	for _, tid := range threads {
		if !slices.Contains(distinct, tid) {
			distinct = append(distinct, tid)
		}
	}
	if len(distinct) != len(plan.VCPUs) {
		return nil, fmt.Errorf("vm %s: QEMU runs its %d vCPUs on %d threads, %d planned", m.cfg.Name, len(threads), len(distinct), len(plan.VCPUs))
	}
	got := &results.VMPinning{OtherCPUs: plan.Other}
	if plan.Park {
		got.PausedCPUs = plan.Other
	}
	isVCPU := map[int]bool{}
	for i, tid := range threads {
		cpus := plan.VCPUs[slices.Index(distinct, tid)]
		if !isVCPU[tid] {
			if err := setAffinity(tid, cpus); err != nil {
				return nil, fmt.Errorf("vm %s: pinning vCPU %d (thread %d): %w", m.cfg.Name, i, tid, err)
			}
		}
		isVCPU[tid] = true
		got.VCPUs = append(got.VCPUs, results.VCPUPin{VCPU: i, ThreadID: tid, CPUs: cpus})
	}
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(m.PID()), "task"))
	if err != nil {
		return nil, fmt.Errorf("vm %s: QEMU's threads: %w", m.cfg.Name, err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil || isVCPU[tid] {
			continue
		}
		got.OtherThreads++
		if len(plan.Other) == 0 {
			continue
		}
		// A thread that ended since the listing is no error.
		if err := setAffinity(tid, plan.Other); err != nil && err != unix.ESRCH {
			return nil, fmt.Errorf("vm %s: pinning QEMU thread %d: %w", m.cfg.Name, tid, err)
		}
	}
	var cpus []string
	for _, v := range got.VCPUs {
		if v.VCPU == 0 || v.ThreadID != got.VCPUs[0].ThreadID {
			cpus = append(cpus, procstat.FormatCPUList(v.CPUs))
		}
	}
	if err := os.WriteFile(filepath.Join(m.cfg.Dir, vcpusFile), []byte(strings.Join(cpus, ",")+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("vm %s: %w", m.cfg.Name, err)
	}
	m.pinning = got
	return got, nil
}

// parkVCPUs moves a paused guest's vCPU threads to the CPUs that measure nothing, or back to
// their own CPUs (park false). Without such CPUs they stay: a paused vCPU waits and uses none.
func (m *Instance) parkVCPUs(park bool) error {
	p := m.pinning
	if p == nil || len(p.PausedCPUs) == 0 {
		return nil
	}
	for i, v := range p.VCPUs {
		if i > 0 && v.ThreadID == p.VCPUs[0].ThreadID {
			continue // the one TCG thread of every vCPU, moved already
		}
		cpus := v.CPUs
		if park {
			cpus = p.PausedCPUs
		}
		if err := setAffinity(v.ThreadID, cpus); err != nil {
			return fmt.Errorf("vm %s: moving vCPU %d (thread %d) to CPUs %v: %w", m.cfg.Name, v.VCPU, v.ThreadID, cpus, err)
		}
	}
	return nil
}

func setAffinity(tid int, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return unix.SchedSetaffinity(tid, &set)
}
