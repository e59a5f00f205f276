package claims

import (
	"encoding/csv"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A table pasted as CSV ("test,baseline,patched" over "TCP_RR,31020,33610") is read as the
// same table aligned in columns: csvTables rewrites its lines so, before any reader sees them.
// A block is a CSV table when it has a header row of names and at least one row of figures,
// every row with the same number of fields (two or more), and no row has what an aligned table
// or a command or a label has (a run of spaces, a tab, a prompt, "label: "), and no comma
// groups a number's thousands: one line of CSV alone (netperf -o's
// output under its command) stays as it is, for its tool's reader.

// csvMinRows is the least rows of a CSV table: its header and one row of figures.
const csvMinRows = 2

// csvTables rewrites each CSV table among lines as aligned columns, two spaces apart.
func csvTables(lines []line) {
	for i := 0; i < len(lines); {
		j := i
		var rows [][]string
		for ; j < len(lines); j++ {
			var f []string
			if len(rows) == 0 {
				f = csvFields(lines[j].text, false)
			} else if f = csvFields(lines[j].text, true); len(f) == len(rows[0])-1 && strings.TrimSpace(rows[0][0]) == "" {
				// under a header with an empty corner, a row whose label and first figure
				// only a space parts ("Downlink 620 Mbps, 719 Mbps" under ", base, patched")
				if m := labelledFieldRe.FindStringSubmatch(f[0]); m != nil {
					f = append([]string{m[1], m[2]}, f[1:]...)
				}
			}
			if len(rows) > 0 && f != nil && len(f) != len(rows[0]) {
				break // under a header, a comma parts fields when the row has the header's count
			}
			if f == nil {
				break
			}
			rows = append(rows, f)
		}
		if len(rows) >= csvMinRows && csvHeaderAndFigures(rows) {
			for k, text := range alignColumns(rows) {
				lines[i+k].text = text
			}
		}
		i = max(j, i+1)
	}
}

// labelledFieldRe is a field of a label and a figure apart by a space: "Uplink 380 Mbps".
var labelledFieldRe = regexp.MustCompile(`^([A-Za-z][\w ./-]*?)\s+(~?\d[\d.]*\s*[A-Za-zµ%/]*)$`)

// thousandsRe is a comma that groups a number's thousands ("12,345 tps"), not one that parts
// fields.
var thousandsRe = regexp.MustCompile(`\d,\d{3}(?:[^\d,]|$)`)

// csvFields is a line's fields when it is a CSV record of two or more, nil when it is not one.
// underHeader: the line follows a CSV header, whose count of fields decides whether a comma
// between digits parts fields ("8,112.7,121.9" under "flows,base,patched") or groups a
// number's thousands.
func csvFields(text string, underHeader bool) []string {
	t := strings.TrimSpace(text)
	if !strings.Contains(t, ",") || strings.Contains(t, "  ") || strings.Contains(t, ": ") || strings.ContainsAny(t, "\t|") ||
		strings.HasPrefix(t, "$") || strings.HasPrefix(t, "#") || (!underHeader && thousandsRe.MatchString(t)) {
		return nil
	}
	r := csv.NewReader(strings.NewReader(t))
	r.TrimLeadingSpace = true
	rec, err := r.Read()
	if err != nil || len(rec) < 2 {
		return nil
	}
	for k, f := range rec {
		if strings.TrimSpace(f) == "" && (k > 0 || underHeader) {
			return nil // a header's corner may be empty (", base, patched"), no other field
		}
	}
	return rec
}

// csvHeaderAndFigures: the first row names its columns (no figure in any cell but the first's
// own) and every other row has a figure in each column but the first.
func csvHeaderAndFigures(rows [][]string) bool {
	for _, h := range rows[0][1:] {
		if _, ok := parseNumber(h); ok {
			return false
		}
	}
	for _, row := range rows[1:] {
		for _, cell := range row[1:] {
			if _, ok := parseNumber(cell); !ok {
				if _, _, ok := parseValue(cell); !ok {
					return false
				}
			}
		}
	}
	return true
}

// alignColumns lays rows out in columns, each as wide as its widest cell and two spaces apart.
func alignColumns(rows [][]string) []string {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for c, cell := range row {
			width[c] = max(width[c], utf8.RuneCountInString(cell))
		}
	}
	out := make([]string, len(rows))
	for k, row := range rows {
		var b strings.Builder
		for c, cell := range row {
			b.WriteString(cell)
			if c < len(row)-1 {
				b.WriteString(strings.Repeat(" ", width[c]-utf8.RuneCountInString(cell)+2))
			}
		}
		out[k] = b.String()
	}
	return out
}
