package topo

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/capability"
	"github.com/nsperf/nsperf/knobs"
	"github.com/nsperf/nsperf/scenarios"
	"github.com/nsperf/nsperf/testkit/testenv"
	"github.com/nsperf/nsperf/topo/plan"
)

const sysctlStates = `  - name: built
  - name: tuned
    sysctls:
      client: {net.ipv4.tcp_autocorking: 0, net.core.somaxconn: 1024}
      server: {net.ipv4.tcp_rmem: "4096 65536 1048576"}
  - name: older-kernel
    optional: true
    sysctls:
      client: {net.ipv4.tcp_tw_recycle: 1}
`

// TestSysctls: a state's sysctls are written in the namespace only (the machine's own values
// do not move), read back, reset to their built values by a state that leaves them out, and
// a change from outside during a sample is drift; a sysctl the namespace lacks (another
// kernel's: tcp_tw_recycle went in Linux 4.12) is a capability the state needs, found before
// anything is measured.
func TestSysctls(t *testing.T) {
	testenv.RequireRoot(t)
	s := vethScenario(t, sysctlStates)
	host := map[string]string{}
	for _, name := range []string{"net.ipv4.tcp_autocorking", "net.core.somaxconn", "net.ipv4.tcp_rmem"} {
		data, err := os.ReadFile(knobs.SysctlPath(name))
		if err != nil {
			t.Fatal(err)
		}
		host[name] = string(data)
	}
	t.Cleanup(func() { // after the teardown
		for name, v := range host {
			if data, _ := os.ReadFile(knobs.SysctlPath(name)); string(data) != v {
				t.Errorf("the machine's %s is %q, was %q", name, data, v)
			}
		}
	})
	l := buildRoot(t, s)
	read := func(ns, name string) string {
		var v string
		if err := l.Do(ns, func() error { var err error; v, err = readSysctl(ns, name); return err }); err != nil {
			t.Fatal(err)
		}
		return v
	}
	built, tuned, older := s.States[0], s.States[1], s.States[2]
	var ce *capability.Error
	if err := l.Check([]scenarios.State{older}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "sysctl net.ipv4.tcp_tw_recycle: namespace client has no such setting") {
		t.Errorf("Check of a sysctl this kernel lacks: %v", err)
	}
	if err := l.Check([]scenarios.State{built, tuned}); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{"client/net.ipv4.tcp_autocorking": read("client", "net.ipv4.tcp_autocorking"),
		"client/net.core.somaxconn": read("client", "net.core.somaxconn"), "server/net.ipv4.tcp_rmem": read("server", "net.ipv4.tcp_rmem")}
	for _, st := range []scenarios.State{tuned, built, tuned} {
		devices, err := l.Apply(st)
		if err != nil {
			t.Fatal(err)
		}
		want := before
		if st.Name == "tuned" {
			want = map[string]string{"client/net.ipv4.tcp_autocorking": "0", "client/net.core.somaxconn": "1024", "server/net.ipv4.tcp_rmem": "4096 65536 1048576"}
		}
		got := devices.Sysctls
		for key, v := range want {
			ns, name, _ := strings.Cut(key, "/")
			if read(ns, name) != v || got[ns][name] != v {
				t.Errorf("state %s: %s reads %q (recorded %q), want %q", st.Name, key, read(ns, name), got[ns][name], v)
			}
		}
		if drift, err := l.Drift(); err != nil || len(drift) > 0 {
			t.Errorf("state %s: drift %v %v right after applying", st.Name, drift, err)
		}
	}
	// Someone changes a sysctl in the namespace while the state is measured.
	l.Apply(tuned)
	if err := l.Do("client", func() error { return writeSysctl("client", "net.ipv4.tcp_autocorking", "1") }); err != nil {
		t.Fatal(err)
	}
	if drift, err := l.Drift(); err != nil || len(drift) != 1 || drift[0] != `sysctl net.ipv4.tcp_autocorking in client is "1", applied "0"` {
		t.Errorf("drift: %q %v", drift, err)
	}
	// The plan's equivalent.
	cmds := plan.StateShell(l.Plan.StateSteps(tuned))
	if want := "ip netns exec " + l.Namespace("client") + " sysctl -q -w net.core.somaxconn=1024 net.ipv4.tcp_autocorking=0"; len(cmds) == 0 || cmds[0] != want {
		t.Errorf("commands %q, want first %q", cmds, want)
	}
	if _, err := l.Apply(older); !errors.As(err, &ce) {
		t.Errorf("applying a sysctl this kernel lacks: %v, want a capability error", err)
	}
}

