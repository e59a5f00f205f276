package vm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/digitalocean/go-qemu/qmp"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/internal/procstat"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// QEMU is the system emulator nsperf boots guests with (Debian: qemu-system-x86).
const QEMU = "qemu-system-x86_64"

// Accelerators.
const (
	AccelKVM = "kvm"
	AccelTCG = "tcg"
)

// Config is one guest.
type Config struct {
	Name  string // A, B: names the guest in progress lines
	Image results.KernelImage
	// Kernel is what -kernel loads: the image's vmlinux to enter through PVH (pvhKernel), or
	// "" for Image.Path, the bzImage itself.
	Kernel   string
	Initrd   string    // the initramfs (WriteInitramfs)
	Accel    string    // kvm or tcg
	CPUs     int       // vCPUs
	MemoryMB int       // guest memory
	Dir      string    // the guest's directory on the host; Dir/x is shared read-write
	Progress io.Writer // the guest's stderr and /init's progress, line by line
	Prefix   string    // put before each forwarded line: "[A] " when two guests talk at once
	// Stopped starts the guest paused at its first instruction (-S): Cont runs it.
	Stopped bool
	// Icount is -icount's value for a guest in virtual time (IcountOptions); "" for the wall
	// clock.
	Icount string
	// NICs are emulated NICs, each group on a hub of its own (Options.NICs).
	NICs [][]scenarios.EmulatedNIC
	// RTCBase is the date the real-time clock of a guest in virtual time starts at (whole
	// seconds, the same for every guest of a session): see VirtualRTC.
	RTCBase time.Time
}

// Instance is a running QEMU process and the guest kernel it runs (package machine names what
// a run measures on; this is one guest of a session).
type Instance struct {
	cfg     Config
	cmd     *exec.Cmd
	mon     *qmp.SocketMonitor
	exited  chan struct{}
	waitErr error
	mu      sync.Mutex
	phase   string // the last progress word of /init: booted, modules loaded, running
	phaseAt map[string]time.Time
	phaseCh chan string
	pinning *results.VMPinning // set by Pin
}

// RTC is -rtc's value: "base=DATE,clock=vm" in virtual time (VirtualRTC); "" for QEMU's
// default (the host's clock).
func (c Config) RTC() string {
	if c.Icount == "" || c.RTCBase.IsZero() {
		return ""
	}
	return "base=" + c.RTCBase.UTC().Format("2006-01-02T15:04:05") + "," + VirtualRTC
}

// Exchange is the directory the guest shares with the host (its GuestDir).
func (c Config) Exchange() string { return filepath.Join(c.Dir, "x") }

// Gate is the host's directory of the A/B gate (go-N): shared read-only, so that the guest
// cannot plant a link the host would write through.
func (c Config) Gate() string { return filepath.Join(c.Dir, "gate") }

// ConsoleLog is the guest kernel's console log.
func (c Config) ConsoleLog() string { return filepath.Join(c.Dir, "console.log") }

// consolePipe is the prefix of the two FIFOs of the console (-chardev pipe,path=PREFIX):
// QEMU writes the console to PREFIX.out, which the host bounds into ConsoleLog, and reads the
// guest's input from PREFIX.in, which nothing writes. One FIFO for both (QEMU opens PATH
// itself read-write when PATH.in and PATH.out are missing) hands QEMU back bytes it wrote, as
// input to the guest, whenever its read of the FIFO beats the host's: characters went missing
// from the log, and the guest took serial interrupts at moments of the host's timing, which
// made two boots of one kernel in virtual time diverge at once.
func (c Config) consolePipe() string { return filepath.Join(c.Dir, "console") }

func (c Config) qmpSocket() string { return filepath.Join(c.Dir, "qmp.sock") }

