// Package shellq quotes values for the shell scripts and command lines nsperf prints
// (`nsperf plan`, `--format netdev`): names are validated to be plain words, and are quoted
// anyway, so that no value can ever be read as shell syntax.
package shellq

import (
	"regexp"
	"strings"
)

var unsafe = regexp.MustCompile(`[^A-Za-z0-9_./:=,@%+-]`)

// Word returns s as one shell word: as it is when it holds only characters the shell takes
// literally, else in single quotes.
func Word(s string) string {
	if s != "" && !unsafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes every argument and joins them with spaces.
func Join(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = Word(a)
	}
	return strings.Join(out, " ")
}
