package patches

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func readSeed(t *testing.T, name string) []Patch {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := Read(name, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ps
}

// vxlanSetup is drivers/net/vxlan/vxlan_core.c's vxlan_setup as 6.12 has it around the
// hunk: without the mangleid_features line that patch 1-6 of the BIG TCP series add.
const vxlanSetup = "static void vxlan_setup(struct net_device *dev)\n{\n\tdev->hw_features |= NETIF_F_GSO_SOFTWARE;\n\tnetif_keep_dst(dev);\n\tdev->priv_flags |= IFF_NO_QUEUE;\n\tdev->change_proto_down = true;\n\tdev->lltx = true;\n\n\t/* MTU range: 68 - 65535 */\n}\n"

// TestReadSeeds: the four seeds as the mails they came as read as their patches: headers,
// series position, files and hunks, and no diff where there is none.
func TestReadSeeds(t *testing.T) {
	ovs := readSeed(t, "ovs-internal-port-tso-v2.mbox")
	if len(ovs) != 1 || ovs[0].Title != "openvswitch: raise internal port TSO limit" || ovs[0].Version != 2 || ovs[0].Index != 0 ||
		ovs[0].MessageID != "20260916093012.1180421-1-wang.zhan@smartx.com" || ovs[0].Author != "Wang Zhan <wang.zhan@smartx.com>" || len(ovs[0].SHA256) != 64 {
		t.Fatalf("ovs: %+v", ovs)
	}
	if f := ovs[0].Files; len(f) != 1 || f[0].Path() != "net/openvswitch/vport-internal_dev.c" || len(f[0].Hunks) != 1 || f[0].Hunks[0].OldStart != 117 || len(f[0].Hunks[0].New()) != 8 {
		t.Errorf("ovs diff: %+v", f)
	}
	if !strings.Contains(ovs[0].Message, "increased throughput by 18.1%") {
		t.Errorf("ovs message: %q", ovs[0].Message)
	}
	vx := readSeed(t, "vxlan-bigtcp-7of9.mbox")
	if len(vx) != 1 || vx[0].Index != 7 || vx[0].Total != 9 || vx[0].Version != 8 || Touched(vx)[0] != "drivers/net/vxlan/vxlan_core.c" {
		t.Errorf("vxlan 7/9: %+v", vx)
	}
	stable := readSeed(t, "vxlan-lowerdev-4.9-stable.mbox")
	if len(stable) != 2 || stable[0].HasDiff() || !stable[1].HasDiff() || stable[1].Title != "vxlan: vxlan dev should inherit lowerdev's gso_max_size" || Touched(stable)[0] != "drivers/net/vxlan.c" {
		t.Errorf("4.9-stable: %d mails %+v", len(stable), stable)
	}
	merge := readSeed(t, "big-tcp-merge.txt")
	if len(merge) != 1 || merge[0].HasDiff() {
		t.Errorf("merge message: %+v", merge)
	}
	if _, err := Check(fstest.MapFS{}, merge, Options{}); err == nil || !strings.Contains(err.Error(), "no unified diff") {
		t.Errorf("merge message checked: %v", err)
	}
}

// TestCheckOVSExact: the OVS patch applies to its file exactly, and the patched file has
// the new lines.
func TestCheckOVSExact(t *testing.T) {
	ps := readSeed(t, "ovs-internal-port-tso-v2.mbox")
	var src strings.Builder
	for i := 1; i < 117; i++ {
		fmt.Fprintf(&src, "/* line %d */\n", i)
	}
	src.WriteString("\tnetdev->features |= NETIF_F_HW_VLAN_CTAG_TX | NETIF_F_HW_VLAN_STAG_TX;\n\tnetdev->hw_features = netdev->features;\n\n\teth_hw_addr_random(netdev);\n}\n\n")
	fs := fstest.MapFS{"net/openvswitch/vport-internal_dev.c": {Data: []byte(src.String())}}
	r, err := Check(fs, ps, Options{})
	if err != nil || r.Err() != nil {
		t.Fatal(err, r.Err())
	}
	if len(r.Applied) != 1 || r.Applied[0].How() != "exact" || r.Applied[0].At != 117 {
		t.Errorf("applied %+v", r.Applied)
	}
	if got := string(r.Files["net/openvswitch/vport-internal_dev.c"]); !strings.Contains(got, "netdev->features;\n\n\tnetif_set_tso_max_size(netdev, GSO_MAX_SIZE);\n\n\teth_hw_addr_random") {
		t.Errorf("patched file:\n%s", got)
	}
	again := fstest.MapFS{"net/openvswitch/vport-internal_dev.c": {Data: r.Files["net/openvswitch/vport-internal_dev.c"]}}
	if r2, _ := Check(again, ps, Options{}); len(r2.Problems) != 1 || r2.Problems[0].Kind != ProblemAlreadyApplied {
		t.Errorf("the patch on its own result: %+v", r2.Problems)
	}
}

// TestCheckVxlanSeriesGap: patch 7 of 9 names its file, its hunk and the context line the
// source lacks, and warns that 1-6 are not given; with fuzz it applies, at an offset, and
// the fuzz is recorded.
func TestCheckVxlanSeriesGap(t *testing.T) {
	ps := readSeed(t, "vxlan-bigtcp-7of9.mbox")
	pad := strings.Repeat("/* */\n", 3400)
	fs := fstest.MapFS{"drivers/net/vxlan/vxlan_core.c": {Data: []byte(pad + vxlanSetup)}}
	r, err := Check(fs, ps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "patch 7 of 9") || !strings.Contains(r.Warnings[0], "1-6 of its series not given") {
		t.Errorf("warnings %q", r.Warnings)
	}
	if len(r.Problems) != 1 {
		t.Fatalf("problems %+v", r.Problems)
	}
	p := r.Problems[0]
	for _, want := range []string{"drivers/net/vxlan/vxlan_core.c", "hunk 1 (@@ -3370,6 +3370,8 @@ static void vxlan_setup", `"dev->mangleid_features = NETIF_F_GSO_PARTIAL;"`, "--fuzz"} {
		if !strings.Contains(p.Msg, want) {
			t.Errorf("problem %q lacks %q", p.Msg, want)
		}
	}
	if p.Kind != ProblemNoMatch || len(p.Missing) != 1 {
		t.Errorf("problem %+v", p)
	}
	r, err = Check(fs, ps, Options{Fuzz: 3})
	if err != nil || r.Err() != nil {
		t.Fatal(err, r.Err())
	}
	if a := r.Applied[0]; a.Fuzz != 1 || a.Offset != 33 || a.How() != "fuzz 1, offset 33" {
		t.Errorf("applied %+v (%s)", a, a.How())
	}
	if got := string(r.Files["drivers/net/vxlan/vxlan_core.c"]); !strings.Contains(got, "netif_keep_dst(dev);\n\tnetif_set_tso_max_size(dev, GSO_MAX_SIZE);\n\n\tdev->priv_flags") {
		t.Errorf("patched:\n%s", got[len(pad):])
	}
}

// TestCheckMissingFile: the 4.9-stable patch names drivers/net/vxlan.c, which later kernels
// do not have.
func TestCheckMissingFile(t *testing.T) {
	ps := readSeed(t, "vxlan-lowerdev-4.9-stable.mbox")
	r, err := Check(fstest.MapFS{"drivers/net/vxlan/vxlan_core.c": {Data: []byte(vxlanSetup)}}, ps, Options{Fuzz: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) != 1 || r.Problems[0].Kind != ProblemMissingFile || !strings.Contains(r.Problems[0].Msg, "drivers/net/vxlan.c: the source has no such file") {
		t.Errorf("problems %+v", r.Problems)
	}
}

const goodDiff = "diff --git a/net/core/dev.c b/net/core/dev.c\n--- a/net/core/dev.c\n+++ b/net/core/dev.c\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"

// TestBadInputs: each input nsperf must not build is refused with the reason and, where
// there is one, the line.
func TestBadInputs(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"binary", "x\x00y", "a binary file"},
		{"binary diff", "diff --git a/fw.bin b/fw.bin\nindex 1..2 100644\nGIT binary patch\nliteral 3\n", "bad:3: a binary diff"},
		{"binary files differ", "diff --git a/fw.bin b/fw.bin\nBinary files a/fw.bin and b/fw.bin differ\n", "a binary diff"},
		{"dotdot", "--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-x\n+y\n", "leaves the source"},
		{"absolute", "--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-x\n+y\n", "an absolute path"},
		{"symlink", "diff --git a/l b/l\nnew file mode 120000\nindex 0..1\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n", "symbolic link"},
		{"truncated", goodDiff[:len(goodDiff)-3], "the hunk is cut"},
		{"truncated mid-way", strings.Replace(goodDiff, " c\n", "some text\n", 1), "the hunk is cut"},
		{"rename", "diff --git a/x b/y\nsimilarity index 90%\nrename from x\nrename to y\n", "a rename"},
		{"bad hunk header", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n+y\n@@ nonsense\n", "not a hunk header"},
	} {
		_, err := Read("bad", []byte(tc.text))
		var ie *InputError
		if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an InputError with %q", tc.name, err, tc.want)
		}
	}
}

