package claims

import (
	"regexp"
	"strings"
)

// pipeRows rewrites each block of rows cut by pipes that has no header row (every row holds a
// figure with its unit: "| net-next | 3.21 Mpps | 1.12 Mpps |" over "| patched | 3.94 Mpps |
// 1.30 Mpps |") as the same rows aligned by spaces, before any reader sees them (as csvTables
// does): the pipe tables' readers need a header to name the columns, and rows without one
// are read as labelled lines are. A block with a header row, or a rule, is left to them.
func pipeRows(lines []line) {
	for i := 0; i < len(lines); {
		j := i
		var rows [][]string
		for ; j < len(lines); j++ {
			cells := pipeCells(lines[j].text)
			if cells == nil || len(rows) > 0 && len(cells) != len(rows[0]) || len(readFigures(lines[j].text).measured()) == 0 {
				break
			}
			rows = append(rows, cells)
		}
		if len(rows) >= 2 && (i == 0 || pipeCells(lines[i-1].text) == nil && !separatorRe.MatchString(lines[i-1].text)) &&
			(j == len(lines) || !strings.Contains(lines[j].text, "|")) {
			for k, text := range alignColumns(rows) {
				lines[i+k].text = text
			}
		}
		i = max(j, i+1)
	}
}

// pipeCells are a line's cells between pipes, nil for a line of fewer than two, or a rule.
func pipeCells(text string) []string {
	t := strings.TrimSpace(text)
	if strings.Count(t, "|") < 1 || separatorRe.MatchString(t) {
		return nil
	}
	var cells []string
	for _, c := range strings.Split(strings.Trim(t, "|"), "|") {
		cells = append(cells, strings.TrimSpace(c))
	}
	if len(cells) < 2 {
		return nil
	}
	return cells
}

// markdownBoldRe is a span in markdown's bold ("**TCP_RR**", "__patched__"): its markers are
// no part of a label or a figure. A "**" between digits is a power ("2**20"), not markup.
var markdownBoldRe = regexp.MustCompile(`(\*\*)([^*\s](?:[^*\n]*[^*\s])?)(\*\*)|(__)([^_\s](?:[^_\n]*[^_\s])?)(__)`)

// openBoldRe is a bold marker that opens a line, before a word.
var openBoldRe = regexp.MustCompile(`^\s*(\*\*)[A-Za-z]`)

// markdownBold takes the bold markers out of a line: in a row aligned by spaces each marker
// becomes as many spaces, so that its columns stay where they are; elsewhere it goes.
func markdownBold(text string) string {
	if !strings.Contains(text, "**") && !strings.Contains(text, "__") {
		return text
	}
	if m := openBoldRe.FindStringSubmatchIndex(text); m != nil && strings.Count(text, "**") == 1 {
		// "**Pre-patch: 22.8 Mpps": bold opened at the start of a line and never closed (a
		// mail written as markdown, or the marker used as a bullet): no part of the label.
		text = text[:m[2]] + text[m[3]:]
	}
	aligned := strings.Contains(text, "  ")
	pad := ""
	if aligned {
		pad = "  "
	}
	var b strings.Builder
	last, from := 0, 0
	for from < len(text) {
		m := markdownBoldRe.FindStringSubmatchIndex(text[from:])
		if m == nil {
			break
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += from
			}
		}
		if (m[0] > 0 && isDigit(text[m[0]-1])) || (m[1] < len(text) && isDigit(text[m[1]])) {
			from = m[0] + 2 // a power's "**": the next marker may open a span
			continue
		}
		inner := m[4:6] // the span of "**x**", or of "__x__"
		if m[4] < 0 {
			inner = m[10:12]
		}
		b.WriteString(text[last:m[0]] + pad + text[inner[0]:inner[1]] + pad)
		last, from = m[1], m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
