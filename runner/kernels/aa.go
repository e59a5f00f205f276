package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nsperf/nsperf/history"
	"github.com/nsperf/nsperf/internal/safefile"
	"github.com/nsperf/nsperf/results"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/vm"
)

// A/As in virtual time: `run SCENARIO --kernel K --kernel K` measures how far two boots of one
// kernel land apart, and later runs of that scenario on that clock decide each series with its
// largest shift over the A/As on record (results.Repeatability, results.SeriesFloors). They
// are kept one file per scenario text, run length and clock, the latest keptAAs.

// AADirEnv names the directory of A/As when set.
const AADirEnv = "NSPERF_AA_DIR"

// AADir is where A/As are kept: $NSPERF_AA_DIR, else beside the history database's default
// (~/.local/share/nsperf/aa).
func AADir() string {
	if d := os.Getenv(AADirEnv); d != "" {
		return d
	}
	return filepath.Join(filepath.Dir(history.DefaultPath()), "aa")
}

// aaFile is the A/A file of the plan's scenario: its name, and a hash of what decides how far
// two boots land apart besides the kernel: the scenario's text, the run length the command
// line set, and the virtual clock's options (the number of runs only narrows the medians).
func (p Plan) aaFile() string {
	dir := p.AADir
	if dir == "" {
		dir = AADir()
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%s\x00%s\x00%s", scenarios.TextSHA256(p.Scenario.Text), p.Overrides.Duration, p.Overrides.Omit, vm.IcountOptions, vm.TCGCPUModel, vm.VirtualRTC)
	// A capture the run was asked for costs every packet: an A/A with it is another instrument.
	if len(p.Overrides.Record)+len(p.Overrides.RecordClaimed) > 0 {
		fmt.Fprintf(h, "\x00%q\x00%q", p.Overrides.Record, p.Overrides.RecordClaimed)
	}
	return filepath.Join(dir, p.Scenario.Name+"-"+hex.EncodeToString(h.Sum(nil))[:16]+".json")
}

// keptAAs is how many A/As of one scenario, run length and clock are kept (the latest): the
// floor is the largest shift over them, so one A/A whose boots happened to land close does not
// set it alone, and an old one goes once enough newer ones are measured.
const keptAAs = 5

// virtualFloor is the policy of a run in virtual time that sets no minimum change: the floor
// of the scenario's A/As on record, else results.VirtualMinChange (saying why, an unreadable
// A/A file included).
func (p Plan) virtualFloor() results.Policy {
	pol := p.Run.Policy
	pol.MinChange, pol.MinChangeFrom = results.VirtualMinChange, results.VirtualDefaultWhy(p.Scenario.Name)
	aas, err := readAAs(p.aaFile())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		pol.MinChangeFrom += fmt.Sprintf(" (the one on record is not usable: %v)", err)
	default:
		if largest, floor, ok := results.LargestFloor(aas); ok {
			latest := aas[len(aas)-1]
			pol.MinChange, pol.Floors, pol.AA = floor, results.SeriesFloors(aas), &latest
			pol.MinChangeFrom = floorsWhy(pol.Floors, largest, len(aas))
		}
	}
	return pol
}

// floorsWhy says where the floors come from: each series' largest shift over the n A/As on
// record, and the A/A of the largest.
func floorsWhy(floors []results.SeriesFloor, largest results.Repeatability, n int) string {
	return fmt.Sprintf("%s; each series decides with its largest shift over %s: %s", largest.Why(), onRecord(n), results.DescribeFloors(floors))
}

// onRecord names the A/As on record: "the A/A on record", "the 3 A/As on record".
func onRecord(n int) string {
	if n == 1 {
		return "the A/A on record"
	}
	return fmt.Sprintf("the %d A/As on record", n)
}

// maxAAFile bounds what is read of an A/A file.
const maxAAFile = 1 << 20

// aaFileData is an A/A file: the latest A/As, oldest first.
type aaFileData struct {
	AAs []results.Repeatability `json:"aas"`
}

func readAAs(path string) ([]results.Repeatability, error) {
	data, err := safefile.ReadRegular(path, maxAAFile)
	if err != nil {
		return nil, err
	}
	// What the file says is bounded where it is used: a shift gives a floor within
	// [results.MinAAFloor, results.MaxAAFloor] however large, and JSON has no NaN.
	var f aaFileData
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.AAs, nil
}

// writeAAs replaces the A/A file at path (a temporary file renamed over it).
func writeAAs(path string, aas []results.Repeatability) error {
	data, err := json.MarshalIndent(aaFileData{AAs: aas}, "", "  ")
	if err != nil {
		return err
	}
	t, err := safefile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer t.Abort()
	if _, err := t.Write(append(data, '\n')); err != nil {
		return err
	}
	return t.Commit()
}

// keepAA adds r to the scenario's A/As when it is one (two guests of the same image and
// modules in virtual time, complete), keeping the latest keptAAs, and says what later runs
// will decide with. A file that cannot be read is replaced.
func (p Plan) keepAA(r *results.Result, progress io.Writer) {
	aa, ok := results.AAOf(r)
	if !ok || !r.Complete {
		return
	}
	path := p.aaFile()
	aas, _ := readAAs(path)
	aas = append(aas, aa)
	if len(aas) > keptAAs {
		aas = aas[len(aas)-keptAAs:]
	}
	if err := writeAAs(path, aas); err != nil {
		fmt.Fprintf(progress, "WARNING: the A/A of %s was not kept for later runs: %v\n", p.Scenario.Name, err)
		return
	}
	fmt.Fprintf(progress, "A/A: %s; later runs of %s in virtual time decide each series with its largest shift over %s: %s (--min-change overrides)\n",
		aa.Why(), p.Scenario.Name, onRecord(len(aas)), results.DescribeFloors(results.SeriesFloors(aas)))
}