// TestEveryInputHashed: every patch records the sha256 of its bytes, whatever it came as: a
// plain diff (its whole input, as sha256sum says of the file), a git format-patch file and
// each mail of an mbox (its text), a mail without a diff. Two plain diffs of the same shape
// (file, hunk, line counts) that add different text hash apart: the build cache keys on it.
func TestEveryInputHashed(t *testing.T) {
	other := strings.Replace(goodDiff, "+b", "+system(\"x\")", 1)
	mail := func(subject, diff string) string {
		return "From 1f2e Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\nSubject: [PATCH] " + subject + "\n\nmsg\n---\n" + diff + "\n"
	}
	for _, tc := range []struct {
		name, a, b string
		plain      bool
	}{
		{"plain diffs", goodDiff, other, true},
		{"plain diffs with a message", "a fix\n\n" + goodDiff, "a fix\n\n" + other, true},
		{"format-patch files", mail("x", goodDiff), mail("x", other), false},
		{"mails without a diff", mail("x", "cover one"), mail("x", "cover two"), false},
	} {
		var sums [2]string
		for i, text := range []string{tc.a, tc.b} {
			ps, err := Read("in", []byte(text))
			if err != nil || len(ps) != 1 {
				t.Fatalf("%s: %d patches, %v", tc.name, len(ps), err)
			}
			sums[i] = ps[0].SHA256
			if want := fmt.Sprintf("%x", sha256.Sum256([]byte(text))); tc.plain && sums[i] != want {
				t.Errorf("%s: sha256 %q, want the input's %s", tc.name, sums[i], want)
			}
			if len(sums[i]) != 64 {
				t.Errorf("%s: sha256 %q, want one of the patch's bytes", tc.name, sums[i])
			}
		}
		if sums[0] == sums[1] {
			t.Errorf("%s: two different patches have one sha256 %q", tc.name, sums[0])
		}
	}
	mbox := mail("one", goodDiff) + "\n" + mail("two", other)
	ps, err := Read("in", []byte(mbox))
	if err != nil || len(ps) != 2 || len(ps[0].SHA256) != 64 || ps[0].SHA256 == ps[1].SHA256 {
		t.Errorf("mbox of two mails: %+v, %v", ps, err)
	}
}

