package topo

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/nsperf/nsperf/knobs"
)

// ProbeReport is what `nsperf probe` finds out about the running kernel.
type ProbeReport struct {
	KernelRelease string            `json:"kernel_release"`
	KernelVersion string            `json:"kernel_version"`
	Devices       []ProbedDevice    `json:"devices"`
	Knobs         []KnobCheck       `json:"knobs"`
	Tools         map[string]string `json:"tools"`
	Changes       []ChangeVerdict   `json:"changes"`
}

// ProbedDevice is one device created in the scratch namespace, with its defaults.
type ProbedDevice struct {
	Kind  string `json:"kind"` // e.g. "vxlan without a lower device"
	Attrs Attrs  `json:"attrs,omitempty"`
	Error string `json:"error,omitempty"` // why it could not be created or probed
}

// KnobCheck is one attempt to set a knob.
type KnobCheck struct {
	Knob     string `json:"knob"`
	Device   string `json:"device"`
	Value    uint32 `json:"value"`
	Accepted bool   `json:"accepted"`
	Error    string `json:"error,omitempty"`
}

// Verdicts of a kernel change.
const (
	Present = "present"
	Absent  = "absent"
	Unknown = "unknown"
)

// ChangeVerdict says whether a known kernel change is in the running kernel, and why.
type ChangeVerdict struct {
	Change   string `json:"change"`
	Verdict  string `json:"verdict"` // present, absent or unknown
	Evidence string `json:"evidence"`
}

// Device returns the probed device of a kind, or nil.
func (r *ProbeReport) Device(kind string) *ProbedDevice {
	for i := range r.Devices {
		if r.Devices[i].Kind == kind {
			return &r.Devices[i]
		}
	}
	return nil
}

// Text writes the report for a reader.
func (r *ProbeReport) Text(w io.Writer) error {
	fmt.Fprintf(w, "kernel %s (%s)\n\n", r.KernelRelease, r.KernelVersion)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"device (defaults)"}
	var reported []knobs.Knob // the probe reads no sysfs knob
	for _, k := range knobs.ReportOrder() {
		if k.Sysfs == "" {
			reported = append(reported, k)
			head = append(head, k.Name)
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	var missing []string // below the table: a row of text would break its columns
	for _, d := range r.Devices {
		if d.Attrs == nil {
			missing = append(missing, fmt.Sprintf("  %s: %s\n", d.Kind, d.Error))
			continue
		}
		row := []string{d.Kind}
		for _, k := range reported {
			row = append(row, fmt.Sprint(d.Attrs[k.Name]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	if len(missing) > 0 {
		fmt.Fprintf(w, "\nnot read:\n%s", strings.Join(missing, ""))
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "knob\tdevice\tvalue\tresult")
	for _, k := range r.Knobs {
		result := "accepted"
		if !k.Accepted {
			result = "refused: " + k.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", k.Knob, k.Device, k.Value, result)
	}
	tw.Flush()
	var tools []string
	for name, v := range r.Tools {
		tools = append(tools, name+" "+v)
	}
	sort.Strings(tools)
	fmt.Fprintf(w, "\ntools: %s\n\nkernel changes:\n", strings.Join(tools, "; "))
	for _, c := range r.Changes {
		fmt.Fprintf(w, "  %-8s %s: %s\n", c.Verdict, c.Change, c.Evidence)
	}
	return nil
}
