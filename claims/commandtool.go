package claims

import (
	"regexp"
	"slices"
	"strings"

	"github.com/nsperf/nsperf/scenarios"
)

// commandToolReach is how many lines above a claim's first the command that printed its
// figures may be: the command, perhaps a heading or a state's name, then the figures.
const commandToolReach = 12

// commandTools gives a claim no tool's grammar read (a labelled line, a table, prose) the
// tool of the command right above its figures, where that command runs a tool of the registry
// (scenarios.ToolNames, super_netperf as netperf): "$ netperf -H 10.0.0.2 -t TCP_RR" over
// "before: 41002 tps" is netperf's TCP_RR. The nearest command decides; one of another program
// (ip, ethtool, a script) leaves the claim's tool unknown. A heading that names a tool is no
// command ("netperf TCP_RR results:"): its words may name the tool of a comparison, or not.
func (r *Report) commandTools(lines []line) {
	index := map[int]int{}
	for k, l := range lines {
		index[l.n] = k
	}
	for k := range r.Claims {
		c := &r.Claims[k]
		if c.Tool != "" || len(c.Lines) == 0 {
			continue
		}
		at, ok := index[slices.Min(c.Lines)]
		if !ok {
			continue
		}
		for j := at - 1; j >= 0 && at-j <= commandToolReach; j-- {
			if perfStatBannerRe.MatchString(lines[j].text) {
				break // "Performance counter stats for './super_netperf ...'": perf's counters
			}
			cmd := quotedCommand(lines[j].text)
			if isCommand(lines[j].text) {
				cmd = commandText(lines[j].text)
			}
			if cmd == "" {
				continue
			}
			if strings.HasSuffix(cmd, "&") {
				break // a load run in the background: what follows is measured by something else
			}
			if tool := registryTool(cmd); tool != "" {
				c.Tool, c.Command = tool, cmd
				if tool == "netperf" {
					c.Options = copyConds(c.Options)
					for key, v := range netperfOptions(cmd) {
						if _, set := c.Options[key]; !set {
							c.Options[key] = v
						}
					}
				}
			}
			break
		}
	}
}

// quotedCommand is the command a sentence quotes ("Measured with super_netperf 200 -t TCP_RR
// on loopback:"): a tool of the registry and the options after it, each option's value and a
// count right after the program; "" where the sentence names no tool, or names one without
// an option ("netperf TCP_RR results:", which names a test, not how it was run).
func quotedCommand(text string) string {
	f := strings.Fields(text)
	at := slices.IndexFunc(f, func(w string) bool { return registryTool(strings.Trim(w, "`'\"(")) != "" })
	if at < 0 {
		return ""
	}
	cmd, options := []string{strings.Trim(f[at], "`'\"(")}, 0
words:
	for k, raw := range f[at+1:] {
		w := strings.TrimRight(raw, "`'\"),:;")
		prev := cmd[len(cmd)-1]
		switch {
		case optionWordRe.MatchString(w):
			options++
		case strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") && prev != "--":
			// the option's value ("-t TCP_RR", "-H 10.0.0.2")
		case k == 0 && cpuListRe.MatchString(w):
			// super_netperf's count of instances
		case k == 0 && subcommandRe.MatchString(w) && at+2 < len(f) && optionWordRe.MatchString(f[at+2]):
			// the program's subcommand before its options ("sockperf pp -i ...")
		default:
			break words
		}
		cmd = append(cmd, w)
		if w != raw {
			break // the sentence goes on after the punctuation
		}
	}
	if options == 0 {
		return ""
	}
	return strings.Join(cmd, " ")
}

// optionWordRe is a command's option: "-t", "--msg-size", "-4" (not an arrow, "->").
var optionWordRe = regexp.MustCompile(`^--?[A-Za-z0-9]`)

// subcommandRe is a word a program takes as its subcommand: "pp", "ping-pong", "redirect".
var subcommandRe = regexp.MustCompile(`^[a-z][a-z-]*$`)

// cpuListRe is a wrapper's value: a CPU, a list or a range of them, a node ("2", "0-3,8").
var cpuListRe = regexp.MustCompile(`^[\d,-]+$`)

// registryTool is the tool of the registry a command runs ("" for another program), past the
// wrappers that run it (sudo, taskset -c 2, ip netns exec NS).
func registryTool(cmd string) string {
	f := strings.Fields(cmd)
	for len(f) > 0 {
		switch {
		case commandWrappers[f[0]]:
			f = f[1:]
			for len(f) > 0 && (strings.HasPrefix(f[0], "-") || cpuListRe.MatchString(f[0])) {
				f = f[1:] // the wrapper's options and their values ("taskset -c 2")
			}
			continue
		case len(f) > 3 && f[0] == "ip" && f[1] == "netns" && f[2] == "exec":
			f = f[4:]
			continue
		}
		break
	}
	if len(f) == 0 {
		return ""
	}
	program := strings.TrimPrefix(f[0], "./")
	program = program[strings.LastIndexByte(program, '/')+1:]
	if program == "super_netperf" {
		return "netperf"
	}
	if slices.Contains(scenarios.ToolNames(), program) {
		return program
	}
	return ""
}
