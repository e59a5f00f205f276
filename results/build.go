package results

import (
	"fmt"
	"strings"
)

// Build is how nsperf built the pair of kernels of a patch series (nsperf build, run
// --patch): the one record the build's manifest (kbuild.Manifest) and each kernel's result
// (KernelBuild) share, the base it came from, the patches with how they applied, the config
// and the compiler.
type Build struct {
	Source string `json:"source"` // e.g. "debian linux-source-6.12 6.12.118-1~deb12u1"
	// Mode is "modules": modules were rebuilt out of tree against the base's headers, and
	// the base's image boots. Or "whole": the kernels were built whole with Config.
	Mode         string       `json:"mode"`
	Config       string       `json:"config,omitempty"` // a whole build's: "minimal" or the file given
	Compiler     string       `json:"compiler"`
	ConfigSHA256 string       `json:"config_sha256"`
	Patches      []BuildPatch `json:"patches"`
	Key          string       `json:"key"` // the build's name in the cache
	// Applied is "reverse" for a series the base has already (a merged commit): kernel A
	// (base) is the base with the series reverted, kernel B (patched) the base as it is.
	Applied string `json:"applied,omitempty"`
}

// KernelBuild is how one kernel under test was built: the pair's Build, and this kernel's
// part of it.
type KernelBuild struct {
	// Patched says whether this kernel has the patches: false for the base, built the same
	// way without them.
	Patched bool `json:"patched"`
	Build
	Modules      []string `json:"modules,omitempty"` // the modules rebuilt, in modules mode
	BuildSeconds float64  `json:"build_seconds"`
}

// BuildPatch is one patch of the series.
type BuildPatch struct {
	Input     string   `json:"input,omitempty"` // the file it came from
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
	if b.Applied == "reverse" {
		// A merged series: the base has it; kernel A is the base with it reverted.
		with = "the base as it is, with"
		if !b.Patched {
			with = "the base with a revert of"
		}
	}
	var patches []string
	for _, p := range b.Patches {
		how := ""
		if (b.Patched != (b.Applied == "reverse")) && len(p.Applied) > 0 {
			how = "; " + strings.Join(p.Applied, ", ")
		}
		patches = append(patches, fmt.Sprintf("%q (sha256 %.12s%s)", Printable(p.Subject), p.SHA256, how))
	}
	what := fmt.Sprintf("%s rebuilt (%s)", b.Mode, strings.Join(b.Modules, " "))
	if b.Mode == "whole" {
		what = "a whole kernel, config " + Printable(b.Config)
	}
	return fmt.Sprintf("built by nsperf from %s, %s, %s %s", Printable(b.Source), what, with, strings.Join(patches, ", "))
}

// Patch says in a few words which series the kernel was built with or without, for the
// history's list: `with "SUBJECT"`, `without "SUBJECT"` (the first subject, and how many
// more); "" for a kernel nsperf did not build (b is nil).
func (b *KernelBuild) Patch() string {
	if b == nil {
		return ""
	}
	subjects := b.Subjects()
	if len(subjects) == 0 {
		subjects = []string{"a patch without a subject"}
	}
	with := "without"
	if b.Patched {
		with = "with"
	}
	more := ""
	if len(subjects) > 1 {
		more = fmt.Sprintf(" and %d more", len(subjects)-1)
	}
	return fmt.Sprintf("%s %q%s", with, Printable(subjects[0]), more)
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
