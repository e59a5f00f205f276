package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// choice is a flag that takes one of a fixed list of values, checked when the command line is
// parsed (exit 2 with the list). "text" is taken for "table" wherever table is a choice: the
// human-readable format has one name in every command, and the older word still works.
type choice struct {
	value   *string
	allowed []string
}

func (c choice) String() string { return *c.value }
func (c choice) Type() string   { return "string" }

func (c choice) Set(v string) error {
	if v == "text" && slices.Contains(c.allowed, "table") {
		v = "table"
	}
	if !slices.Contains(c.allowed, v) {
		return fmt.Errorf("%q: want %s", v, orList(c.allowed))
	}
	*c.value = v
	return nil
}

// formatFlag adds --format, one of allowed; the first is the default.
func formatFlag(fs *pflag.FlagSet, p *string, allowed ...string) {
	*p = allowed[0]
	fs.Var(choice{p, allowed}, "format", "output: "+orList(allowed))
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
