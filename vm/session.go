package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/runstate"
)

// MaxGuestResult bounds what the host reads of a guest's result and output: what it may
// read of a result file.
const MaxGuestResult = results.MaxResultSize

// GuestErrorFile is where, in its exchange directory, the guest's nsperf leaves the error it
// exits with, for the host to name why a guest failed (a state this kernel cannot apply).
const GuestErrorFile = "error"

// maxGuestError bounds what the host reads of a guest's error: one message.
const maxGuestError = 64 << 10

// Kernel is one kernel under test.
type Kernel struct {
	Image   results.KernelImage
	Modules string // --modules DIR; "" when everything needed is built in
	Label   string
}

// Options are what a session boots and runs.
type Options struct {
	Kernels  []Kernel
	CPUs     int
	MemoryMB int
	// Accel is auto (KVM when it boots a guest, else TCG), kvm or tcg.
	Accel string
	// Clock is auto (virtual under TCG, wall under KVM), virtual or wall (ResolveClock).
	Clock string
	// BootTimeout bounds the time from QEMU's start to /init running the command.
	BootTimeout time.Duration
	// Binary is the nsperf binary to run in the guest; it is copied into the exchange
	// directory, as the host's /tmp and /run are not visible there.
	Binary string
	// Files are copied into each guest's exchange directory: name there -> host path.
	Files map[string]string
	// Programs are copied there too, executable: programs the host built for the guest to
	// run (a kernel selftest's), which may live where the guest sees nothing (a cache under
	// /tmp, a --vm-hide).
	Programs map[string]string
	// Args is the guest command's arguments after the binary, per kernel (index), for a
	// guest on that clock (ClockVirtual or ClockWall).
	Args func(kernel int, clock string) []string
	// Generated, when set, makes files for each guest's exchange directory, per kernel
	// (index) and clock: name there -> content (a run's request).
	Generated func(kernel int, clock string) (map[string][]byte, error)
	// Modules are loaded in the guest in dependency order, after BootModules: Required ones
	// must exist, Optional ones are loaded when the tree has them.
	Required, Optional []string
	// NICs are emulated NICs the guest's machine has, each group on a hub of its own and
	// connected to nothing else (a scenario's NIC pairs: NICs).
	NICs     [][]scenarios.EmulatedNIC
	Progress io.Writer
	// Hide are host paths (absolute) the guest sees empty, besides Hidden: the history
	// database, a --vm-hide.
	Hide []string
	// Pin pins each vCPU thread to a host CPU and QEMU's other threads to the CPUs left
	// (PlanPinning).
	Pin bool
	// Turns is how the guests of an A/B take their rounds: TurnsAuto (together in virtual
	// time where the host has a CPU for each guest, else in turns), TurnsTogether or
	// TurnsAlternate.
	Turns string
}

// Defaults.
const (
	DefaultMemoryMB    = 2048
	DefaultBootTimeout = 120 * time.Second
	// kvmProbeTimeout bounds how long a KVM guest may take to print its first line: a TCG
	// guest prints it after 6.5-8.5 s here, so a working KVM is well inside it; a broken
	// nested one hangs after the BIOS forever.
	kvmProbeTimeout = 20 * time.Second
)

// Outcome is what one guest left: its command's exit status and the files it wrote.
type Outcome struct {
	Kernel Kernel
	Info   results.VMInfo
	// Exited is false when the guest never wrote an exit status (boot failure, killed).
	Exited   bool
	ExitCode int
	Result   []byte // result.json, when the guest wrote one
	// Error is what the guest's nsperf said when it failed (GuestErrorFile), untrusted.
	Error   string
	Stdout  []byte
	Console []byte // the kernel's console log
	Err     error  // why the guest did not finish
}

// Dir is where sessions keep their guests' directories while they run (tmpfs).
func Dir() string { return filepath.Join(runstate.Dir, "vm") }

// guest is one booted kernel of a session.
type guest struct {
	cfg     Config
	m       *Instance
	info    results.VMInfo
	lock    *os.File
	started time.Time
	pin     *PinPlan // nil: not pinned
	index   int      // 0 for A, 1 for B
	// together: the guests of the A/B run their rounds at once, each on its own host CPU
	// (PlanTogether); one is paused only while it waits for the other to end a round.
	together bool
}

