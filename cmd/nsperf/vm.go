package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/compare"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/runner"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo"
	"github.com/nsperf/nsperf/vm"
)

// vmFlags are the flags of a run or probe on a kernel under test.
type vmFlags struct {
	kernels, modules []string
	cpus, memoryMB   int
	accel            string
	bootTimeout      time.Duration
	gate             string // hidden: the guest side of an A/B run
}

func (f *vmFlags) add(fs *pflag.FlagSet, forRun bool) {
	help := "boot this kernel image (arch/x86/boot/bzImage) in QEMU over the host's root and run there"
	if forRun {
		help += "; twice: an A/B run of two kernels, rounds alternating between them"
	}
	fs.StringArrayVar(&f.kernels, "kernel", nil, help)
	fs.StringArrayVar(&f.modules, "modules", nil, "the kernel's modules: a make modules_install INSTALL_MOD_PATH= tree or an extracted package (once for all kernels, or once per --kernel)")
	cpusHelp := "vCPUs of the guest (default 1)"
	if forRun {
		cpusHelp = "vCPUs of the guest (default: enough for every CPU the scenario pins)"
	}
	fs.IntVar(&f.cpus, "vm-cpus", 0, cpusHelp)
	fs.IntVar(&f.memoryMB, "vm-memory", vm.DefaultMemoryMB, "guest memory in MiB")
	fs.StringVar(&f.accel, "vm-accel", "auto", "auto (KVM when it boots a guest, else TCG), kvm or tcg")
	fs.DurationVar(&f.bootTimeout, "boot-timeout", vm.DefaultBootTimeout, "how long the guest may take from QEMU's start to running nsperf")
	fs.StringVar(&f.gate, "vm-gate", "", "")
	_ = fs.MarkHidden("vm-gate")
}

// kernels reads every --kernel image and pairs it with its modules and label.
func (f *vmFlags) kernelList(labels []string) ([]vm.Kernel, error) {
	if len(f.modules) > 1 && len(f.modules) != len(f.kernels) {
		return nil, usageError{fmt.Errorf("--modules given %d times for %d --kernel: give it once for all or once per kernel", len(f.modules), len(f.kernels))}
	}
	if len(labels) > 0 && len(labels) != len(f.kernels) {
		return nil, usageError{fmt.Errorf("--label given %d times for %d --kernel: give one per kernel (default: each kernel's release)", len(labels), len(f.kernels))}
	}
	var ks []vm.Kernel
	for i, path := range f.kernels {
		img, err := vm.ReadImage(path)
		if err != nil {
			return nil, usageError{err}
		}
		k := vm.Kernel{Image: img, Label: img.Release}
		switch len(f.modules) {
		case 1:
			k.Modules = f.modules[0]
		case len(f.kernels):
			k.Modules = f.modules[i]
		}
		if len(labels) > 0 {
			k.Label = labels[i]
		}
		if k.Modules != "" {
			if _, err := vm.FindTree(k.Modules, img.Release); err != nil {
				return nil, usageError{err}
			}
		}
		ks = append(ks, k)
	}
	if len(ks) == 2 && ks[0].Label == ks[1].Label {
		ks[0].Label += " (A)"
		ks[1].Label += " (B)"
	}
	return ks, nil
}

// session is what both run and probe pass to vm.Boot.
func (f *vmFlags) options(c *cobra.Command, ks []vm.Kernel, cpus int) (vm.Options, error) {
	exe, err := os.Executable()
	if err != nil {
		return vm.Options{}, fmt.Errorf("the nsperf binary to run in the guest: %w", err)
	}
	return vm.Options{Kernels: ks, CPUs: cpus, MemoryMB: f.memoryMB, Accel: f.accel, BootTimeout: f.bootTimeout, Binary: exe, Progress: c.ErrOrStderr(), Files: map[string]string{}}, nil
}

// guestExit is a guest command's exit status, passed through as nsperf's own.
type guestExit struct {
	code int
	err  error
}