// TestNothingToBuild: text without a diff says what it found; a documentation-only patch has
// nothing to build.
func TestNothingToBuild(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"hello\nworld\n", `2 lines of text starting "hello"`},
		{"Subject: [PATCH 0/3] a series\nFrom: a <a@b>\n\ncover text\n", `"[PATCH 0/3] a series", with no unified diff`},
		{strings.ReplaceAll(goodDiff, "net/core/dev.c", "Documentation/networking/x.rst"), "only Documentation/"},
	} {
		ps, err := Read("in", []byte(tc.text))
		if err != nil {
			t.Fatalf("%q: %v", tc.text, err)
		}
		if _, err := Check(fstest.MapFS{}, ps, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestBounds: an input beyond MaxInputSize or with more than MaxMessages mails is refused
// before it is parsed.
func TestBounds(t *testing.T) {
	if _, err := Read("huge", make([]byte, MaxInputSize+1)); err == nil || !strings.Contains(err.Error(), "MiB is not a patch series") {
		t.Errorf("huge: %v", err)
	}
	mbox := strings.Repeat("From x Mon Jan  1 00:00:00 2024\nSubject: s\n\nbody\n\n", MaxMessages+1)
	if _, err := Read("many", []byte(mbox)); err == nil || !strings.Contains(err.Error(), "more than 1000 mails") {
		t.Errorf("many: %v", err)
	}
}

// TestTransferEncodings: a patch sent quoted-printable or base64 reads as the same diff.
func TestTransferEncodings(t *testing.T) {
	qp := "From x Mon Jan  1 00:00:00 2024\nSubject: [PATCH] x\nContent-Transfer-Encoding: quoted-printable\n\nmsg=\n text\n---\n" + strings.ReplaceAll(goodDiff, "+b", "+b=3D1") + "\n"
	b64body := "msg\n---\n" + goodDiff
	enc := make([]byte, 0)
	enc = fmt.Appendf(enc, "%s", base64Lines(b64body))
	b64 := "From x Mon Jan  1 00:00:00 2024\nSubject: [PATCH] x\nContent-Transfer-Encoding: base64\n\n" + string(enc)
	for name, text := range map[string]string{"qp": qp, "base64": b64} {
		ps, err := Read(name, []byte(text))
		if err != nil || len(ps) != 1 || len(ps[0].Files) != 1 {
			t.Fatalf("%s: %v %+v", name, err, ps)
		}
		if got := ps[0].Files[0].Hunks[0].New(); len(got) != 3 || !strings.HasPrefix(got[1], "b") {
			t.Errorf("%s: new lines %q", name, got)
		}
	}
}

// TestMultipart: a multipart mail reads as the text of its text parts, each with its transfer
// encoding undone (a base64 text/plain attachment, a patch attached as text/x-patch in
// quoted-printable, the plain text of a multipart/alternative and not its HTML); a PDF, the
// headers and the boundaries are empty lines, and a line of an unencoded part keeps its
// number.
func TestMultipart(t *testing.T) {
	mail := "From x Mon Jan  1 00:00:00 2024\nSubject: Re: numbers\nMIME-Version: 1.0\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\n\n" +
		"This is a multi-part message in MIME format.\n--b1\n" +
		"Content-Type: multipart/alternative; boundary=\"b2\"\n\n--b2\n" +
		"Content-Type: text/plain; charset=utf-8\n\nthe body's first line\nsecond line\n--b2\n" +
		"Content-Type: text/html\n\n<p>the body's first line</p>\n--b2--\n--b1\n" +
		"Content-Type: text/plain; name=\"runs.txt\"\nContent-Transfer-Encoding: base64\n\n" +
		base64Lines("run 1: 9.1 Gbit/s\nrun 2: 9.3 Gbit/s\n") + "--b1\n" +
		"Content-Type: text/x-patch; name=\"0001.patch\"\nContent-Transfer-Encoding: quoted-printable\n\n---\n" +
		strings.ReplaceAll(goodDiff, "+b", "+b=3D1") + "\n--b1\n" +
		"Content-Type: application/pdf\nContent-Transfer-Encoding: base64\n\n" + base64Lines("%PDF-1.4 binary") + "--b1--\n"
	ps, err := ReadMessages("m", []byte(mail))
	if err != nil || len(ps) != 1 {
		t.Fatalf("%v %+v", err, ps)
	}
	body := ps[0].Message
	for _, want := range []string{"the body's first line\nsecond line\n", "run 1: 9.1 Gbit/s\nrun 2: 9.3 Gbit/s\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the body lacks %q:\n%s", want, body)
		}
	}
	for _, not := range []string{"<p>", "PDF", "Content-Type", "--b1", "multi-part message"} {
		if strings.Contains(body, not) {
			t.Errorf("the body has %q:\n%s", not, body)
		}
	}
	raw := strings.Split(mail[strings.Index(mail, "\n\n")+2:], "\n")
	if k, got := slices.Index(raw, "second line"), slices.Index(strings.Split(body, "\n"), "second line"); k != got {
		t.Errorf("the unencoded part's line is the body's line %d, was %d", got, k)
	}
	if len(ps[0].Files) != 1 || !strings.HasPrefix(ps[0].Files[0].Hunks[0].New()[1], "b=1") {
		t.Errorf("the attached patch: %+v", ps[0].Files)
	}
}