// Session is the guests of one run, booted and running their commands.
type Session struct {
	opt         Options
	guests      []*guest
	qemuVersion string
	// busy counts the vCPU threads other nsperf runs' guests have pinned to each host CPU,
	// read once, before this session pins its first guest (busyCPUs).
	busy map[int]int
	// rtcBase is where the real-time clocks of its guests in virtual time start (VirtualRTC).
	rtcBase time.Time
}

// Boot boots every kernel: prepares its directory (lock, initramfs, binary, files) and
// starts QEMU, choosing the accelerator with the first guest. It waits until each guest runs
// its command.
func Boot(ctx context.Context, opt Options) (s *Session, err error) {
	s = &Session{opt: opt, rtcBase: time.Now().UTC().Truncate(time.Second)}
	defer func() {
		if err != nil {
			be := &BootError{Err: err, Consoles: map[string][]byte{}}
			for _, g := range s.guests {
				if data, rerr := os.ReadFile(g.cfg.ConsoleLog()); rerr == nil && len(data) > 0 {
					be.Consoles[g.cfg.Name] = data
				}
			}
			s.Close()
			s, err = nil, be
		}
	}()
	opt = opt.withDefaults()
	s.opt = opt
	if s.qemuVersion, err = qemuVersion(); err != nil {
		return s, err
	}
	if err := CheckClockFlags(opt.Clock, opt.Accel); err != nil {
		return s, err
	}
	accel, warning, err := sessionAccel(opt)
	if err != nil {
		return s, err
	}
	// The clock of the guests, which their commands are told of.
	clock, err := ResolveClock(opt.Clock, accel)
	if err != nil {
		return s, err
	}
	for i, k := range opt.Kernels {
		g, err := s.bootGuest(i, k, accel, clock, warning)
		if err != nil {
			return s, err
		}
		if accel != AccelKVM || (opt.Accel != "" && opt.Accel != "auto") {
			continue // TCG, or KVM asked for by name: no probing
		}
		switch err := g.m.WaitPhase(ctx, "booted", kvmProbeTimeout); {
		case errors.Is(err, ErrBootTimeout):
			markKVMBroken()
			// The guest's command was prepared for KVM's clock: it is made again for the
			// clock TCG gets (virtual unless --vm-clock says wall), so that the first run
			// after a host boot measures as every later one does.
			s.discard(g)
			accel = AccelTCG
			if clock, err = ResolveClock(opt.Clock, accel); err != nil {
				return s, err
			}
			warning = fmt.Sprintf("KVM did not boot the guest within %s (it hangs after the BIOS under nested virtualization): fell back to TCG, in %s time (later runs go straight to TCG)", kvmProbeTimeout, clock)
			fmt.Fprintf(opt.Progress, "vm %s: %s\n", g.cfg.Name, warning)
			if _, err := s.bootGuest(i, k, accel, clock, warning); err != nil {
				return s, err
			}
		case err != nil:
			return s, err
		}
	}
	return s, s.waitRunning(ctx)
}

// bootGuest prepares guest i for the accelerator and clock and starts it.
func (s *Session) bootGuest(i int, k Kernel, accel, clock, warning string) (*guest, error) {
	opt := s.opt
	g, err := s.prepare(i, k, clock)
	if err != nil {
		return nil, err
	}
	g.info = results.VMInfo{CPUs: opt.CPUs, MemoryMB: opt.MemoryMB, QEMU: s.qemuVersion, Image: k.Image, Modules: k.Modules, Loaded: g.info.Loaded, Boot: g.info.Boot, Warning: warning, NICs: g.cfg.nicDevices()}
	if clock == ClockVirtual {
		g.info.IdleGate = IdleGateSkipped
	}
	if s.busy == nil {
		s.busy = busyCPUs()
	}
	if err := g.setAccel(opt, accel, clock, s.busy, s.rtcBase); err != nil {
		return nil, err
	}
	fmt.Fprintf(opt.Progress, "vm %s: booting %s (%s) with %s, %d vCPU, %d MiB, %s\n", g.cfg.Name, k.Image.Path, k.Image.Release, accel, opt.CPUs, opt.MemoryMB, results.DescribeClock(&g.info))
	return g, g.start()
}

