package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nsperf/nsperf/results"

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

// sideMetricsFlag adds --side-metrics N|all: how many side metrics each comparison of the
// table shows.
func sideMetricsFlag(fs *pflag.FlagSet, p *results.TableOptions) {
	*p = results.DefaultTableOptions
	fs.Var(sideMetrics{p}, "side-metrics", fmt.Sprintf("side metrics per comparison in the table, the strongest first: a number (0: none) or all (default %d; the JSON and HTML hold them all)", results.DefaultTableOptions.SideMetrics))
}

type sideMetrics struct{ opt *results.TableOptions }

func (s sideMetrics) String() string {
	if s.opt == nil {
		return ""
	}
	if s.opt.SideMetrics == results.AllSideMetrics {
		return "all"
	}
	return strconv.Itoa(s.opt.SideMetrics)
}

func (s sideMetrics) Type() string { return "N|all" }

func (s sideMetrics) Set(v string) error {
	if v == "all" {
		s.opt.SideMetrics = results.AllSideMetrics
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("%q: want a number of side metrics (0: none) or all", v)
	}
	s.opt.SideMetrics = n
	return nil
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
