package runner

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/nsperf/nsperf/internal/shellq"
	"github.com/nsperf/nsperf/runner/tool"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/topo/plan"
)

var unsafeIdent = regexp.MustCompile(`[^A-Za-z0-9_]`)

var shellQuote = shellq.Join

// Script renders a run as a shell script of iproute2, ethtool and iperf3 commands that a
// reader can run by hand: per matrix case, the topology, one function per state and per
// workload, the schedule, and the cleanup. nsperf itself does the same through netlink and
// ethtool ioctls, and reads every value back. facts are what the plan needs of the machine (the
// datapath an OVS datapath of auto stands for: topo.PlanFacts()).
func Script(s *scenarios.Scenario, id plan.RunID, facts plan.Facts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# nsperf plan: scenario %s as run %s; %d runs per state, %s order.\n", s.Name, id, s.Runs, s.Order)
	b.WriteString("# What `nsperf run` does, as iproute2, ethtool and iperf3 commands (nsperf itself uses\n")
	b.WriteString("# netlink and reads every value back). Knobs and features a state leaves out are reset by\n")
	b.WriteString("# nsperf to the values the device had when it was built; this script leaves them as they are.\n")
	b.WriteString("set -e\n")
	// The run's lock, as nsperf's own run holds it: nsperf cleanup (another user's, a test's)
	// leaves a run alone while a process holds its lock, and removes what a killed one left.
	lock := shellq.Word(id.LockPath())
	fmt.Fprintf(&b, "\n# the run's lock, held while this script runs (flock(1)): nsperf cleanup leaves a live run\n# alone; the tools do not inherit it (9>&-), so a killed script's run is cleaned\n")
	fmt.Fprintf(&b, "mkdir -p %s\nexec 9>>%s\n", shellq.Word(plan.StateDir), lock)
	fmt.Fprintf(&b, "flock -n 9 || { echo \"run %s is in progress: another process holds %s\" >&2; exit 1; }\n", id, id.LockPath())
	// Servers are waited for, but not for ever: a server that never listens (a namespace gone,
	// a port taken) ends the script with why.
	b.WriteString("\n# listening NS PORT: waits up to 30 s for a TCP server on PORT in namespace NS (ss)\n")
	b.WriteString("listening() {\n\ttries=0\n\tuntil ip netns exec \"$1\" ss -Hltn \"sport = :$2\" | grep -q .; do\n")
	b.WriteString("\t\ttries=$((tries + 1))\n\t\t[ \"$tries\" -lt 300 ] || { echo \"no server listens on port $2 in $1 after 30 s\" >&2; return 1; }\n")
	b.WriteString("\t\tsleep 0.1\n\tdone\n}\n")
	for _, c := range s.Expand() {
		if c.Label() != "" {
			fmt.Fprintf(&b, "\n######## case %s\n", c.Label())
		}
		caseScript(&b, c.Scenario, id, facts)
	}
	return b.String()
}

// caseScript writes one matrix case: its cleanup, its topology, a function per state and per
// workload, the case's shared servers, and the schedule of calls.
func caseScript(b *strings.Builder, s *scenarios.Scenario, id plan.RunID, facts plan.Facts) {
	p := plan.New(s, id, facts)
	b.WriteString("\nservers=\"\"\ncleanup() {\n\t[ -z \"$servers\" ] || kill $servers 2>/dev/null || true\n")
	for _, line := range strings.Split(strings.TrimSpace(p.UndoShell()), "\n") {
		fmt.Fprintf(b, "\t%s 2>/dev/null || true\n", line)
	}
	fmt.Fprintf(b, "}\ntrap 'cleanup; rm -f %s' EXIT\n\n# topology\n", shellq.Word(id.LockPath()))
	b.WriteString(p.Shell())
	stateFn := stateFunctions(b, s, p)
	workFn := map[string]string{}
	for i, w := range s.Workloads {
		workFn[w.Name] = workloadFunction(b, i, w, id)
	}
	sharedServers(b, s, id)
	scheduleCalls(b, s, stateFn, workFn)
	b.WriteString("cleanup\n")
}

// stateFunctions writes a shell function per state of s, which applies it, and returns their
// names by state.
func stateFunctions(b *strings.Builder, s *scenarios.Scenario, p *plan.Plan) map[string]string {
	stateFn := map[string]string{}
	for i, st := range s.States {
		fn := fmt.Sprintf("state%d_%s", i, unsafeIdent.ReplaceAllString(st.Name, "_"))
		stateFn[st.Name] = fn
		role := " (baseline)"
		if i > 0 {
			role = " (compared with " + s.Baseline(st) + ")"
		}
		if st.Optional {
			role += " (optional)"
		}
		fmt.Fprintf(b, "\n# state %s%s\n%s() {\n", st.Name, role, fn)
		lines := plan.StateShell(p.StateSteps(st))
		if len(lines) == 0 {
			lines = []string{":"}
		}
		for _, line := range lines {
			b.WriteString("\t" + line + "\n")
		}
		b.WriteString("}\n")
	}
	return stateFn
}

