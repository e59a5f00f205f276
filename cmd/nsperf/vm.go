package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/vm"
)

// vmFlags are the flags of a run or probe on a kernel under test.
type vmFlags struct {
	kernels, modules []string
	cpus, memoryMB   int
	accel            string
	clock            string
	pin              bool
	bootTimeout      time.Duration
	deadline         time.Duration // run: the guests' measuring in wall time; 0: from the schedule
	baseline         string        // --bisect: the known-good kernel's result, which the guest's looks decide against
	hide             []string      // --vm-hide: more host paths the guest sees empty
	turns            string        // --vm-turns: how the guests of an A/B take their rounds
}

func (f *vmFlags) add(fs *pflag.FlagSet, forRun bool) {
	help := "boot this kernel in QEMU over the host's root and run there: an image (bzImage, /boot/vmlinuz-*), or a built kernel tree, whose arch/x86/boot/bzImage and modules (modules.order) are used"
	if forRun {
		help += "; twice: an A/B run of two kernels, rounds alternating between them"
	}
	fs.StringArrayVar(&f.kernels, "kernel", nil, help)
	fs.StringArrayVar(&f.modules, "modules", nil, "the kernel's modules: a make modules_install INSTALL_MOD_PATH= tree or an extracted package, as installed (compressed .ko.xz/.zst/.gz too); once for all kernels, or once per --kernel (default for a built tree: its own)")
	cpusHelp := "vCPUs of the guest (default 1)"
	if forRun {
		cpusHelp = "vCPUs of the guest (default: enough for every CPU the scenario pins)"
	}
	fs.IntVar(&f.cpus, "vm-cpus", 0, cpusHelp)
	fs.IntVar(&f.memoryMB, "vm-memory", vm.DefaultMemoryMB, "guest memory in MiB")
	fs.StringVar(&f.accel, "vm-accel", "auto", "auto (KVM when it boots a guest, else TCG), kvm or tcg")
	fs.StringVar(&f.clock, "vm-clock", vm.ClockAuto, "the guest's clock: virtual (QEMU's icount: time counts the instructions the guest executes, so host load cannot move a figure; TCG only), wall, or auto (virtual under TCG, wall under KVM)")
	fs.BoolVar(&f.pin, "vm-pin", true, "pin each vCPU thread to a host CPU, and QEMU's other threads to the CPUs no vCPU runs on (--vm-pin=false: leave them to the host scheduler)")
	fs.DurationVar(&f.bootTimeout, "boot-timeout", vm.DefaultBootTimeout, "how long the guest may take from QEMU's start to running nsperf")
	if forRun {
		fs.StringVar(&f.turns, "vm-turns", vm.TurnsAuto, "how the two guests of an A/B take their rounds: together (at once, each vCPU thread on a host CPU of its own: virtual time only), alternate (one runs while the other is paused), or auto (together in virtual time when the host has a CPU for each guest, else alternate)")
		fs.DurationVar(&f.deadline, "vm-deadline", 0, "how long the guests may measure in wall time, from the end of their boot, before they are stopped (exit 3, console logs kept); default: from the schedule, 20 wall seconds per second of measuring in virtual time, 4 on the wall clock, plus 5 minutes")
	}
	fs.StringArrayVar(&f.hide, "vm-hide", nil, "a host path (absolute) the guest sees empty, besides "+strings.Join(vm.Hidden, " ")+" and the history database; repeatable")
}

// session is what both run and probe pass to vm.Boot.
func (f *vmFlags) options(stderr io.Writer, ks []vm.Kernel, cpus int) (vm.Options, error) {
	exe, err := os.Executable()
	if err != nil {
		return vm.Options{}, fmt.Errorf("the nsperf binary to run in the guest: %w", err)
	}
	if err := vm.CheckClockFlags(f.clock, f.accel); err != nil {
		return vm.Options{}, usageError{err}
	}
	if f.memoryMB < 0 {
		return vm.Options{}, usageError{fmt.Errorf("--vm-memory %d: want the guest's memory in MiB (0: %d)", f.memoryMB, vm.DefaultMemoryMB)}
	}
	if f.bootTimeout < 0 {
		return vm.Options{}, usageError{fmt.Errorf("--boot-timeout %s: want a positive duration (0: %s)", f.bootTimeout, vm.DefaultBootTimeout)}
	}
	if err := vm.CheckTurns(f.turns, f.clock); err != nil {
		return vm.Options{}, usageError{err}
	}
	hide, err := f.hidden()
	if err != nil {
		return vm.Options{}, usageError{err}
	}
	return vm.Options{Kernels: ks, CPUs: cpus, MemoryMB: f.memoryMB, Accel: f.accel, Clock: f.clock, Pin: f.pin, Turns: f.turns, BootTimeout: f.bootTimeout, Binary: exe, Progress: stderr, Files: map[string]string{}, Hide: hide}, nil
}

// hidden are the paths the guest sees empty besides vm.Hidden: the history database's
// default directory, $NSPERF_DB's file when it is one, and every --vm-hide.
func (f *vmFlags) hidden() ([]string, error) {
	hide := []string{filepath.Dir(history.DefaultPath())}
	if db := os.Getenv("NSPERF_DB"); db != "" && !strings.Contains(db, "://") {
		if abs, err := filepath.Abs(db); err == nil {
			hide = append(hide, abs, abs+"-wal", abs+"-journal") // the file, not its directory: that may be anything
		}
	}
	for _, p := range f.hide {
		if !filepath.IsAbs(p) || strings.ContainsAny(p, "\x00\n") {
			return nil, fmt.Errorf("--vm-hide %q: give an absolute path", p)
		}
		hide = append(hide, filepath.Clean(p))
	}
	return hide, nil
}

// probeInVM probes the kernel of --kernel in a guest (kernels.Probe) and prints the guest's
// report, and for people how the guest ran.
func probeInVM(ctx context.Context, c *cobra.Command, vf vmFlags, format string) error {
	o, err := vf.options(c.ErrOrStderr(), nil, vf.cpus)
	if err != nil {
		return err
	}
	out, err := kernels.Probe(ctx, kernels.Request{Kernels: vf.kernels, Modules: vf.modules}, o, format)
	c.OutOrStdout().Write(out.Stdout)
	if f, ferr := render.Lookup(format, render.Machine); out.Exited && ferr == nil && f.Readable { // a line for people, not for programs
		fmt.Fprintf(c.OutOrStdout(), "probed in QEMU %s with %s, %d vCPU; kernel image %s (sha256 %.12s); modules loaded: %s\n",
			out.Info.QEMU, strings.ToUpper(out.Info.Accel), out.Info.CPUs, out.Kernel.Image.Path, out.Kernel.Image.SHA256, orNone(strings.Join(out.Info.Loaded, " ")))
	}
	return err
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
