package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/claims"
	"github.com/nsperf/nsperf/testkit/clitest"
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

// TestOutputEscaped: whatever path a stranger's text takes to nsperf's output (here a diff's
// file name, in the reason a check gives, and a file name in an error), its control
// characters arrive escaped: no escape sequence, carriage return or line of its own reaches
// the terminal.
func TestOutputEscaped(t *testing.T) {
	dir := t.TempDir()
	mail := "From 1234 Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\nSubject: veth: x\n\nBefore: 1 Gbps\nAfter: 2 Gbps\n---\n" +
		"diff --git a/net/x\x1b[2J.c b/net/x\x1b[2J.c\n--- a/net/x\x1b[2J.c\n+++ b/net/x\x1b[2J.c\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"
	path := filepath.Join(dir, "esc.mbox")
	os.WriteFile(path, []byte(mail), 0o644)
	for _, args := range [][]string{{"claims", path}, {"claims", filepath.Join(dir, "none\x1b[31m\rok 1")}, {"reproduce", path, "--here", "--scenario", "none\x1b[31m"}} {
		stdout, stderr, _ := nsperf(args...)
		for _, out := range []string{stdout, stderr} {
			if strings.ContainsAny(out, "\x1b\r") {
				t.Errorf("%q: a control character reached the output:\n%q", args, out)
			}
		}
		if args[1] != path && !strings.Contains(stdout+stderr, `\x1b[`) {
			t.Errorf("%q: the escaped text is not shown:\n%s%s", args, stdout, stderr)
		}
	}
}