// TestCongestionControlSysctl: a namespace's default congestion control that the kernel lacks
// is a missing capability naming the option that builds it, found by Check before anything is
// measured and, from the kernel's own answer (ENOENT), when written; one the kernel has but
// does not allow a namespace (not in the machine's net.ipv4.tcp_allowed_congestion_control:
// EPERM) names that list. The machine's own congestion control does not move.
func TestCongestionControlSysctl(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(knobs.SysctlPath(name))
		if err != nil {
			t.Fatal(err)
		}
		return knobs.SysctlValue(string(data))
	}
	// One the kernel has and a namespace may not take, if this machine has one.
	restricted := ""
	allowed := strings.Fields(read("net.ipv4.tcp_allowed_congestion_control"))
	for _, cc := range strings.Fields(read("net.ipv4.tcp_available_congestion_control")) {
		if !slices.Contains(allowed, cc) {
			restricted = cc
		}
	}
	states := "  - name: built\n  - name: reno\n    sysctls: {client: {net.ipv4.tcp_congestion_control: reno}}\n" +
		"  - name: missing\n    optional: true\n    sysctls: {client: {net.ipv4.tcp_congestion_control: nosuchcc}}\n"
	if restricted != "" {
		states += "  - name: restricted\n    optional: true\n    sysctls: {client: {net.ipv4.tcp_congestion_control: " + restricted + "}}\n"
	}
	s := vethScenario(t, states)
	host := read(knobs.CongestionControlSysctl)
	l := buildRoot(t, s)
	t.Cleanup(func() {
		if got := read(knobs.CongestionControlSysctl); got != host {
			t.Errorf("the machine's congestion control is %s, was %s", got, host)
		}
	})
	if err := l.Check(s.States[:2]); err != nil {
		t.Fatal(err)
	}
	if rec, err := l.Apply(s.States[1]); err != nil || rec.Sysctls["client"][knobs.CongestionControlSysctl] != "reno" {
		t.Fatalf("reno: %v, %v", err, rec.Sysctls)
	}
	missing := "sysctl net.ipv4.tcp_congestion_control=nosuchcc in client: this kernel has no nosuchcc congestion control: it needs CONFIG_TCP_CONG_NOSUCHCC (module tcp_nosuchcc; loaded here: "
	var ce *capability.Error
	if err := l.Check(s.States[2:3]); !errors.As(err, &ce) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Check: %v\nwant %s", err, missing)
	}
	if _, err := l.Apply(s.States[2]); !errors.As(err, &ce) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Apply: %v\nwant %s", err, missing)
	}
	if restricted == "" {
		return
	}
	notAllowed := "sysctl net.ipv4.tcp_congestion_control=" + restricted + " in client: a network namespace may take only a congestion control of the machine's net.ipv4.tcp_allowed_congestion_control"
	if err := l.Check(s.States[3:]); !errors.As(err, &ce) || !strings.Contains(err.Error(), notAllowed) {
		t.Errorf("Check: %v\nwant %s", err, notAllowed)
	}
	if _, err := l.Apply(s.States[3]); !errors.As(err, &ce) || !strings.Contains(err.Error(), notAllowed) {
		t.Errorf("Apply: %v\nwant %s", err, notAllowed)
	}
}