// FuzzRead: no input makes the reader panic, and what it returns checks against an empty
// source without panicking.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"ovs-internal-port-tso-v2.mbox", "vxlan-bigtcp-7of9.mbox", "vxlan-lowerdev-4.9-stable.mbox", "big-tcp-merge.txt"} {
		if data, err := os.ReadFile("testdata/" + name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(goodDiff))
	f.Add([]byte("Subject: x\nFrom: a@b\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: multipart/alternative; boundary=c\n\n--c\n\ntext\n--c--\n--b\nContent-Transfer-Encoding: base64\n\ndGV4dAo=\n--b--\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps, err := Read("fuzz", data)
		if err != nil {
			return
		}
		if r, err := Check(fstest.MapFS{"net/core/dev.c": {Data: []byte("a\nc\n")}}, ps, Options{Fuzz: 2}); err == nil {
			_ = r.Err()
		}
	})
}

// base64Lines encodes s as a mail body: base64 in lines of 76.
func base64Lines(s string) string {
	enc := base64.StdEncoding.EncodeToString([]byte(s))
	var b strings.Builder
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\n")
	return b.String()
}

// TestReverse: a series applied and then its Reverse applied gives the source back, a new
// file included; a series in the source is InBase whole, and half of one partly, with the
// hunks named.
func TestReverse(t *testing.T) {
	src := fstest.MapFS{"a.c": {Data: []byte("one\ntwo\nthree\nfour\nfive\n")}}
	diff := "--- a/a.c\n+++ b/a.c\n@@ -1,5 +1,5 @@\n one\n two\n-three\n+THREE\n four\n five\n" +
		"--- /dev/null\n+++ b/new.c\n@@ -0,0 +1,2 @@\n+int x;\n+int y;\n"
	series, err := Read("p.diff", []byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	fwd, err := Check(src, series, Options{})
	if err != nil || fwd.Err() != nil {
		t.Fatalf("forward: %v %v", err, fwd.Err())
	}
	applied := fstest.MapFS{}
	for path, data := range fwd.Files {
		applied[path] = &fstest.MapFile{Data: data}
	}
	if whole, _ := fwd.InBase(); whole {
		t.Errorf("a series that applies is not in the base")
	}
	again, err := Check(applied, series, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if whole, _ := again.InBase(); !whole {
		t.Errorf("applied twice: InBase %v, problems %+v", whole, again.Problems)
	}
	back, err := Check(applied, Reverse(series), Options{})
	if err != nil || back.Err() != nil {
		t.Fatalf("reverse: %v %v", err, back.Err())
	}
	if string(back.Files["a.c"]) != "one\ntwo\nthree\nfour\nfive\n" || back.Files["new.c"] != nil {
		t.Errorf("reverted: %q, new.c %q", back.Files["a.c"], back.Files["new.c"])
	}
	half := fstest.MapFS{"a.c": applied["a.c"]} // the change to a.c is in, new.c is not
	got, _ := Check(half, series, Options{})
	if whole, in := got.InBase(); whole || len(in) != 1 || in[0] != "a.c hunk 1" {
		t.Errorf("half in: %v %v (%+v)", whole, in, got.Problems)
	}
}

// TestCheckUnreadableSource: a file a patch changes that is a FIFO, a device or a link out of
// the tree (read through an os.Root) is a problem naming why, found without opening it (a FIFO
// would hang the check) and without reading outside the tree.
func TestCheckUnreadableSource(t *testing.T) {
	ps, err := Read("p.diff", []byte(goodDiff))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		src  func(t *testing.T) fs.FS
		want string
	}{
		"a FIFO": {func(*testing.T) fs.FS {
			return fstest.MapFS{"net/core/dev.c": {Mode: fs.ModeNamedPipe}}
		}, "not a regular file in the source"},
		"a device": {func(*testing.T) fs.FS {
			return fstest.MapFS{"net/core/dev.c": {Mode: fs.ModeDevice | fs.ModeCharDevice}}
		}, "not a regular file in the source"},
		"a link out of the tree": {func(t *testing.T) fs.FS {
			outside := t.TempDir()
			os.WriteFile(filepath.Join(outside, "dev.c"), []byte("a\nc\n"), 0o644)
			tree := t.TempDir()
			os.MkdirAll(filepath.Join(tree, "net"), 0o755)
			if err := os.Symlink(outside, filepath.Join(tree, "net", "core")); err != nil {
				t.Fatal(err)
			}
			root, err := os.OpenRoot(tree)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { root.Close() })
			return root.FS()
		}, "cannot be read in the source (statat net/core/dev.c: path escapes from parent)"},
	} {
		done := make(chan struct{})
		var r *Result
		go func() { r, err = Check(c.src(t), ps, Options{}); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the check waits", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Problems) != 1 || r.Problems[0].Kind != ProblemUnreadable || !strings.Contains(r.Problems[0].Msg, "net/core/dev.c: "+c.want) {
			t.Errorf("%s: problems %+v", name, r.Problems)
		}
		if len(r.Files) != 0 {
			t.Errorf("%s: files read: %v", name, r.Files)
		}
	}
}

