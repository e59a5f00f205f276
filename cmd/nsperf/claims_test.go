package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/internal/clitest"
)

// TestClaimsCommand: nsperf claims prints a seed's claims as a table and as JSON with the
// documented fields, and refuses what is not a text it can read (exit 2).
func TestClaimsCommand(t *testing.T) {
	stdout, stderr, code := nsperf("claims", clitest.Seeds+"vxlan-lowerdev-4.9-stable.mbox")
	if code != exitOK || !strings.Contains(stdout, "139 Mbit/s  8.68 Gbit/s  +6144.6%  +6144.0%") {
		t.Errorf("table: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = nsperf("claims", clitest.Seeds+"big-tcp-merge.txt", "--format", "json")
	var r claims.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != exitOK || len(r.Claims) != 4 || len(r.Toggles) != 1 {
		t.Errorf("json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "x.bin")
	os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 0}, 0o644)
	for _, arg := range []string{bin, dir, filepath.Join(dir, "none")} {
		if _, stderr, code := nsperf("claims", arg); code != exitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", arg, code, exitUsage, stderr)
		}
	}
}