// workloadFunction writes the shell function of workload w, the index-th of its scenario, which
// runs it once: its one-off servers started and listening, then its clients, waited for.
// It returns the function's name.
func workloadFunction(b *strings.Builder, index int, w scenarios.Workload, id plan.RunID) string {
	fn := fmt.Sprintf("workload%d_%s", index, unsafeIdent.ReplaceAllString(w.Name, "_"))
	d, instances := driver(w), w.Instances()
	fmt.Fprintf(b, "\n# workload %s\n%s() {\n", w.Name, fn)
	if len(instances) > 1 {
		fmt.Fprintf(b, "\t# %d clients at once, each with its CPUs and ports\n", len(instances))
	}
	// Only this run's own jobs are waited for: the case's servers are jobs of the shell too.
	var jobs []string
	if pr, ok := d.(tool.Preparer); ok {
		for _, spec := range instances {
			if argv := pr.Prepare(spec); argv != nil {
				fmt.Fprintf(b, "\tip netns exec %s %s 9>&-\n", shellq.Word(id.Namespace(clientNS(spec))), shellQuote(argv))
			}
		}
	}
	var interrupted []int
	for i, spec := range instances {
		srv := d.Server(spec)
		if !srv.PerRun {
			continue
		}
		ns := shellq.Word(id.Namespace(srv.NS))
		if srv.Ready != nil {
			// A server that binds no port says when it is ready (xdp-bench once its program
			// is attached); it runs until interrupted, and prints what it measured then.
			fmt.Fprintf(b, "\tout%d=$(mktemp)\n\tip netns exec %s %s >\"$out%d\" 2>&1 9>&- &\n\tserver%d=$!\n", i, ns, shellQuote(srv.Argv), i, i)
			fmt.Fprintf(b, "\tuntil grep -qE %s \"$out%d\"; do sleep 0.1; done\n", shellq.Word(srv.Ready.String()), i)
		} else {
			fmt.Fprintf(b, "\tip netns exec %s %s >/dev/null 9>&- &\n\tserver%d=$!\n", ns, shellQuote(srv.Argv), i)
			fmt.Fprintf(b, "\tlistening %s %d\n", ns, srv.Port)
		}
		if srv.Interrupt {
			interrupted = append(interrupted, i)
		} else {
			jobs = append(jobs, fmt.Sprintf("$server%d", i))
		}
	}
	for i, spec := range instances {
		fmt.Fprintf(b, "\tip netns exec %s %s 9>&-", shellq.Word(id.Namespace(clientNS(spec))), shellQuote(d.Client(spec)))
		if len(instances) > 1 {
			fmt.Fprintf(b, " &\n\tclient%d=$!", i)
			jobs = append(jobs, fmt.Sprintf("$client%d", i))
		}
		b.WriteString("\n")
	}
	if len(jobs) > 0 {
		fmt.Fprintf(b, "\twait %s\n", strings.Join(jobs, " "))
	}
	for _, i := range interrupted {
		fmt.Fprintf(b, "\tkill -INT $server%d; wait $server%d\n", i, i)
		if srv := d.Server(instances[i]); srv.Ready != nil {
			fmt.Fprintf(b, "\tcat \"$out%d\"; rm -f \"$out%d\"\n", i, i)
		}
	}
	b.WriteString("}\n")
	return fn
}

// sharedServers writes the start of the servers that live through the case (netserver), one
// per Key, each waited for until it listens; cleanup kills them.
func sharedServers(b *strings.Builder, s *scenarios.Scenario, id plan.RunID) {
	started := map[string]bool{}
	for _, w := range s.Workloads {
		for _, spec := range w.Instances() {
			srv := driver(w).Server(spec)
			if srv.PerRun || srv.None() || started[srv.Key] {
				continue
			}
			started[srv.Key] = true
			ns := shellq.Word(id.Namespace(srv.NS))
			fmt.Fprintf(b, "\n# %s for the case, in the foreground of a background job\nip netns exec %s %s >/dev/null 2>&1 9>&- &\nservers=\"$servers $!\"\n", serverName(srv), ns, shellQuote(srv.Argv))
			fmt.Fprintf(b, "listening %s %d\n", ns, srv.Port)
		}
	}
}

// scheduleCalls writes the schedule as calls, a line a round: each state's function in the
// round's order, each followed by every workload's.
func scheduleCalls(b *strings.Builder, s *scenarios.Scenario, stateFn, workFn map[string]string) {
	var seed int64
	if s.Seed != nil {
		seed = *s.Seed
	}
	b.WriteString("\n# schedule\n")
	for r, round := range Schedule(s.StateNames(), s.Runs, s.Order, seed) {
		var calls []string
		for _, st := range round {
			calls = append(calls, stateFn[st])
			for _, w := range s.Workloads {
				calls = append(calls, workFn[w.Name])
			}
		}
		fmt.Fprintf(b, "%s  # round %d\n", strings.Join(calls, "; "), r+1)
	}
}

// clientNS is the namespace a workload's client runs in.
func clientNS(spec scenarios.ToolSpec) string {
	client, _ := spec.Ends()
	return client.NS
}
