package patches

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// Function is a C function a series changes: a changed line of File lies in its body or its
// definition.
type Function struct {
	Name string `json:"name"`
	File string `json:"file"`
}

// MaxFunctions bounds how many functions of a series are counted: a series that changes more
// is a rewrite, and its calls say little about which code a scenario ran.
const MaxFunctions = 32

// definition is the start of a C function definition at the top of a line, as `git diff`'s
// default funcname pattern and the hunk header see it: a line that begins with an identifier
// (static, an attribute, a return type) and names the function before its first "(".
var definition = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_ \t\*]*?\b([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(`)

// notFunctions are words before "(" at the top of a line that are not a function's name:
// keywords and the kernel's definition macros, whose symbol is another name.
var notFunctions = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true,
	"typeof": true, "__attribute__": true, "__section": true, "__aligned": true}

// functionName is the function a line at the top of a C file starts to define, if it does:
// not a declaration (ends with ";"), not a preprocessor line, not a macro in capitals
// (EXPORT_SYMBOL, BPF_CALL_2, SYSCALL_DEFINE3: their symbol is another name).
func functionName(line string) string {
	trimmed := strings.TrimRight(line, " \t")
	if strings.HasSuffix(trimmed, ";") || strings.HasPrefix(line, "#") {
		return ""
	}
	m := definition.FindStringSubmatch(line)
	if m == nil || notFunctions[m[1]] || strings.ToUpper(m[1]) == m[1] {
		return ""
	}
	return m[1]
}

// Functions are the functions whose code a series changes, in the order the diffs name them,
// at most MaxFunctions (more says truncated): for each changed line of a .c file, the function
// whose body holds it. A hunk starts in the function its header names (`@@ ... @@ static int
// foo(...)`, as git diff writes it); a definition at the top of a line inside the hunk starts
// the next, and a "}" at the top of a line ends it. A changed line outside any function (a
// table, a struct, an include) names none. Functions of headers are left out: a static inline
// function has no symbol of its own.
func Functions(series []Patch) (fns []Function, truncated bool) {
	for _, p := range series {
		for _, f := range p.Files {
			file := f.Path()
			if path.Ext(file) != ".c" {
				continue
			}
			for _, h := range f.Hunks {
				for _, name := range hunkFunctions(h) {
					fn := Function{Name: name, File: file}
					if slices.Contains(fns, fn) {
						continue
					}
					if len(fns) == MaxFunctions {
						return fns, true
					}
					fns = append(fns, fn)
				}
			}
		}
	}
	return fns, false
}

// hunkFunctions are the functions a hunk's changed lines are in.
func hunkFunctions(h Hunk) []string {
	var out []string
	current := functionName(h.Section)
	for _, l := range h.Lines {
		if name := functionName(l.Text); name != "" {
			current = name
		}
		if l.Op != ' ' && current != "" && !slices.Contains(out, current) {
			out = append(out, current)
		}
		if strings.HasPrefix(l.Text, "}") {
			current = "" // the function's body ended; the next lines are outside any until another starts
		}
	}
	return out
}

// Definitions are the functions a C file's text defines, in order: a definition at the top of
// a line (functionName) whose body's "{" comes before any ";" (a prototype over several
// lines ends in one). The kernel's own style puts the "{" alone on the next line.
func Definitions(text string) []string {
	var out []string
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		name := functionName(lines[i])
		if name == "" {
			continue
		}
		for j := i; j < len(lines) && j < i+12; j++ {
			l := strings.TrimRight(lines[j], " \t")
			if strings.HasPrefix(l, "{") || strings.HasSuffix(l, "{") {
				out = append(out, name)
				i = j
				break
			}
			if strings.HasSuffix(l, ";") || (j > i && functionName(lines[j]) != "") {
				break
			}
		}
	}
	return out
}
