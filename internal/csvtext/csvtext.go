// Package csvtext keeps free text in CSV cells from being read as a formula by a spreadsheet
// (CSV injection, as OWASP names it): a cell that begins with =, +, -, @, a tab or a carriage
// return gets a leading single quote, which spreadsheets show as text and a reader can strip.
// Numbers are never passed through it: their minus sign is data.
package csvtext

import "strings"

// Text returns s safe to put in a CSV cell as text, and readable as it was.
func Text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
