package kbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// DebianSource is the default source of `nsperf build`: Debian's linux-source-6.12 with the
// linux-image and headers of the same release, the current candidate of bookworm-security.
const DebianSource = "debian:6.12"

// base is a kernel to patch: its source tree, the headers out-of-tree modules build against,
// the image, its module tree and its config.
type base struct {
	Identity string // what it is, for the cache key and the manifest
	Release  string // uname -r
	Tree     string // the full source
	Headers  string // make -C here M=...
	Image    string
	// ModRoot holds lib/modules/Release, the image's modules as shipped.
	ModRoot string
	Config  string
	// Files are the tree's files a build takes (a git tree's tracked ones); nil: all.
	Files []string
	// Packaged: Debian's packages, fetched with apt (signed), not a stranger's tree.
	Packaged bool
}

// debianBase downloads Debian's 6.12 kernel once into cache/sources/debian-VERSION and
// returns it. The download and unpacking go into a directory of this process, renamed into
// place when whole: an interrupted fetch leaves nothing that looks done.
func debianBase(ctx context.Context, cache string, progress io.Writer) (*base, error) {
	version, err := debianCandidate(ctx)
	if err != nil {
		return nil, err
	}
	abi := regexp.MustCompile(`^(\d+\.\d+\.\d+)-[^~]*~deb(\d+).*$`).ReplaceAllString(version, "${1}+deb${2}")
	release := abi + "-amd64"
	dir := filepath.Join(cache, "sources", "debian-"+version)
	b := &base{Packaged: true, Identity: "debian linux-source-6.12 " + version, Release: release, Tree: filepath.Join(dir, "src", "linux-source-6.12"),
		Headers: filepath.Join(dir, "hdr", "usr", "src", "linux-headers-"+release), Image: filepath.Join(dir, "image", "boot", "vmlinuz-"+release),
		ModRoot: filepath.Join(dir, "image"), Config: filepath.Join(dir, "image", "boot", "config-"+release)}
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return b, nil
	}
	unlock, err := lockFor(ctx, cache, "source-debian-"+version, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return b, nil // fetched by the process that held the lock
	}
	fmt.Fprintf(progress, "build: fetching Debian's 6.12 kernel %s (image, headers, source) into %s\n", version, dir)
	tmp, err := tempBeside(dir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := fetchDebian(ctx, tmp, dir, version, abi, release); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
		return nil, err
	}
	os.RemoveAll(dir) // a partial one of an older nsperf
	return b, os.Rename(tmp, dir)
}

// debianCandidate is the version apt would install of linux-source-6.12 (apt-cache policy's
// Candidate), after an apt-get update when apt knows none.
func debianCandidate(ctx context.Context) (string, error) {
	read := func() string {
		out, _ := exec.CommandContext(ctx, "apt-cache", "policy", "linux-source-6.12").Output()
		m := regexp.MustCompile(`Candidate:\s*(\S+)`).FindSubmatch(out)
		if m == nil || string(m[1]) == "(none)" {
			return ""
		}
		return string(m[1])
	}
	if v := read(); v != "" {
		return v, nil
	}
	if out, err := exec.CommandContext(ctx, "apt-get", "update", "-qq").CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get update: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if v := read(); v != "" {
		return v, nil
	}
	return "", fmt.Errorf("source %s: apt knows no linux-source-6.12 (add bookworm-security to apt's sources), or give --source DIR", DebianSource)
}