// TestFromParagraph: a body's paragraph that starts "From " (git format-patch does not escape
// it) is the mail's text, not a second mail; mails split at postmarks ("From SENDER DATE").
func TestFromParagraph(t *testing.T) {
	mail := "From 1f2e3d4c Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\nSubject: [PATCH 1/2] veth: x\n\nIntro.\n\n" +
		"From the figures below, GRO helps.\nBefore: 1 Gbps\nAfter: 2 Gbps\n---\n" + goodDiff +
		"\nFrom 5a6b7c8d Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\nSubject: [PATCH 2/2] veth: y\n\nMore.\n---\n" + goodDiff
	ps, err := Read("x.mbox", []byte(mail))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || !strings.Contains(ps[0].Message, "From the figures below, GRO helps.") || !strings.HasSuffix(ps[1].Subject, "veth: y") {
		for _, p := range ps {
			t.Logf("%q: %q", p.Subject, p.Message)
		}
		t.Fatalf("%d mails, want 2 with the paragraph in the first", len(ps))
	}
	// A commit message that starts with such a paragraph is no mbox.
	if ps, err := Read("msg.txt", []byte("From 5Mpps to 8Mpps.\n\n"+goodDiff)); err != nil || len(ps) != 1 {
		t.Errorf("a message starting 'From ': %d %v", len(ps), err)
	}
}