// discard kills the last guest prepared and removes its directory: it is prepared again.
func (s *Session) discard(g *guest) {
	s.guests = s.guests[:len(s.guests)-1]
	g.close()
}

// sessionAccel is the accelerator the session's guests start with, and a warning to record:
// as asked, or for auto TCG in virtual time and otherwise KVM where it is not known to hang.
func sessionAccel(opt Options) (accel, warning string, err error) {
	switch opt.Accel {
	case "", "auto":
		if opt.Clock == ClockVirtual {
			return AccelTCG, "", nil // virtual time is TCG's: no KVM probe
		}
		accel, warning = chooseAccel()
		if warning != "" {
			fmt.Fprintf(opt.Progress, "vm: %s\n", warning)
		}
		return accel, warning, nil
	case AccelKVM, AccelTCG:
		return opt.Accel, "", nil
	}
	return "", "", fmt.Errorf("--vm-accel %q: want auto, kvm or tcg", opt.Accel)
}

// setAccel sets the guest's accelerator, its clock (the same for every guest of the session,
// the real-time clock's start among it) and the pinning that goes with them.
func (g *guest) setAccel(opt Options, accel, clock string, busy map[int]int, rtcBase time.Time) (err error) {
	g.cfg.Accel, g.cfg.Icount, g.cfg.RTCBase = accel, "", time.Time{}
	if clock == ClockVirtual {
		g.cfg.Icount, g.cfg.RTCBase = IcountOptions, rtcBase
	}
	g.info.Accel, g.info.Clock, g.info.Icount, g.info.TCGThreads = accel, clock, g.cfg.Icount, g.cfg.TCGThreads()
	g.info.RTC = g.cfg.RTC()
	g.info.CPUBringUp, g.info.CPU = g.cfg.CPUBringUp(), g.cfg.CPUModel()
	threads := opt.CPUs
	if g.cfg.TCGThreads() == "single" {
		threads = 1
	}
	g.pin, g.together, err = opt.pinPlan(g.index, threads, clock, busy)
	return err
}

// withDefaults fills in what Options leave zero.
func (opt Options) withDefaults() Options {
	if opt.MemoryMB == 0 {
		opt.MemoryMB = DefaultMemoryMB
	}
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	if opt.BootTimeout == 0 {
		opt.BootTimeout = DefaultBootTimeout
	}
	return opt
}

// waitRunning waits until every guest runs its command, and says how long each took.
func (s *Session) waitRunning(ctx context.Context) error {
	for _, g := range s.guests {
		if err := g.m.WaitPhase(ctx, "running", s.opt.BootTimeout); err != nil {
			if last := strings.TrimSpace(ConsoleTail(g.cfg.ConsoleLog(), 1)); errors.Is(err, ErrBootTimeout) && g.cfg.Icount != "" && g.cfg.CPUs > 1 &&
				(strings.HasSuffix(last, "Booting SMP configuration:") || strings.Contains(last, "smpboot: Booting Node")) {
				how := "at boot"
				if g.cfg.CPUBringUp() != "" {
					how = "although it booted on one and /init brought the others online"
				}
				return fmt.Errorf("%w\n  this kernel hangs bringing up a second CPU in virtual time, %s: use --vm-clock wall, or --vm-cpus 1 with a scenario that pins one CPU", err, how)
			}
			return err
		}
		g.info.BootSeconds = time.Since(g.started).Seconds()
		fmt.Fprintf(s.opt.Progress, "vm %s: %s is up after %.1f s (kernel to /init %.1f s, %d modules %.1f s, mounts %.1f s); running nsperf in it\n",
			g.cfg.Name, g.info.Image.Release, g.info.BootSeconds, g.m.PhaseAt("booted").Sub(g.started).Seconds(), len(g.info.Loaded),
			g.m.PhaseAt("modules loaded").Sub(g.m.PhaseAt("booted")).Seconds(), g.m.PhaseAt("running").Sub(g.m.PhaseAt("modules loaded")).Seconds())
	}
	return nil
}

