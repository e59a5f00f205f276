package results

import (
	"strings"
	"testing"
)

// TestKernelBuildLine: a kernel line says with or without the series, and for a series the
// base has already (applied in reverse), that kernel A is the base with a revert of it and
// kernel B the base as it is; the hunks are shown for the kernel whose tree had them applied.
func TestKernelBuildLine(t *testing.T) {
	b := Build{Source: "debian linux-source-6.12", Mode: "whole", Config: "minimal",
		Patches: []BuildPatch{{Subject: "tcp: defer regular ACK", SHA256: strings.Repeat("ab", 32), Applied: []string{"net/ipv4/tcp_output.c hunk 2: fuzz 2"}}}}
	for _, tc := range []struct {
		patched bool
		applied string
		want    string
		hunks   bool
	}{
		{false, "", "without \"tcp: defer regular ACK\"", false},
		{true, "", "with \"tcp: defer regular ACK\"", true},
		{false, "reverse", "the base with a revert of \"tcp: defer regular ACK\"", true},
		{true, "reverse", "the base as it is, with \"tcp: defer regular ACK\"", false},
	} {
		kb := &KernelBuild{Patched: tc.patched, Build: b}
		kb.Applied = tc.applied
		line := kb.Line()
		if !strings.Contains(line, tc.want) || strings.Contains(line, "fuzz 2") != tc.hunks {
			t.Errorf("patched %v applied %q: %s", tc.patched, tc.applied, line)
		}
	}
}
