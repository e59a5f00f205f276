package reproduce

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/internal/inputerr"
	"github.com/nsperf/nsperf/patches"
	"github.com/nsperf/nsperf/scenarios"
)

// Message is a message whose claims can be measured here (Read): the file as it was read
// once, its claims and its series.
type Message struct {
	File   string
	Data   []byte
	Claims *claims.Report
	Series []patches.Patch
}

// Read reads a message's claims and its series, and says when nothing of it can be measured
// here (capability.ErrMissing, exit 4): a diff that cannot be read, a series of hardware
// drivers only, no claim, claims only of what nsperf does not record, no diff and no setting
// it changes. Where it refuses a message it read, its claims are written to w first. A
// message that cannot be read at all is an inputerr.Error.
func Read(file string, data []byte, w io.Writer) (*Message, error) {
	rep, err := claims.Read(file, data)
	if err != nil {
		return nil, inputerr.Error{Err: err}
	}
	// A message without a diff is a series of mails without one, not an error; a diff that
	// cannot be read does not hide the claims, but nothing of it can be built.
	series, err := patches.ReadMessages(file, data)
	if err != nil {
		return nil, inputerr.Error{Err: err}
	}
	if why := notMeasurable(rep, series); why != "" {
		rep.Text(w)
		return nil, capability.Missing(file + why)
	}
	return &Message{File: file, Data: data, Claims: rep, Series: series}, nil
}

// notMeasurable says why nothing of a message can be measured here, after its file's name
// (": nothing in it ...", " cannot be reproduced here: ..."); "" when something can.
func notMeasurable(rep *claims.Report, series []patches.Patch) string {
	const here = " cannot be reproduced here: "
	for _, p := range series {
		if p.DiffError != "" {
			return here + "its diff cannot be read: " + p.DiffError
		}
	}
	touched := patches.Touched(series)
	if drivers, all := HardwareDrivers(touched); all {
		return here + HardwareReason(drivers)
	}
	if len(rep.Claims) == 0 {
		return ": nothing in it can be reproduced here: it makes no claim with numbers"
	}
	var quantities []string
	for _, cl := range rep.Claims {
		if claims.Measurable(cl) {
			quantities = nil
			break
		}
		quantities = append(quantities, cl.Quantity)
	}
	why := ""
	switch {
	case len(quantities) > 0:
		why = fmt.Sprintf("nsperf measures none of what it claims (%s)", strings.Join(slices.Compact(quantities), ", "))
	case len(touched) > 0 || len(rep.Toggles) > 0:
		return ""
	case HasDiffstat(series):
		why = "it lists changed files (a diffstat) but carries no diff: give the patches themselves (b4 am, or the series' mbox)"
	default:
		// Without a diff, only the settings a message shows are a change nsperf can make:
		// measuring a scenario's own states would set its claims beside something else.
		why = "it carries no diff and shows no setting it changes (ip link set, ethtool -K)"
	}
	if lacks := Lacks(rep); lacks != "" {
		why += "; " + lacks
	}
	return here + why
}

// Touched are the source files the message's series changes.
func (m *Message) Touched() []string { return patches.Touched(m.Series) }

// SideRecords are the side metrics of a TCP connection the claims give that a run records
// only when asked (scenarios.SideRecords: a capture of the connection's packets).
func (m *Message) SideRecords() []string {
	var out []string
	for _, c := range m.Claims.Claims {
		if slices.Contains(scenarios.SideRecords(), c.Quantity) {
			out = append(out, c.Quantity)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Explain is what a failed run of the message's plan means: an input its patch's build
// cannot use (a file its base lacks, a hunk that does not apply) is a patch that cannot be
// reproduced here, said with the tree it was posted for and the shipped scenario (name) that
// models its effect; any other error is the run's.
func (m *Message) Explain(err error, name string) error {
	var input inputerr.Error
	if !errors.As(err, &input) || len(m.Touched()) == 0 {
		return err
	}
	return capability.Missing(fmt.Sprintf("%s cannot be reproduced here: %v\n%sthe shipped scenario %s models the claim's effect: nsperf run %s", m.File, input.Err, BaseHint(m.Series), name, name))
}

// Scenario names the scenario that measures the message, and why: given, else drafted from
// the claims (saved beside the result, *out, which names it; a default *out is set for it),
// else chosen among the shipped (Choose).
func (m *Message) Scenario(given string, out *string) (name, why string, err error) {
	if given != "" {
		return given, "--scenario", nil
	}
	shipped, err := scenarios.Shipped()
	if err != nil {
		return "", "", err
	}
	if why = DraftFor(m.Claims, shipped); why != "" && len(m.Touched()) == 0 {
		if *out == "" {
			*out = filepath.Join("nsperf-results", "drafted-reproduce-"+time.Now().Format("20060102-150405")+".json")
		}
		name, err = m.saveDraft(strings.TrimSuffix(*out, ".json") + ".yaml")
		return name, why, err
	}
	name, why, err = Choose(m.Claims, m.Series, shipped)
	switch {
	case errors.Is(err, ErrCodeNotRun):
		return "", "", capability.Missing(fmt.Sprintf("%s cannot be reproduced with a shipped scenario: %v", m.File, err))
	case err != nil:
		return "", "", inputerr.Error{Err: err}
	}
	return name, why, nil
}

// WriteDraft writes the scenario drafted from the message's claims to out, named after out's
// file, checked to load, and says so on w; an existing file is not overwritten.
func (m *Message) WriteDraft(out string, w io.Writer) error {
	draft, err := Draft(m.Claims, m.File, out)
	if err != nil {
		return err
	}
	f, err := createNew(out)
	if err != nil {
		return inputerr.Error{Err: fmt.Errorf("--write-scenario: %w", err)}
	}
	if err := writeClose(f, draft); err != nil {
		return err
	}
	fmt.Fprintf(w, "reproduce: wrote %s, a scenario drafted from %d claim(s) of %s; edit it, then: nsperf reproduce %s --scenario %s\n", out, len(m.Claims.Claims), m.File, m.File, out)
	return nil
}

// saveDraft writes the scenario drafted from the message's claims to path (a new file, its
// directory made) for the run to measure, and returns path.
func (m *Message) saveDraft(path string) (string, error) {
	draft, err := Draft(m.Claims, m.File, path)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	f, err := createNew(path)
	if err != nil {
		return "", fmt.Errorf("the drafted scenario: %w", err)
	}
	return path, writeClose(f, draft)
}

// createNew creates a file at path that must not exist: nsperf never overwrites a file
// (O_EXCL, as `set -o noclobber`).
func createNew(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w (nsperf does not overwrite a file)", err)
	}
	return f, nil
}

// writeClose writes data to f and closes it.
func writeClose(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return errors.Join(err, f.Close())
}
