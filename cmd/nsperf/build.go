package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/nsperf/nsperf/kbuild"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/scenarios"
)

// patchFlags name a patch series and the base it applies to (build, run --patch).
type patchFlags struct {
	patches []string
	source  string
	config  string
	fuzz    int
}

func (f *patchFlags) add(fs *pflag.FlagSet, forRun bool) {
	help := "a patch to build: an mbox of one or many mails (b4 am, a list archive), git format-patch output or a unified diff; repeatable, applied in the order given"
	if forRun {
		help += "; the run is then the A/B of the base (label base) against the patched kernel (label patched) in QEMU"
	}
	fs.StringArrayVar(&f.patches, "patch", nil, help)
	fs.StringVar(&f.source, "source", kbuild.DebianSource, "the base kernel: "+kbuild.DebianSource+" (Debian's linux-source-6.12 with its image and headers, fetched once into the cache), a kernel source tree (git: its tracked files) or a source tarball; a tree or tarball is built whole")
	fs.StringVar(&f.config, "config", "", "build whole kernels with this config: "+kbuild.ConfigMinimal+" (make tinyconfig, the fragment nsperf kconfig prints for the shipped scenarios and what a guest's userland needs, make olddefconfig) or a .config file (completed by olddefconfig); default: modules only where the base's config builds every touched file as a module, else "+kbuild.ConfigMinimal)
	fs.IntVar(&f.fuzz, "fuzz", 0, "accept hunks whose context misses up to N lines at each end in the source (patch -F N); how each hunk applied is recorded")
}

// request is the build these flags ask for; the minimal config of a whole kernel serves ss
// (none: every shipped scenario).
func (f *patchFlags) request(ss []*scenarios.Scenario, progress io.Writer) kbuild.BuildRequest {
	return kbuild.BuildRequest{Patches: f.patches, Source: f.source, Config: f.config, Scenarios: ss, Fuzz: f.fuzz, Progress: progress}
}

// buildCmd builds a patch series' base and patched kernels and prints them as --kernel and
// --modules pairs for run.
func buildCmd() *cobra.Command {
	var f patchFlags
	var names []string
	c := &cobra.Command{
		Use:   "build --patch FILE... [--source debian:6.12|DIR|TARBALL] [--config minimal|FILE] [--scenario S]... [--fuzz N]",
		Short: "Build the base and the patched kernel of a patch series (checked first, cached) and print them as --kernel/--modules pairs",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := requireRoot(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			var ss []*scenarios.Scenario
			for _, n := range names {
				s, err := loadScenario(n)
				if err != nil {
					return err
				}
				ss = append(ss, s)
			}
			m, err := kbuild.Build(ctx, f.request(ss, c.ErrOrStderr()))
			if err != nil {
				return err
			}
			m.Describe(c.ErrOrStderr())
			for _, k := range m.Kernels {
				if k.Modules == "" {
					fmt.Fprintf(c.OutOrStdout(), "%s: --kernel %s\n", k.Label, k.Image)
					continue
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: --kernel %s --modules %s\n", k.Label, k.Image, k.Modules)
			}
			fmt.Fprintf(c.OutOrStdout(), "manifest: %s/manifest.json\n", m.Dir)
			return nil
		},
	}
	f.add(c.Flags(), false)
	c.Flags().StringArrayVar(&names, "scenario", nil, "a whole kernel built with the minimal config runs these scenarios (a file or a shipped name; repeatable; default: every shipped one); run --patch builds for its own")
	return c
}
