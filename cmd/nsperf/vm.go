package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/render"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/scenarios"
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
		fs.DurationVar(&f.deadline, "vm-deadline", 0, "how long the guests may measure in wall time, from the end of their boot, before they are stopped (exit 3, console logs kept); default: from the schedule, 20 wall seconds per second of measuring in virtual time, 4 on the wall clock, plus 5 minutes")
	}
	fs.StringArrayVar(&f.hide, "vm-hide", nil, "a host path (absolute) the guest sees empty, besides "+strings.Join(vm.Hidden, " ")+" and the history database; repeatable")
}

// session is what both run and probe pass to vm.Boot.
func (f *vmFlags) options(c *cobra.Command, ks []vm.Kernel, cpus int) (vm.Options, error) {
	exe, err := os.Executable()
	if err != nil {
		return vm.Options{}, fmt.Errorf("the nsperf binary to run in the guest: %w", err)
	}
	if err := vm.CheckClockFlags(f.clock, f.accel); err != nil {
		return vm.Options{}, usageError{err}
	}
	hide, err := f.hidden()
	if err != nil {
		return vm.Options{}, usageError{err}
	}
	return vm.Options{Kernels: ks, CPUs: cpus, MemoryMB: f.memoryMB, Accel: f.accel, Clock: f.clock, Pin: f.pin, BootTimeout: f.bootTimeout, Binary: exe, Progress: c.ErrOrStderr(), Files: map[string]string{}, Hide: hide}, nil
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

// runInVM runs the scenario in a guest on each --kernel (kernels.Run): one kernel is a run
// like any other, two an A/B run.
func runInVM(ctx context.Context, c *cobra.Command, arg string, s *scenarios.Scenario, rf *runFlags) (*results.Result, error) {
	vf := rf.vf
	if len(vf.kernels) > 2 {
		return nil, usageError{fmt.Errorf("--kernel given %d times: an A/B run compares two kernels", len(vf.kernels))}
	}
	for _, refused := range []string{"keep", "ovsdb"} {
		if c.Flags().Changed(refused) {
			return nil, usageError{fmt.Errorf("--%s cannot be used with --kernel: the guest is private to the run", refused)}
		}
	}
	ks, cleanup, err := kernels.Prepare(kernels.Request{Kernels: vf.kernels, Modules: vf.modules, Labels: rf.labels})
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if err := kernels.CheckConfigs(vf.kernels, ks, s, c.ErrOrStderr()); err != nil {
		return nil, err
	}
	cpus := vf.cpus
	if cpus == 0 {
		cpus = vm.PinnedCPUs(s)
	}
	o, err := vf.options(c, ks, cpus)
	if err != nil {
		return nil, err
	}
	o.Required, o.Optional = vm.Needs(s)
	k := kernels.Options{VM: o, Scenario: arg, Deadline: vf.deadline, Baseline: vf.baseline, Builds: rf.builds,
		Run: kernels.RunSettings{Overrides: rf.ov, Policy: rf.opt.Policy, MinChange: rf.opt.MinChange, IdleLimit: rf.opt.Idle.Limit}}
	if st, err := os.Stat(arg); err == nil && st.Mode().IsRegular() {
		k.ScenarioFile = true
	}
	return kernels.Run(ctx, s, rf.opt, k)
}

// probeInVM probes the kernel of --kernel in a guest, with every module the probe looks at
// loaded when --modules has it, and prints the guest's report.
func probeInVM(ctx context.Context, c *cobra.Command, vf vmFlags, format string) error {
	if len(vf.kernels) > 1 {
		return usageError{errors.New("probe takes one --kernel")}
	}
	if err := vm.CheckClockFlags(vf.clock, vf.accel); err != nil {
		return usageError{err}
	}
	ks, cleanup, err := kernels.Prepare(kernels.Request{Kernels: vf.kernels, Modules: vf.modules})
	if err != nil {
		return err
	}
	defer cleanup()
	cpus := max(vf.cpus, 1)
	o, err := vf.options(c, ks, cpus)
	if err != nil {
		return err
	}
	o.Optional = vm.ProbeNeeds
	o = kernels.ProbeOptions(o, format)
	session, err := vm.Boot(ctx, o)
	if err != nil {
		return err
	}
	defer session.Close()
	out := session.Wait(ctx)[0]
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted; the guest was stopped and its files removed: %w", ctx.Err())
	}
	c.OutOrStdout().Write(out.Stdout)
	if out.Err != nil {
		return out.Err
	}
	if f, err := render.Lookup(format, render.Machine); err == nil && f.Readable { // a line for people, not for programs
		fmt.Fprintf(c.OutOrStdout(), "probed in QEMU %s with %s, %d vCPU; kernel image %s (sha256 %.12s); modules loaded: %s\n",
			out.Info.QEMU, strings.ToUpper(out.Info.Accel), out.Info.CPUs, out.Kernel.Image.Path, out.Kernel.Image.SHA256, orNone(strings.Join(out.Info.Loaded, " ")))
	}
	if out.ExitCode != 0 {
		return kernels.ExitError{Code: out.ExitCode, Err: fmt.Errorf("nsperf probe in the guest exited %d", out.ExitCode)}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