// args is QEMU's command line: the kernel and initramfs, the host root read-only and the
// exchange directory read-write over 9p (virtio), no network, the console to a FIFO the host
// copies into the console log (bounded: startConsole), the
// second serial port (the guest's stderr) on QEMU's stdout, QMP on a socket in Dir.
func (c Config) args() []string {
	a := []string{
		"-name", "nsperf-" + filepath.Base(c.Dir), // nsperf cleanup finds a killed run's QEMU by it
		"-accel", c.accelArg(),
	}
	if model := c.CPUModel(); model != "" {
		a = append(a, "-cpu", model)
	}
	a = append(a,
		"-m", strconv.Itoa(c.MemoryMB),
		"-smp", strconv.Itoa(c.CPUs),
		"-kernel", c.kernelFile(),
		"-initrd", c.Initrd,
		"-append", c.KernelCommandLine(),
		"-display", "none", "-monitor", "none", "-no-reboot", "-nic", "none",
		"-chardev", "pipe,id=console,path="+c.consolePipe(),
		"-serial", "chardev:console",
		"-chardev", "stdio,id=progress,signal=off",
		"-serial", "chardev:progress",
		"-virtfs", "local,path=/,mount_tag="+hostRootTag+",security_model=none,readonly=on",
		"-virtfs", "local,path="+c.Exchange()+",mount_tag="+exchangeTag+",security_model=none",
		"-virtfs", "local,path="+c.Gate()+",mount_tag="+gateTag+",security_model=none,readonly=on",
		"-qmp", "unix:"+c.qmpSocket()+",server=on,wait=off",
	)
	a = append(a, c.nicArgs()...)
	if c.Icount != "" {
		a = append(a, "-icount", c.Icount)
		if rtc := c.RTC(); rtc != "" {
			a = append(a, "-rtc", rtc)
		}
	}
	if c.Stopped {
		a = append(a, "-S")
	}
	return a
}

// nicArgs connect each group of NICs back to back on a hub of QEMU's own, which forwards a
// frame from one port to the others and reaches nothing of the host: `-netdev
// hubport,id=nicG_I,hubid=G -device MODEL,netdev=nicG_I,mac=MAC`.
func (c Config) nicArgs() []string {
	var a []string
	for g, group := range c.NICs {
		for i := range group {
			a = append(a, "-netdev", fmt.Sprintf("hubport,id=%s,hubid=%d", nicID(g, i), g))
		}
	}
	for _, dev := range c.nicDevices() {
		a = append(a, "-device", dev)
	}
	return a
}

// nicDevices are the -device values of the NICs, each on its hub's port (nicArgs).
func (c Config) nicDevices() []string {
	var out []string
	for g, group := range c.NICs {
		for i, nic := range group {
			out = append(out, fmt.Sprintf("%s,netdev=%s,mac=%s", nic.Device, nicID(g, i), nic.MAC))
		}
	}
	return out
}

// nicID names NIC i of group g's hub port.
func nicID(g, i int) string { return fmt.Sprintf("nic%d_%d", g, i) }

// KernelCommandLine is the guest kernel's command line: the console, /init, a panic ends the
// guest; and in virtual time with more than one vCPU maxcpus=1 (CPUBringUpAfterBoot).
func (c Config) KernelCommandLine() string {
	line := "console=ttyS0 rdinit=/init panic=-1 oops=panic"
	if c.CPUBringUp() == CPUBringUpAfterBoot {
		line += " maxcpus=1"
	}
	return line
}

// kernelFile is the file QEMU boots.
func (c Config) kernelFile() string {
	if c.Kernel != "" {
		return c.Kernel
	}
	return c.Image.Path
}

// CPUBringUpAfterBoot is how a guest in virtual time with several vCPUs gets its CPUs: the
// kernel boots on one (maxcpus=1) and /init brings the others online through sysfs (the
// `echo 1 > /sys/devices/system/cpu/cpuN/online` of CPU hotplug). Under single-threaded TCG
// with icount, Debian 12's 6.1 never finishes bringing up its second CPU at boot: the boot CPU
// waits for it in do_boot_cpu() by calling schedule(), which returns at once as nothing else
// can run yet, while the second CPU spins in wait_for_master_cpu() (cpu_init+0x2d), and the
// guest's clock stops at "x86: Booting SMP configuration:". From a running system, cpu_up()
// sleeps in wait_for_completion() instead, the boot CPU idles, and QEMU's round robin runs the
// second CPU. 6.12 (whose bring-up was reworked in 6.5) boots either way; every kernel in
// virtual time takes the same path so that none depends on which.
const CPUBringUpAfterBoot = "after boot: maxcpus=1, the others onlined by /init"

// CPUBringUp is how the guest's CPUs come up: CPUBringUpAfterBoot, or "" for the kernel's own
// bring-up at boot.
func (c Config) CPUBringUp() string {
	if c.Icount != "" && c.CPUs > 1 {
		return CPUBringUpAfterBoot
	}
	return ""
}

// TCGCPUModel is the guest CPU under TCG: QEMU's default model without CMPXCHG16B. QEMU 7.2's
// TCG emulates cmpxchg16b without a lock prefix (the kernel's this_cpu_cmpxchg128, on every
// SLUB allocation) in a helper that computes the flags from a stale CC_OP: when the
// translation block began with CC_OP_EFLAGS and an earlier instruction of it set CC_SRC (an
// add), the flags become that register's bits, up to the next instruction that sets flags.
// An interrupt in that window pushes them, and its iret loads VM, NT or IOPL: the guest dies
// of a double fault (seen at kmem_cache_alloc_node_noprof+0xe0 with EFLAGS bf8eaa42, the low
// half of RDI with ZF) or of an oops after `sti`. testdata/cx16flags.c shows it in user mode.
// Without CX16 the kernel takes its emulation (this_cpu_cmpxchg16b_emu, interrupts off), the
// same on both kernels of an A/B. Later QEMUs translate the instruction inline (TCG's own
// 128-bit cmpxchg), with the flags computed in the translator.
const TCGCPUModel = "qemu64,-cx16"

