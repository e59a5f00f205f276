package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/nsperf/nsperf/coverage"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/kbuild"
	"github.com/nsperf/nsperf/machine/host"
	"github.com/nsperf/nsperf/runner/kernels"
	"github.com/nsperf/nsperf/vm"
)

// coverageCmd measures which kernel functions each scenario's traffic runs through: the map
// build and reproduce choose scenarios by (coverage/map.json).
func coverageCmd() *cobra.Command {
	var out string
	var update bool
	var vf vmFlags
	c := &cobra.Command{
		Use:   "coverage [SCENARIO...]",
		Short: "Measure which kernel functions each scenario's traffic runs through, in a guest on the default kernel: the map that chooses scenarios for a patch",
		Long: "coverage runs each scenario (default: every shipped one) once, one 1 s run per state and workload, in a guest on Debian's 6.12 " +
			"kernel with ftrace's function tracer on every function the kernel's source defines under " + fmt.Sprint(coverage.SourceRoots) +
			", and writes the map of the functions that ran, by file, as JSON (make coverage-map writes coverage/map.json, which ships with nsperf). " +
			"The kernel is always that one, whose source the map's functions are of: --kernel and --modules are refused. " +
			"Every argument is checked before the kernel is fetched.",
		RunE: func(c *cobra.Command, args []string) error {
			job, base, err := planCoverage(c.Flags(), c.ErrOrStderr(), args, out, update, vf)
			if err != nil {
				return err
			}
			if err := requireRoot(); err != nil {
				return err
			}
			ctx, stop := signalled()
			defer stop()
			m, err := job.Measure(ctx)
			if err != nil {
				return err
			}
			if base != nil {
				if err := base.Merge(m); err != nil {
					return fmt.Errorf("--update: %s was %w", out, err)
				}
				m = base
			}
			data, err := m.Encode()
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = c.OutOrStdout().Write(data)
				return err
			}
			// Written whole or not at all: the map ships with nsperf.
			if err := safefile.Write(out, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(c.ErrOrStderr(), "coverage: wrote %s (%d scenarios)\n", out, len(m.Scenarios))
			return nil
		},
	}
	c.Flags().StringVar(&out, "out", "", "write the map to FILE (default: stdout)")
	c.Flags().BoolVar(&update, "update", false, "merge the scenarios named into the map already in --out FILE (measured on the same kernel and source), replacing theirs")
	vf.add(c.Flags(), false)
	c.Flags().Lookup("vm-cpus").Usage = "vCPUs of the guest (default: enough for every CPU the scenario pins)"
	c.Flags().Lookup("vm-accel").Usage = "auto (TCG: in virtual time the trace's cost cannot time a guest's waits out), kvm or tcg"
	for _, name := range refusedCoverageFlags {
		c.Flags().MarkHidden(name) // taken only to be refused with a sentence: see planCoverage
	}
	return c
}

// refusedCoverageFlags are the guest flags coverage shares with run and probe but cannot
// honour: the kernel traced is the one whose source the map indexes.
var refusedCoverageFlags = []string{"kernel", "modules"}

// planCoverage checks every argument and flag before anything is fetched, so that a typo
// costs nothing: refused flags, --update's map (returned: the measurements merge into it),
// --out, each scenario (it exists, parses and takes the tracing schedule) and the guest's
// flags.
func planCoverage(flags *pflag.FlagSet, stderr io.Writer, args []string, out string, update bool, vf vmFlags) (job kernels.CoverageRun, base *coverage.Map, err error) {
	for _, name := range refusedCoverageFlags {
		if flags.Changed(name) {
			return job, nil, usageError{fmt.Errorf("--%s: coverage traces only Debian's 6.12 kernel (%s, fetched into the kernel cache), whose source its map's functions are of; it takes no other kernel or modules", name, kbuild.DebianSource)}
		}
	}
	switch {
	case update && (out == "" || out == "-" || len(args) == 0):
		return job, nil, usageError{fmt.Errorf("--update merges the scenarios named into the map of --out FILE: give both")}
	case update:
		if base, err = coverage.ReadMapFile(out); err != nil {
			return job, nil, usageError{fmt.Errorf("--update: %w", err)}
		}
	}
	if out != "" && out != "-" {
		if err := safefile.CheckWritable(out); err != nil {
			return job, nil, usageError{fmt.Errorf("--out: %w", err)}
		}
	}
	if job, err = kernels.CoverageOf(args, vf.cpus); err != nil {
		return job, nil, err
	}
	if vf.accel == "" || vf.accel == "auto" {
		vf.accel = vm.AccelTCG // virtual time: the trace's cost cannot time a guest's waits out
	}
	job.Machine, job.Progress = host.Machine{}, stderr
	job.VM, err = vf.options(stderr, nil, vf.cpus)
	return job, base, err
}
