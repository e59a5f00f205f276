package results

import (
	"fmt"
	"strings"
)

// KernelBuild is how nsperf built a kernel under test from a patch series (nsperf build, run
// --patch): the base it came from, the patches with how they applied, and the build.
type KernelBuild struct {
	// Patched says whether this kernel has the patches: false for the base, built the same
	// way without them.
	Patched bool   `json:"patched"`
	Source  string `json:"source"` // e.g. "debian linux-source-6.12 6.12.118-1~deb12u1"
	// Mode is "modules": Modules were rebuilt out of tree against the base's headers, and
	// the base's image boots.
	Mode         string       `json:"mode"`
	Modules      []string     `json:"modules,omitempty"`
	Compiler     string       `json:"compiler"`
	ConfigSHA256 string       `json:"config_sha256"`
	BuildSeconds float64      `json:"build_seconds"`
	Patches      []BuildPatch `json:"patches"`
	Key          string       `json:"key"` // the build's name in the cache
}

// BuildPatch is one patch of the series.
type BuildPatch struct {
	Subject   string   `json:"subject,omitempty"`
	Author    string   `json:"author,omitempty"`
	MessageID string   `json:"message_id,omitempty"`
	SHA256    string   `json:"sha256"`
	Applied   []string `json:"applied,omitempty"` // per hunk: "FILE hunk N: exact|offset N|fuzz N"
}

// Line says in one line how the kernel was built, for the table's header: the base, the
// modules rebuilt, with or without each patch and how it applied.
func (b *KernelBuild) Line() string {
	with := "without"
	if b.Patched {
		with = "with"
	}
	var patches []string
	for _, p := range b.Patches {
		how := ""
		if b.Patched && len(p.Applied) > 0 {
			how = "; " + strings.Join(p.Applied, ", ")
		}
		patches = append(patches, fmt.Sprintf("%q (sha256 %.12s%s)", Printable(p.Subject), p.SHA256, how))
	}
	return fmt.Sprintf("built by nsperf from %s, %s rebuilt (%s), %s %s", Printable(b.Source), b.Mode, strings.Join(b.Modules, " "), with, strings.Join(patches, ", "))
}

// Subjects are the patches' subjects, for a table's header.
func (b *KernelBuild) Subjects() []string {
	var out []string
	for _, p := range b.Patches {
		if p.Subject != "" {
			out = append(out, p.Subject)
		}
	}
	return out
}