// CPUModel is -cpu's value: TCGCPUModel under TCG; "" (QEMU's default) under KVM, where the
// host CPU runs the instruction.
func (c Config) CPUModel() string {
	if c.Accel == AccelTCG {
		return TCGCPUModel
	}
	return ""
}

// accelArg is -accel's value. TCG is asked for its threading by name: one host thread for
// all vCPUs in virtual time (icount counts the instructions of one thread: thread=single),
// else one host thread per vCPU (thread=multi, QEMU's default for an x86 guest on an x86
// host), which lets each vCPU be pinned.
func (c Config) accelArg() string {
	if c.Accel == AccelTCG {
		return AccelTCG + ",thread=" + c.TCGThreads()
	}
	return c.Accel
}

// TCGThreads is TCG's threading for the guest: single in virtual time, else multi; "" under
// KVM.
func (c Config) TCGThreads() string {
	switch {
	case c.Accel != AccelTCG:
		return ""
	case c.Icount != "":
		return "single"
	}
	return "multi"
}

// Start starts QEMU. It returns once QMP answers; the guest boots on (or waits for Cont
// when Stopped).
func Start(cfg Config) (*Instance, error) {
	if err := os.MkdirAll(cfg.Exchange(), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Gate(), 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(QEMUBinary(), cfg.args()...)
	cmd.Stdin = nil
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	// Its own process group: a ^C on the terminal reaches nsperf, which stops the guest
	// itself, and never QEMU directly in the middle of that.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stopConsole, err := startConsole(cfg.consolePipe(), cfg.ConsoleLog())
	if err != nil {
		return nil, fmt.Errorf("vm %s: %w", cfg.Name, err)
	}
	// Forked on nsperf's forking thread: Pdeathsig follows the thread that forks (netnsx).
	if err := netnsx.ForkHere(cmd.Start); err != nil {
		stopConsole()
		return nil, fmt.Errorf("vm %s: starting %s: %w (install qemu-system-x86)", cfg.Name, QEMUBinary(), err)
	}
	m := &Instance{cfg: cfg, cmd: cmd, exited: make(chan struct{}), phaseCh: make(chan string, 16)}
	var lines sync.WaitGroup
	lines.Add(1)
	go func() { defer lines.Done(); m.readProgress(stdout) }()
	go func() {
		lines.Wait()
		m.waitErr = cmd.Wait()
		if m.waitErr != nil && stderr.Len() > 0 {
			m.waitErr = fmt.Errorf("%w: %s", m.waitErr, strings.TrimSpace(cmd.Stderr.(*lockedWriter).String()))
		}
		stopConsole() // the console log is complete once the guest is seen to have ended
		close(m.exited)
	}()
	// QMP: the socket appears once QEMU has parsed its command line.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mon, err := qmp.NewSocketMonitor("unix", cfg.qmpSocket(), 2*time.Second)
		if err == nil {
			if err = mon.Connect(); err == nil {
				m.mon = mon
				break
			}
		}
		select {
		case <-m.exited:
			if cfg.Icount != "" && m.waitErr != nil && icountUnsupported(m.waitErr.Error()) {
				return nil, fmt.Errorf("vm %s: this %s cannot run the guest in virtual time (-icount %s): %w (QEMU: %v); use --vm-clock wall", cfg.Name, QEMUBinary(), cfg.Icount, ErrNoIcount, m.waitErr)
			}
			return nil, fmt.Errorf("vm %s: %s exited at once: %w", cfg.Name, QEMU, m.waitErr)
		case <-time.After(waitlimit.Poll):
		}
		if time.Now().After(deadline) {
			m.Kill()
			return nil, fmt.Errorf("vm %s: QMP socket %s did not answer: %w", cfg.Name, cfg.qmpSocket(), err)
		}
	}
	return m, nil
}

// lockedWriter is a strings.Builder written by exec's copying goroutine and read by others.
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}

