package claims

import (
	"os"
	"testing"
)

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
		{"quoted in a sentence", "Measured with super_netperf 64 -t TCP_CRR -H 10.0.0.2 on two hosts:", "netperf", "TCP_CRR"},
		{"quoted in backquotes", "Each figure is the mean of `netperf -t UDP_RR -l 30`, five runs.", "netperf", "UDP_RR"},
		{"a sentence naming a tool only", "We ran netperf between the two hosts:", "", ""},
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

// TestQuotedCommand: a sentence that quotes a tool's command line gives the command, the
// program and its options with their values, up to the sentence's own words or punctuation;
// a sentence that names a tool without an option quotes no command.
func TestQuotedCommand(t *testing.T) {
	for _, c := range []struct{ sentence, want string }{
		{"Ran super_netperf 120 -t TCP_RR -H 127.0.0.1 on a 32-core box:", "super_netperf 120 -t TCP_RR -H 127.0.0.1"},
		{"Numbers from `iperf3 -c 10.0.0.2 -P 4`, mean of 5 runs.", "iperf3 -c 10.0.0.2 -P 4"},
		{"(sockperf pp -i 10.0.0.2 --msg-size 64) before and after:", "sockperf pp -i 10.0.0.2 --msg-size 64"},
		{"with netperf -t TCP_STREAM, 60 s each", "netperf -t TCP_STREAM"},
		{"netperf TCP_RR results:", ""},
		{"The iperf3 numbers below are of one stream.", ""},
		{"pktgen -> veth -> AF_PACKET consumer, 1 core each:", ""},
	} {
		if got := quotedCommand(c.sentence); got != c.want {
			t.Errorf("%q: %q, want %q", c.sentence, got, c.want)
		}
	}
}

// TestQuotedCommandGivesTheUnit: bare figures labelled by their states under a sentence that
// quotes a netperf request/response test are its transactions per second, and the claim is
// netperf's (the family's fixture, whose scorer compares figures only).
func TestQuotedCommandGivesTheUnit(t *testing.T) {
	const name = "testdata/families/command-quoted-in-a-sentence.txt"
	text, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(name, text)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Claims) != 1 {
		t.Fatalf("%d claims, want 1: %+v", len(r.Claims), r.Claims)
	}
	if c := r.Claims[0]; c.Unit != "trans/s" || c.Tool != "netperf" || c.Options["test"] != "TCP_RR" {
		t.Errorf("unit %q tool %q test %q, want trans/s netperf TCP_RR", c.Unit, c.Tool, c.Options["test"])
	}
}
