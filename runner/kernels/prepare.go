package kernels

import (
	"fmt"
	"io"

	"github.com/nsperf/nsperf/internal/inputerr"

	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// Request names the kernels under test as the command line gives them.
type Request struct {
	// Kernels are images (bzImage, /boot/vmlinuz-*) or built trees, one or two.
	Kernels []string
	// Modules are module trees: none (a built tree's own), one for all, or one per kernel.
	Modules []string
	// Labels name the kernels in results: none (each kernel's release) or one per kernel.
	Labels []string
}

// Prepare reads every kernel (an image, or a built tree whose modules are installed into a
// temporary directory that cleanup removes) and pairs it with its modules and label. Two
// kernels of one label are told apart as (A) and (B).
func Prepare(req Request) (ks []vm.Kernel, cleanup func(), err error) {
	var releases []func()
	cleanup = func() {
		for _, release := range releases {
			release()
		}
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	if len(req.Modules) > 1 && len(req.Modules) != len(req.Kernels) {
		return nil, cleanup, inputerr.Error{Err: fmt.Errorf("--modules given %d times for %d --kernel: give it once for all or once per kernel", len(req.Modules), len(req.Kernels))}
	}
	if len(req.Labels) > 0 && len(req.Labels) != len(req.Kernels) {
		return nil, cleanup, inputerr.Error{Err: fmt.Errorf("--label given %d times for %d --kernel: give one per kernel (default: each kernel's release)", len(req.Labels), len(req.Kernels))}
	}
	for i, path := range req.Kernels {
		// A built tree's modules are installed here: beside the guests, so that `nsperf
		// cleanup` removes it after a kill -9 of this run.
		tmp, release, err := vm.ScratchDir("modules")
		if err != nil {
			return nil, cleanup, err
		}
		releases = append(releases, release)
		k, err := req.kernel(i, path, tmp)
		if err != nil {
			return nil, cleanup, err
		}
		ks = append(ks, k)
	}
	if len(ks) == 2 && ks[0].Label == ks[1].Label {
		ks[0].Label += " (A)"
		ks[1].Label += " (B)"
	}
	return ks, cleanup, nil
}

// kernel reads kernel i at path, a built tree's modules installed into tmp.
func (req Request) kernel(i int, path, tmp string) (vm.Kernel, error) {
	img, built, err := vm.ReadKernel(path, tmp)
	if err != nil {
		return vm.Kernel{}, inputerr.Error{Err: err}
	}
	k := vm.Kernel{Image: img, Label: img.Release, Modules: built}
	switch len(req.Modules) {
	case 1:
		k.Modules = req.Modules[0]
	case len(req.Kernels):
		k.Modules = req.Modules[i]
	}
	if len(req.Labels) > 0 {
		k.Label = req.Labels[i]
	}
	if k.Modules != "" {
		if _, err := vm.FindTree(k.Modules, img.Release); err != nil {
			return vm.Kernel{}, inputerr.Error{Err: err}
		}
	}
	return k, nil
}

// CheckConfigs holds each kernel's config, where it has one (a built tree's .config, an
// image's config-RELEASE beside it), against what the scenario needs, before anything boots:
// a missing required option ends the run (exit 4), a missing optional one is said on warn.
// paths are the kernels as given, in the order of ks.
func CheckConfigs(paths []string, ks []vm.Kernel, s *scenarios.Scenario, warn io.Writer) error {
	need := vm.Fragment([]*scenarios.Scenario{s}, true)
	for i, k := range ks {
		cfg, ok, err := vm.FindConfig(paths[i], k.Image.Release)
		if err != nil {
			return fmt.Errorf("kernel %s: %w", k.Label, err)
		}
		if !ok {
			fmt.Fprintf(warn, "vm: no config found beside %s (.config of a tree, config-%s of an image): not checked against `nsperf kconfig`\n", paths[i], k.Image.Release)
			continue
		}
		warnings, err := vm.CheckConfig(cfg, need)
		for _, w := range warnings {
			fmt.Fprintf(warn, "warning: kernel %s: %s\n", k.Label, w)
		}
		if err != nil {
			return fmt.Errorf("kernel %s: %w", k.Label, err)
		}
	}
	return nil
}