// fetchDebian downloads and unpacks the five packages into tmp. The headers' Makefile
// includes the common headers by an absolute path, rewritten to where dir will hold them.
func fetchDebian(ctx context.Context, tmp, dir, version, abi, release string) error {
	debs := filepath.Join(tmp, "debs")
	if err := os.MkdirAll(debs, 0o755); err != nil {
		return err
	}
	pkgs := []string{"linux-image-" + release + "-unsigned", "linux-headers-" + release, "linux-headers-" + abi + "-common", "linux-kbuild-" + abi, "linux-source-6.12"}
	args := []string{"download", "-o", "APT::Sandbox::User=root"} // apt's sandbox user cannot write here
	for _, p := range pkgs {
		args = append(args, p+"="+version)
	}
	if err := runIn(ctx, debs, "apt-get", args...); err != nil {
		return err
	}
	for i, p := range pkgs {
		into := map[int]string{0: "image", 4: "srcdeb"}[i]
		if into == "" {
			into = "hdr"
		}
		debsOf, _ := filepath.Glob(filepath.Join(debs, p+"_*.deb"))
		if len(debsOf) != 1 {
			return fmt.Errorf("apt-get download %s: no package file", p)
		}
		if err := runIn(ctx, tmp, "dpkg", "-x", debsOf[0], filepath.Join(tmp, into)); err != nil {
			return err
		}
	}
	mk := filepath.Join(tmp, "hdr", "usr", "src", "linux-headers-"+release, "Makefile")
	text, err := os.ReadFile(mk)
	if err != nil {
		return err
	}
	fixed := strings.ReplaceAll(string(text), "include /usr/src/", "include "+filepath.Join(dir, "hdr", "usr", "src")+"/")
	if err := os.WriteFile(mk, []byte(fixed), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "src"), 0o755); err != nil {
		return err
	}
	if err := runIn(ctx, tmp, "tar", "-xJf", filepath.Join(tmp, "srcdeb", "usr", "src", "linux-source-6.12.tar.xz"), "-C", filepath.Join(tmp, "src")); err != nil {
		return err
	}
	if err := runIn(ctx, tmp, "depmod", "-b", filepath.Join(tmp, "image"), release); err != nil {
		return err
	}
	return removeAll(filepath.Join(tmp, "srcdeb"), debs)
}

func removeAll(paths ...string) error {
	for _, p := range paths {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// runIn runs a program in dir; its error carries the end of what it printed.
func runIn(ctx context.Context, dir, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tail := strings.TrimSpace(string(out))
		if len(tail) > 2000 {
			tail = "..." + tail[len(tail)-2000:]
		}
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail)
	}
	return nil
}

// tempBeside makes a working directory next to dir, named after this process, removing those
// of processes that are gone (a killed build).
func tempBeside(dir string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	stale, _ := filepath.Glob(dir + ".tmp-*")
	for _, s := range stale {
		pid := s[strings.LastIndex(s, "-")+1:]
		if _, err := os.Stat("/proc/" + pid); err != nil {
			os.RemoveAll(s)
		}
	}
	tmp := fmt.Sprintf("%s.tmp-%d", dir, os.Getpid())
	os.RemoveAll(tmp)
	return tmp, os.MkdirAll(tmp, 0o755)
}

// privateTempBeside is tempBeside made root's alone (0700) while it is filled: what a build
// as nobody writes in it is reached only through the sandbox, not by another of nobody's
// processes.
func privateTempBeside(dir string) (string, error) {
	tmp, err := tempBeside(dir)
	if err != nil {
		return "", err
	}
	return tmp, os.Chmod(tmp, 0o700)
}

// DefaultSource is the source tree of DefaultKernel (Debian's linux-source-6.12 of the same
// release), fetched once into the cache, with its identity.
func DefaultSource(ctx context.Context, progress io.Writer) (tree, identity string, err error) {
	b, err := debianBase(ctx, CacheDir(), progress)
	if err != nil {
		return "", "", fmt.Errorf("the default kernel's source (%s): %w", DebianSource, err)
	}
	return b.Tree, b.Identity, nil
}

// DefaultKernel is the kernel a message without a diff is measured on in a guest: Debian's
// 6.12 image and its modules, fetched once into the cache (as the default base of a build).
func DefaultKernel(ctx context.Context, progress io.Writer) (image, modules, release string, err error) {
	b, err := debianBase(ctx, CacheDir(), progress)
	if err != nil {
		return "", "", "", fmt.Errorf("the default kernel (%s): %w", DebianSource, err)
	}
	return b.Image, b.ModRoot, b.Release, nil
}