// readProgress forwards the guest's stderr line by line and notes /init's progress words.
func (m *Instance) readProgress(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if word, ok := strings.CutPrefix(line, progressPrefix); ok {
			m.mu.Lock()
			m.phase = word
			if m.phaseAt == nil {
				m.phaseAt = map[string]time.Time{}
			}
			m.phaseAt[word] = time.Now()
			m.mu.Unlock()
			select {
			case m.phaseCh <- word:
			default:
			}
			if !strings.HasPrefix(word, "error: ") {
				continue
			}
		}
		if m.cfg.Progress != nil {
			fmt.Fprintln(m.cfg.Progress, m.cfg.Prefix+line)
		}
	}
}

// Phase is how far /init got: "", booted, modules loaded, running, or "error: ...".
func (m *Instance) Phase() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.phase
}

// PhaseAt is when /init said word ("booted": the kernel ran /init).
func (m *Instance) PhaseAt(word string) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.phaseAt[word]
}

// ErrBootTimeout: the guest did not reach the wanted phase in time.
var ErrBootTimeout = errors.New("boot timeout")

// WaitPhase waits until /init says word (booted, running), the guest ends, or the timeout.
func (m *Instance) WaitPhase(ctx context.Context, word string, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		if p := m.Phase(); p == word || (word == "booted" && p != "") {
			return nil
		} else if strings.HasPrefix(p, "error: ") {
			// /init powers off after the error: the console has said why by then.
			select {
			case <-m.exited:
			case <-time.After(5 * time.Second):
			}
			return fmt.Errorf("vm %s: %s%s", m.cfg.Name, strings.TrimPrefix(p, "error: "), m.consoleHint())
		}
		select {
		case <-m.phaseCh:
		case <-m.exited:
			if p := m.Phase(); p == word {
				return nil
			}
			return fmt.Errorf("vm %s: the guest ended before it was %s (QEMU: %v)%s", m.cfg.Name, word, m.waitErr, m.consoleHint())
		case <-t.C:
			return fmt.Errorf("vm %s: %w: the guest was not %s after %s%s", m.cfg.Name, ErrBootTimeout, word, timeout, m.consoleHint())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// consoleHint is the last lines of the console log, for errors.
func (m *Instance) consoleHint() string {
	tail := ConsoleTail(m.cfg.ConsoleLog(), 15)
	if tail == "" {
		return "; the console log is empty"
	}
	return "; the console's last lines:\n    " + strings.ReplaceAll(tail, "\n", "\n    ")
}

// ConsoleTail is the last n lines of a console log.
func ConsoleTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(string(data), "\r", ""), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// qmpRun runs one QMP command.
func (m *Instance) qmpRun(command string) error {
	raw, err := json.Marshal(map[string]string{"execute": command})
	if err != nil {
		return err
	}
	if _, err := m.mon.Run(raw); err != nil {
		return fmt.Errorf("vm %s: QMP %s: %w", m.cfg.Name, command, err)
	}
	return nil
}

// Pause stops the guest's vCPUs (QMP stop): the guest uses no CPU until Cont, and its clock
// stands still. A pinned guest's vCPU threads then wait on the CPUs that measure nothing.
func (m *Instance) Pause() error {
	if err := m.qmpRun("stop"); err != nil {
		return err
	}
	return m.parkVCPUs(true)
}

// Cont lets a paused guest run on (QMP cont), its vCPU threads back on their own CPUs.
func (m *Instance) Cont() error {
	if err := m.parkVCPUs(false); err != nil {
		return err
	}
	return m.qmpRun("cont")
}

// Exited is closed when QEMU has exited.
func (m *Instance) Exited() <-chan struct{} { return m.exited }

// Wait waits for QEMU to exit (the guest powers off when its command ends).
func (m *Instance) Wait(ctx context.Context) error {
	select {
	case <-m.exited:
		return m.waitErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Kill ends QEMU at once and waits for it.
func (m *Instance) Kill() {
	if m.mon != nil {
		m.mon.Disconnect()
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	<-m.exited
}

// PID is QEMU's process id.
func (m *Instance) PID() int { return m.cmd.Process.Pid }

// CPUTime is the CPU time QEMU has used so far (user and system, all threads).
func (m *Instance) CPUTime() time.Duration {
	st, _ := procstat.ReadPID(m.PID())
	return st.CPUTime()
}

// ExitCode is the guest command's exit status, from the exchange directory; ok is false when
// the guest never got to write it.
func (m *Instance) ExitCode() (code int, ok bool) {
	data, err := safefile.ReadUntrusted(filepath.Join(m.cfg.Exchange(), "exit"), 64)
	if err != nil {
		return 0, false
	}
	return parseExitCode(data)
}

// parseExitCode reads an exit status as the guest's /init writes it (`echo $?`): a number
// from 0 to 255; anything else is no status.
func parseExitCode(data []byte) (int, bool) {
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || code < 0 || code > 255 {
		return 0, false
	}
	return code, true
}
