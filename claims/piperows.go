package claims

import "strings"

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