func (e guestExit) Error() string { return e.err.Error() }
func (e guestExit) Unwrap() error { return e.err }

// forwardedRunFlags are the run flags the guest's nsperf gets as they were given.
var forwardedRunFlags = []string{"runs", "max-runs", "duration", "omit", "alpha", "min-change", "cv-limit", "aa"}

// runInVM runs the scenario in a guest on each --kernel: one kernel is a run like any other,
// measured in the guest; two are an A/B run whose rounds alternate between the kernels. The
// result is written on the host (its file, with the guests' console logs next to it when a
// guest failed), and returned for the table, JUnit and the history.
func runInVM(ctx context.Context, c *cobra.Command, arg string, s *scenarios.Scenario, vf vmFlags, labels []string, opt runner.Options) (*results.Result, error) {
	start := time.Now()
	// Console logs of guests that left no result are named after the run's start.
	noResultID := "vm-" + start.Format("20060102-150405")
	if len(vf.kernels) > 2 {
		return nil, usageError{fmt.Errorf("--kernel given %d times: an A/B run compares two kernels", len(vf.kernels))}
	}
	for _, refused := range []string{"keep", "ovsdb"} {
		if c.Flags().Changed(refused) {
			return nil, usageError{fmt.Errorf("--%s cannot be used with --kernel: the guest is private to the run", refused)}
		}
	}
	ks, err := vf.kernelList(labels)
	if err != nil {
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
	guestScenario := arg
	if st, err := os.Stat(arg); err == nil && st.Mode().IsRegular() {
		o.Files["scenario.yaml"] = arg
		guestScenario = vm.GuestDir + "/scenario.yaml"
	}
	var forwarded []string
	for _, name := range forwardedRunFlags {
		if f := c.Flags().Lookup(name); f != nil && f.Changed {
			forwarded = append(forwarded, "--"+name+"="+f.Value.String())
		}
	}
	o.Args = func(i int) []string {
		a := append([]string{"run", guestScenario, "--out", vm.GuestDir + "/result.json", "--no-history", "--in-guest", "--label", ks[i].Label}, forwarded...)
		if len(ks) > 1 {
			a = append(a, "--vm-gate", vm.GuestDir)
		}
		return a
	}
	// One measuring run at a time on this machine, guests included: a guest's vCPUs share
	// the host's CPUs with whatever else measures.
	lock, busy, err := topo.LockMeasuring(ctx, s.Name, opt.Concurrent, c.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	session, err := vm.Boot(ctx, o)
	var bootErr *vm.BootError
	if errors.As(err, &bootErr) {
		for name, console := range bootErr.Consoles {
			keepConsole(c, runner.OutPath(opt, s, noResultID), name, console)
		}
	}
	if err != nil {
		return nil, err
	}
	defer session.Close()
	booted := time.Since(start)
	var turns []results.Turn
	if len(ks) > 1 {
		turns, err = session.Alternate(ctx)
		if err != nil {
			return nil, err
		}
	}
	outcomes := session.Wait(ctx)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted; the guests were stopped and their files removed: %w", ctx.Err())
	}
	var rs []*results.Result
	var errs []error
	code := 0
	for i, out := range outcomes {
		r, err := guestResult(out, arg, booted)
		if out.ExitCode != 0 && code == 0 {
			code = out.ExitCode
		}
		if failed := out.Err != nil || out.ExitCode != 0 || r == nil; failed && len(out.Console) > 0 {
			id := noResultID
			if r != nil {
				id = r.RunID
			}
			keepConsole(c, runner.OutPath(opt, s, id), string(rune('A'+i)), out.Console)
		}
		switch {
		case out.Err != nil:
			errs = append(errs, out.Err)
		case r == nil && err != nil:
			errs = append(errs, fmt.Errorf("vm %c: nsperf in the guest exited %d without a result: %w", 'A'+i, out.ExitCode, err))
		}
		rs = append(rs, r)
	}
	if len(errs) > 0 || slices.Contains(rs, nil) {
		err := errors.Join(errs...)
		if err == nil {
			err = errors.New("a guest left no result")
		}
		if code != 0 {
			return nil, guestExit{code, err}
		}
		return nil, err
	}
	if busy != "" {
		for _, r := range rs {
			r.Settings.Concurrent = busy
			r.Warnings = append(r.Warnings, "measured while another nsperf run was measuring on this host ("+busy+"; --concurrent): both runs' figures may be skewed")
		}
	}
	r := rs[0]
	if len(rs) == 2 {
		if r, err = compare.Kernels(rs[0], rs[1], string(topo.NewRunID()), turns); err != nil {
			return nil, err
		}
	}
	if opt.Out != "-" {
		if err := results.WriteFile(runner.OutPath(opt, s, r.RunID), r); err != nil {
			return r, errors.Join(runner.ErrNotStored, err)
		}
	}
	if code != 0 {
		return r, guestExit{code, fmt.Errorf("nsperf in the guest exited %d", code)}
	}
	return r, nil
}

// guestResult reads a guest's result and records where it was measured.
func guestResult(out vm.Outcome, scenarioArg string, booted time.Duration) (*results.Result, error) {
	if len(out.Result) == 0 {
		return nil, errors.New("the guest wrote no result.json")
	}
	r, _, err := results.Parse("the guest's result.json", out.Result)
	if err != nil {
		return nil, err
	}
	r.Scenario.File = scenarioArg
	info := out.Info
	if r.FirstSampleSeconds > 0 {
		info.FirstSampleSeconds = booted.Seconds() + r.FirstSampleSeconds
	}
	r.Environment.VM = &info
	if info.Accel == vm.AccelTCG {
		r.Warnings = append(r.Warnings, "measured in a QEMU guest with TCG, an emulated CPU: compare these figures only with runs under the same emulation (kernel A against kernel B), never with real hardware")
	}
	if info.Warning != "" {
		r.Warnings = append(r.Warnings, "vm: "+info.Warning)
	}
	return r, nil
}

// keepConsole writes a failed guest's console log next to its result (RESULT.A.console.log;
// with --out -, next to the default result path) and says where.
func keepConsole(c *cobra.Command, result, guest string, console []byte) {
	if result == "-" || result == "" {
		return
	}
	path := result + "." + guest + ".console.log"
	if err := writeFileIn(path, console); err != nil {
		fmt.Fprintf(c.ErrOrStderr(), "vm %s: the console log could not be kept: %v\n", guest, err)
		return
	}
	fmt.Fprintf(c.ErrOrStderr(), "vm %s: console log: %s\n", guest, path)
}

// writeFileIn writes a file, creating its directory.
func writeFileIn(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// probeInVM probes the kernel of --kernel in a guest, with every module the probe looks at
// loaded when --modules has it, and prints the guest's report.
func probeInVM(ctx context.Context, c *cobra.Command, vf vmFlags, format string) error {
	if len(vf.kernels) > 1 {
		return usageError{errors.New("probe takes one --kernel")}
	}
	ks, err := vf.kernelList(nil)
	if err != nil {
		return err
	}
	cpus := max(vf.cpus, 1)
	o, err := vf.options(c, ks, cpus)
	if err != nil {
		return err
	}
	o.Optional = vm.ProbeNeeds
	o.Args = func(int) []string { return []string{"probe", "--format", format} }
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
	if format == "text" {
		fmt.Fprintf(c.OutOrStdout(), "probed in QEMU %s with %s, %d vCPU; kernel image %s (sha256 %.12s); modules loaded: %s\n",
			out.Info.QEMU, strings.ToUpper(out.Info.Accel), out.Info.CPUs, out.Kernel.Image.Path, out.Kernel.Image.SHA256, orNone(strings.Join(out.Info.Loaded, " ")))
	}
	if out.ExitCode != 0 {
		return guestExit{out.ExitCode, fmt.Errorf("nsperf probe in the guest exited %d", out.ExitCode)}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