// TestHeaderBlockEndsAtSpaces: the line after a mail's headers, copied with a space or a tab
// on it, ends the headers as an empty line does (the first paragraph is the body's, not more
// headers), with or without an mbox postmark and a "Source:" note before it; and the body's
// line numbers are the input's own (a mail without a postmark is not counted from the one
// the reader adds).
func TestHeaderBlockEndsAtSpaces(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		bodyLine   int
	}{
		{"spaces", "From: a <a@b>\nSubject: [PATCH] veth: x\n  \nBefore: 1 Gbps\nAfter: 2 Gbps\n", 4},
		{"tab", "From: a <a@b>\nSubject: [PATCH] veth: x\n\t\nBefore: 1 Gbps\nAfter: 2 Gbps\n", 4},
		{"empty", "From: a <a@b>\nSubject: [PATCH] veth: x\n\nBefore: 1 Gbps\nAfter: 2 Gbps\n", 4},
		{"postmark", "From 1f2e3d4c Mon Sep 17 00:00:00 2001\nFrom: a <a@b>\nSubject: [PATCH] veth: x\n \nBefore: 1 Gbps\nAfter: 2 Gbps\n", 5},
		{"note", "Source: https://example.org/m\n\nFrom: a <a@b>\nSubject: [PATCH] veth: x\n \nBefore: 1 Gbps\nAfter: 2 Gbps\n", 6},
		{"folded subject", "From: a <a@b>\nSubject: [PATCH] veth: a long\n title\n \nBefore: 1 Gbps\nAfter: 2 Gbps\n", 5},
	} {
		ps, err := ReadMessages(tc.name, []byte(tc.text))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(ps) != 1 || !strings.HasPrefix(ps[0].Message, "Before: 1 Gbps\nAfter: 2 Gbps") || !strings.HasPrefix(ps[0].Subject, "[PATCH] veth: ") {
			t.Errorf("%s: %d mails, subject %q, message %q", tc.name, len(ps), ps[0].Subject, ps[0].Message)
			continue
		}
		if ps[0].MessageLine != tc.bodyLine {
			t.Errorf("%s: the body starts at line %d, want %d", tc.name, ps[0].MessageLine, tc.bodyLine)
		}
	}
}