// pinPlan is where guest i's threads go, for QEMU running its vCPUs on threads host threads
// (one each, or one for all with single-threaded TCG); nil without Pin. together says the
// guests of an A/B run at once, each on a host CPU of its own (PlanTogether). The CPUs other
// runs' guests are pinned to come last in the choice (preferFree).
func (opt Options) pinPlan(i, threads int, clock string, busy map[int]int) (plan *PinPlan, together bool, err error) {
	if !opt.Pin {
		return nil, false, nil
	}
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil, false, err
	}
	allowed = preferFree(allowed, busy)
	if p, ok := PlanTogether(allowed, i, len(opt.Kernels), threads, clock, opt.Turns); ok {
		return &p, true, nil
	}
	p := PlanPinning(allowed, threads)
	p.Park = len(opt.Kernels) > 1
	return &p, false, nil
}

// prepare makes a guest's directory: its lock (held while the guest lives: `nsperf cleanup`
// leaves a locked directory alone), the exchange directory with the binary and files, and
// the initramfs with the modules.
func (s *Session) prepare(i int, k Kernel, clock string) (*guest, error) {
	dir, lock, err := makeLockedDir(Dir(), "")
	if err != nil {
		return nil, err
	}
	g := &guest{index: i, cfg: Config{Name: string(rune('A' + i)), Image: k.Image, CPUs: s.opt.CPUs, MemoryMB: s.opt.MemoryMB, Dir: dir, Progress: s.opt.Progress, NICs: s.opt.NICs}}
	if len(s.opt.Kernels) > 1 {
		g.cfg.Prefix = "[" + g.cfg.Name + "] "
	}
	g.lock = lock
	s.guests = append(s.guests, g)
	if err := os.MkdirAll(g.cfg.Exchange(), 0o755); err != nil {
		return nil, err
	}
	if err := copyFile(s.opt.Binary, filepath.Join(g.cfg.Exchange(), "nsperf"), 0o755); err != nil {
		return nil, err
	}
	for name, src := range s.opt.Files {
		if err := copyFile(src, filepath.Join(g.cfg.Exchange(), name), 0o644); err != nil {
			return nil, err
		}
	}
	for name, src := range s.opt.Programs {
		if err := copyFile(src, filepath.Join(g.cfg.Exchange(), name), 0o755); err != nil {
			return nil, err
		}
	}
	if s.opt.Generated != nil {
		files, err := s.opt.Generated(i, clock)
		if err != nil {
			return nil, err
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(g.cfg.Exchange(), name), data, 0o644); err != nil {
				return nil, err
			}
		}
	}
	var modFiles []string
	modDir := ""
	if k.Modules != "" {
		tree, err := FindTree(k.Modules, k.Image.Release)
		if err != nil {
			return nil, err
		}
		modDir = tree.Dir
		if modFiles, _, err = tree.Resolve(append(append([]string{}, BootModules...), s.opt.Required...), s.opt.Optional); err != nil {
			return nil, err
		}
		for _, f := range modFiles {
			g.info.Loaded = append(g.info.Loaded, ModName(f))
		}
	}
	argv := append([]string{GuestDir + "/nsperf"}, s.opt.Args(i, clock)...)
	var initrd bytes.Buffer
	if err := WriteInitramfs(&initrd, "/bin/busybox", modDir, modFiles, InitScript(argv, s.opt.Hide)); err != nil {
		return nil, err
	}
	g.cfg.Initrd = filepath.Join(dir, "initramfs.cpio")
	if err := os.WriteFile(g.cfg.Initrd, initrd.Bytes(), 0o644); err != nil {
		return nil, err
	}
	var why string
	g.cfg.Kernel, g.info.Boot, why = pvhKernel(k.Image, dir)
	if why != "" {
		fmt.Fprintf(s.opt.Progress, "vm %s: booting the bzImage itself, its decompressor run by the guest (slow under TCG): %s\n", g.cfg.Name, why)
	}
	return g, nil
}

