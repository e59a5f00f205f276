// Package kconfig reads and writes a kernel's .config and its fragments: the one reader of
// CONFIG_ lines in nsperf (the configs of kernels under test, of the base a patch is built on
// and of a built tree) and the one writer of them (the fragments `nsperf kconfig` prints and
// a whole kernel is configured with). Pure: what it reads is already in memory.
package kconfig

import (
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
)

// MaxSize bounds a kernel config read from a file: Debian's 6.12 one is about 280 KiB.
const MaxSize = 16 << 20

// Config is a kernel .config: the options set (y, m or a value), by name without CONFIG_.
type Config struct {
	Path string
	set  map[string]string
}

// Parse reads .config lines: CONFIG_X=y, =m or a value; "# CONFIG_X is not set", =n and
// absent options are not set. As in Kconfig, the last assignment of an option wins.
func Parse(path string, data []byte) Config {
	c := Config{Path: path, set: map[string]string{}}
	// Line by line over what is in memory already: no line is too long to read.
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if off, ok := strings.CutPrefix(line, "# CONFIG_"); ok {
			if n, ok := strings.CutSuffix(off, " is not set"); ok {
				delete(c.set, n)
			}
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		n, isOpt := strings.CutPrefix(name, "CONFIG_")
		switch {
		case !ok || !isOpt || n == "":
		case value == "n" || value == "":
			delete(c.set, n)
		default:
			c.set[n] = value
		}
	}
	return c
}

// Has reports whether an option is set (y, m, or a value).
func (c Config) Has(name string) bool { _, ok := c.set[name]; return ok }

// Value is an option's value: y, m, a number, or a string without its quotes
// (CONFIG_CC_VERSION_TEXT="gcc-12 ..." is gcc-12 ...); "" when it is not set.
func (c Config) Value(name string) string {
	v := c.set[name]
	if s, err := strconv.Unquote(v); err == nil && strings.HasPrefix(v, `"`) {
		return s
	}
	return v
}

// Values are the options set with their values as Value gives them.
func (c Config) Values() map[string]string {
	out := make(map[string]string, len(c.set))
	for n := range maps.Keys(c.set) {
		out[n] = c.Value(n)
	}
	return out
}

// Set is the line that sets an option: CONFIG_X=VALUE.
func Set(name, value string) string { return "CONFIG_" + name + "=" + value }

// NotSet is the line that unsets an option: # CONFIG_X is not set.
func NotSet(name string) string { return "# CONFIG_" + name + " is not set" }

// Group is options set to y for one reason, which a fragment writes as a comment before them.
type Group struct {
	Why   string
	Names []string
}

// WriteFragment writes a fragment in the syntax of the kselftest `config` files, which
// merge_config.sh and `vng -f` read: the reason in a comment before each group, one
// CONFIG_X=y per line; then, under off's comment, a "# CONFIG_X is not set" line per name.
func WriteFragment(w io.Writer, groups []Group, offWhy string, off []string) error {
	var b strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&b, "# %s\n", g.Why)
		for _, n := range g.Names {
			b.WriteString(Set(n, "y") + "\n")
		}
	}
	if len(off) > 0 {
		fmt.Fprintf(&b, "# %s\n", offWhy)
		for _, n := range off {
			b.WriteString(NotSet(n) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
