package claims

import "testing"

// TestCommandTools: a claim read from labelled lines takes the tool of the command right
// above it when a tool of the registry runs there, with netperf's test from its -t (or its
// default) and under the wrappers that run it; a command of another program, a load left in
// the background, a heading that names a tool or a command too far up give none.
func TestCommandTools(t *testing.T) {
	const results = "\nbefore: 41002 tps\nafter:  43877 tps\n"
	for _, tc := range []struct {
		name, above, tool, test string
	}{
		{"netperf under a prompt", "$ netperf -H 10.0.0.2 -t TCP_RR -l 30", "netperf", "TCP_RR"},
		{"netperf's default test", "# ./netperf -H 10.0.0.2", "netperf", "TCP_STREAM"},
		{"in a namespace, pinned", "$ sudo ip netns exec cli taskset -c 2 iperf3 -c 10.0.0.2", "iperf3", ""},
		{"super_netperf", "$ ./super_netperf 8 -H 10.0.0.2 -t UDP_RR", "netperf", "UDP_RR"},
		{"another program", "$ ethtool -K eth0 gro on", "", ""},
		{"in the background", "$ netperf -H 10.0.0.2 -t TCP_RR -l 600 &", "", ""},
		{"a heading", "netperf TCP_RR results:", "", ""},
		{"too far up", "$ netperf -H 10.0.0.2 -t TCP_RR\n\n\n\n\n\n\n\n\n\n\n\n", "", ""},
	} {
		r, err := Read("m", []byte("Subject: x\n\n"+tc.above+"\n"+results))
		if err != nil || len(r.Claims) != 1 {
			t.Fatalf("%s: %v %+v", tc.name, err, r)
		}
		if c := r.Claims[0]; c.Tool != tc.tool || c.Options["test"] != tc.test {
			t.Errorf("%s: tool %q test %q, want %q %q", tc.name, c.Tool, c.Options["test"], tc.tool, tc.test)
		}
	}
}