// start starts (or restarts) the guest's QEMU and records its pid for `nsperf cleanup`.
func (g *guest) start() error {
	os.Remove(g.cfg.ConsoleLog())
	os.Remove(g.cfg.qmpSocket())
	g.started = time.Now()
	m, err := Start(g.cfg)
	if err != nil {
		return err
	}
	g.m = m
	if err := os.WriteFile(filepath.Join(g.cfg.Dir, "qemu.pid"), []byte(strconv.Itoa(m.PID())+"\n"), 0o644); err != nil {
		return err
	}
	if g.pin == nil {
		return nil
	}
	p, err := m.Pin(*g.pin)
	if err != nil {
		return err
	}
	g.info.Pinning = p
	fmt.Fprintf(g.cfg.Progress, "vm %s: %s\n", g.cfg.Name, results.DescribePinning(p))
	return nil
}

// Wait waits for every guest's command to end and the guest to power off, and collects
// what each left. Cancelling ctx kills the guests.
func (s *Session) Wait(ctx context.Context) []Outcome {
	for _, g := range s.guests {
		if err := g.m.Wait(ctx); err != nil && ctx.Err() != nil {
			break
		}
	}
	return s.outcomes(ctx.Err())
}

// outcomes collects what every guest left; err (e.g. the context's) is the reason for those
// that did not finish.
func (s *Session) outcomes(err error) []Outcome {
	var out []Outcome
	for i, g := range s.guests {
		o := Outcome{Kernel: s.opt.Kernels[i], Info: g.info}
		x := g.cfg.Exchange()
		o.ExitCode, o.Exited = g.m.ExitCode()
		// What the guest wrote is read as untrusted: never through a link, bounded.
		o.Result, _ = safefile.ReadUntrusted(filepath.Join(x, "result.json"), MaxGuestResult)
		o.Stdout, _ = safefile.ReadUntrusted(filepath.Join(x, "stdout"), MaxGuestResult)
		if said, err := safefile.ReadUntrusted(filepath.Join(x, GuestErrorFile), maxGuestError); err == nil {
			o.Error = results.Printable(strings.TrimSpace(string(said)))
		}
		o.Console, _ = os.ReadFile(g.cfg.ConsoleLog())
		switch {
		case err != nil:
			o.Err = err
		case !o.Exited:
			o.Err = fmt.Errorf("vm %s: the guest powered off without an exit status (QEMU: %v)%s", g.cfg.Name, g.m.waitErr, g.m.consoleHint())
		}
		out = append(out, o)
	}
	return out
}

// Together reports whether the guests run their rounds at once, each on a host CPU of its
// own (virtual time), rather than in turns with the other paused.
func (s *Session) Together() bool {
	return len(s.guests) > 1 && s.guests[0].together
}

// Clock is the guests' clock: ClockVirtual or ClockWall.
func (s *Session) Clock() string {
	if len(s.guests) == 0 {
		return ClockWall
	}
	return s.guests[0].info.Clock
}

// Exchange is the exchange directory of guest i on the host.
func (s *Session) Exchange(i int) string { return s.guests[i].cfg.Exchange() }

// Close kills what still runs and removes every guest's directory.
func (s *Session) Close() error {
	var errs []error
	for _, g := range s.guests {
		errs = append(errs, g.close())
	}
	return errors.Join(errs...)
}

// close kills the guest's QEMU if it still runs, removes its directory and drops its lock.
func (g *guest) close() error {
	if g.m != nil {
		select {
		case <-g.m.Exited():
		default:
			g.m.Kill()
		}
		if g.m.mon != nil {
			g.m.mon.Disconnect()
		}
	}
	return removeLockedDir(g.cfg.Dir, g.lock)
}

func copyFile(src, dst string, mode os.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, mode)
}

// qemuVersion is the first line of `qemu-system-x86_64 --version`'s version, e.g. 7.2.22.
func qemuVersion() (string, error) {
	out, err := exec.Command(QEMUBinary(), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w (install qemu-system-x86: scripts/deps.sh does)", QEMUBinary(), err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(strings.TrimPrefix(line, "QEMU emulator version ")), nil
}

// BootError is a failed boot, with the console log of each guest that printed one (by guest
// name): kept for the user, as the guest's directory is removed.
type BootError struct {
	Err      error
	Consoles map[string][]byte
}

func (e *BootError) Error() string { return e.Err.Error() }
func (e *BootError) Unwrap() error { return e.Err }
