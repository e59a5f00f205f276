package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/kbuild"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
)

// reproduceFlags are reproduce's flags.
type reproduceFlags struct {
	scenario, runs, out, source string
	writeScenario               string
	duration, omit              time.Duration
	fuzz                        int
}

// reproduceCmd reads a message's claims, measures them (the patch's A/B in guests, or the
// toggle's states here) and sets each claim beside its measurement.
func reproduceCmd() *cobra.Command {
	var f reproduceFlags
	c := &cobra.Command{
		Use:   "reproduce FILE [-- RUN-FLAGS...]",
		Short: "Reproduce the benchmark claims of a commit message or patch: measure them (a patch's base against patched in QEMU, or a toggle's states) and set each claim beside its measurement",
		Args: func(c *cobra.Command, args []string) error {
			if dash := c.ArgsLenAtDash(); dash > 1 || (dash < 0 && len(args) != 1) || len(args) == 0 {
				return usageError{errors.New("give one FILE, and run's own flags after --")}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return f.reproduce(c, args[0], args[1:])
		},
	}
	fs := c.Flags()
	fs.StringVar(&f.scenario, "scenario", "", "the scenario to measure with (default: the shipped scenario that matches the patch's files, the claim's tool and its subject)")
	fs.StringVar(&f.runs, "runs", "5", "runs per state (as run's --runs)")
	fs.DurationVar(&f.duration, "duration", 2*time.Second, "measured time of each run: short, as a patch's A/B runs in virtual time")
	fs.DurationVar(&f.omit, "omit", 0, "time at the start of each run left out")
	fs.StringVar(&f.out, "out", "", "result file (default: nsperf-results/SCENARIO-reproduce-TIME.json)")
	fs.StringVar(&f.source, "source", kbuild.DebianSource, "the base kernel a patch is built on (as build's --source)")
	fs.IntVar(&f.fuzz, "fuzz", 0, "accept hunks whose context misses up to N lines at each end (as build's --fuzz)")
	fs.StringVar(&f.writeScenario, "write-scenario", "", "write a scenario drafted from the claims to this file (their tool and options, 2 s runs for virtual time, the toggles as states before and after) for you to edit, and stop; then: nsperf reproduce FILE --scenario OUT")
	return c
}

// reproduce measures the claims of file; runFlags are passed to the run as they are (--db,
// --junit, --vm-accel ...).
func (f *reproduceFlags) reproduce(c *cobra.Command, file string, runFlags []string) error {
	data, err := readBounded(file)
	if err != nil {
		return err
	}
	rep, err := claims.Read(file, data)
	if err != nil {
		return usageError{err}
	}
	series, err := patches.Read(file, data) // a message without a diff is a series of mails without one, not an error
	if err != nil {
		return usageError{err}
	}
	touched := patches.Touched(series)
	if len(rep.Claims) == 0 {
		rep.Text(c.ErrOrStderr())
		return capability.Missing(file + ": nothing in it can be reproduced here: it makes no claim with numbers")
	}
	if f.writeScenario != "" {
		return writeDraft(c, rep, file, f.writeScenario)
	}
	name, why, err := f.chooseScenario(rep, series, touched)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.ErrOrStderr(), "reproduce: %d claim(s); scenario %s (%s)\n", len(rep.Claims), name, why)
	out := f.out
	if out == "" {
		out = filepath.Join("nsperf-results", name+"-reproduce-"+time.Now().Format("20060102-150405")+".json")
	}
	args := []string{name, "--runs", f.runs, "--duration", f.duration.String(), "--omit", f.omit.String(), "--out", out}
	if len(touched) > 0 {
		args = append(args, "--patch", file, "--source", f.source, "--fuzz", fmt.Sprint(f.fuzz))
	}
	run := runCmd()
	run.SetArgs(append(args, runFlags...))
	run.SetOut(c.ErrOrStderr()) // the run's table is progress here: the claims' table is the output
	run.SetErr(c.ErrOrStderr())
	run.SilenceUsage, run.SilenceErrors = true, true
	runErr := run.Execute()
	var input inputerr.Error
	if errors.As(runErr, &input) && len(touched) > 0 {
		return capability.Missing(fmt.Sprintf("%s cannot be reproduced here: %v\nthe shipped scenario %s models the claim's effect: nsperf run %s", file, input.Err, name, name))
	}
	r, _, err := results.ReadFile(out)
	if err != nil {
		return errors.Join(runErr, err)
	}
	s, err := loadGuestScenario(name, 0)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	r.Reproduction = &results.Reproduction{Source: file, SHA256: hex.EncodeToString(sum[:]), Scenario: name, Why: why, Claims: claims.Match(rep, r, scenarioFacts(s))}
	if err := results.WriteFile(out, r); err != nil {
		return err
	}
	writeReproduction(c.OutOrStdout(), rep, r.Reproduction)
	var layout strings.Builder
	if err := claims.WriteLayout(&layout, rep, r, r.Reproduction.Claims); err == nil && layout.Len() > 0 {
		fmt.Fprintf(c.OutOrStdout(), "measured, in the message's layout:\n%s", layout.String())
	}
	fmt.Fprintf(c.ErrOrStderr(), "result: %s\n", out)
	return reproductionExit(r.Reproduction)
}

// writeDraft writes the scenario drafted from rep's claims to out, named after out's file,
// and checks it loads; an existing file is not overwritten.
func writeDraft(c *cobra.Command, rep *claims.Report, file, out string) error {
	name := strings.TrimSuffix(filepath.Base(out), filepath.Ext(out))
	if !regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`).MatchString(name) {
		name = "drafted"
	}
	var b strings.Builder
	if err := rep.WriteScenario(&b, name); err != nil {
		return err
	}
	if _, err := scenarios.Parse(out, []byte(b.String()), scenarios.Options{}); err != nil {
		return fmt.Errorf("the scenario drafted from %s does not load (a bug of nsperf; the draft follows):\n%w\n%s", file, err, b.String())
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return usageError{fmt.Errorf("--write-scenario: %w (nsperf does not overwrite a file)", err)}
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(c.ErrOrStderr(), "reproduce: wrote %s, a scenario drafted from %d claim(s) of %s; edit it, then: nsperf reproduce %s --scenario %s\n", out, len(rep.Claims), file, file, out)
	return nil
}

// readBounded reads an input file (a message, a patch, a mail): regular and at most
// patches.MaxInputSize bytes, so that /dev/zero, a FIFO or a 10 GB file is refused at once.
func readBounded(file string) ([]byte, error) {
	data, err := safefile.ReadRegular(file, patches.MaxInputSize)
	if err != nil {
		return nil, usageError{fmt.Errorf("%w (give a regular file of at most %s)", err, safefile.Size(patches.MaxInputSize))}
	}
	return data, nil
}

var wordRe = regexp.MustCompile(`[a-z0-9]+`)

// chooseScenario names the scenario to measure with and why: --scenario; else the shipped
// scenarios whose traffic runs through the patch's files (its link kinds' KernelSources), or
// all when there is no diff, ranked by the words their seed reference shares with the
// subject and message, then by the claims' tool.
func (f *reproduceFlags) chooseScenario(rep *claims.Report, series []patches.Patch, touched []string) (string, string, error) {
	if f.scenario != "" {
		return f.scenario, "--scenario", nil
	}
	shipped, err := scenarios.Shipped()
	if err != nil {
		return "", "", err
	}
	var text strings.Builder
	for _, p := range series {
		text.WriteString(strings.ToLower(p.Subject + " " + p.Message + " "))
		for _, t := range touched {
			text.WriteString(strings.ToLower(t) + " ")
		}
	}
	squashed := strings.NewReplacer(" ", "", "_", "", "-", "").Replace(text.String())
	tools := map[string]bool{}
	for _, c := range rep.Claims {
		tools[c.Tool] = true
	}
	best, bestScore, why := "", -1, ""
	for _, s := range shipped {
		score, reasons := 0, []string{}
		if len(touched) > 0 {
			if paths := scenarios.Exercises(s, touched); len(paths) > 0 {
				score += 10
				reasons = append(reasons, "its traffic runs through "+strings.Join(paths, " "))
			}
		}
		ref := strings.TrimSuffix(s.Reference, ".md")
		shared := 0
		for _, w := range wordRe.FindAllString(strings.ToLower(ref), -1) {
			if strings.Contains(squashed, w) {
				shared++
			}
		}
		if shared > 0 {
			score += shared
			reasons = append(reasons, fmt.Sprintf("it reproduces %s, whose name shares %d word(s) with the message", s.Reference, shared))
		}
		for _, w := range s.Workloads {
			if tools[w.Tool()] {
				score++
				reasons = append(reasons, "it runs "+w.Tool()+", the claims' tool")
				break
			}
		}
		if score > bestScore {
			best, bestScore, why = s.Name, score, strings.Join(reasons, "; ")
		}
	}
	if bestScore <= 0 {
		return "", "", usageError{errors.New("no shipped scenario matches the message: give --scenario")}
	}
	return best, why, nil
}

// scenarioFacts are the families and tools of a scenario's workloads and its states that
// turn offloads off.
func scenarioFacts(s *scenarios.Scenario) claims.Facts {
	f := claims.Facts{Families: map[string]string{}, Tools: map[string]string{}, OffloadsOff: map[string]bool{}}
	for _, w := range s.Workloads {
		_, server := w.Sides()
		f.Families[w.Name] = map[string]string{"-4": "IPv4", "-6": "IPv6"}[server.Family()]
		f.Tools[w.Name] = w.Tool()
	}
	for _, st := range s.States {
		f.OffloadsOff[st.Name] = len(st.Offloads) > 0
	}
	return f
}

// writeReproduction sets each claim beside its measurement, in one row.
func writeReproduction(w io.Writer, rep *claims.Report, rp *results.Reproduction) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "claim\tlines\tmetric\tconditions\tclaimed\tstated\tmeasured\tcomparison\toutcome")
	for _, ch := range rp.Claims {
		stated, measured, comparison := "-", "-", "-"
		if ch.StatedChange != nil {
			stated = fmt.Sprintf("%+.1f%%", 100**ch.StatedChange)
		}
		if m := ch.Measured; m != nil {
			measured = fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%] p=%.3g", 100*m.Change, 100*m.ChangeLo, 100*m.ChangeHi, m.P)
			comparison = ch.State + " vs " + ch.Baseline
			if ch.Workload != "" {
				comparison = ch.Workload + " " + comparison
			}
			if ch.Case != "" {
				comparison = "[" + ch.Case + "] " + comparison
			}
		}
		conds := "-"
		if len(ch.Conditions) > 0 {
			var parts []string
			for k, v := range ch.Conditions {
				parts = append(parts, k+"="+v)
			}
			conds = strings.Join(parts, ",")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%+.1f%%\t%s\t%s\t%s\t%s\n", ch.Claim, results.LineRanges(ch.Lines), ch.Metric, conds, 100*ch.ClaimedChange, stated, measured, comparison, ch.Outcome)
	}
	tw.Flush()
	for _, ch := range rp.Claims {
		if ch.Reason != "" {
			fmt.Fprintf(w, "claim %d: %s\n", ch.Claim, ch.Reason)
		}
	}
	if len(rep.Setup) > 0 {
		fmt.Fprintf(w, "the claims were measured with: %s; here: network namespaces on one machine\n", strings.Join(rep.Setup, ", "))
	}
	fmt.Fprintln(w, "magnitudes differ by machine and by clock (a guest's virtual time counts instructions): the direction and the decision are what reproduce")
}

// reproductionExit: 0 every claim reproduced; 1 one contradicted; 5 one undecided.
func reproductionExit(rp *results.Reproduction) error {
	var contradicted, undecided []string
	for _, ch := range rp.Claims {
		switch ch.Outcome {
		case results.Contradicted:
			contradicted = append(contradicted, fmt.Sprint(ch.Claim))
		case results.Undecided:
			undecided = append(undecided, fmt.Sprint(ch.Claim))
		}
	}
	switch {
	case len(contradicted) > 0:
		return expectationError{[]string{"claim(s) " + strings.Join(contradicted, ", ") + " contradicted"}}
	case len(undecided) > 0:
		return codeError{exitUndecided, fmt.Errorf("claim(s) %s undecided", strings.Join(undecided, ", "))}
	}
	return nil
}
