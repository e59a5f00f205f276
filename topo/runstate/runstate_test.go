package runstate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nsperf/nsperf/internal/procstat"
)

// FuzzParse: whatever a state file holds, what Parse accepts names only the run's own
// namespaces and directory.
func FuzzParse(f *testing.F) {
	good, _ := json.Marshal(&StateFile{RunID: "nsp1234", Namespaces: []string{"nsp1234-client", "nsp1234-ovs"}, Dirs: []string{OVSDir("nsp1234")}})
	f.Add(good)
	f.Add([]byte(`{"run_id":"nsp1234","namespaces":["../../proc/1/ns/net"]}`))
	f.Add([]byte(`{"run_id":"nsp1234","namespaces":["nsp1234-a/../../x"],"dirs":["/"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := Parse("nsp1234", data)
		if err != nil {
			return
		}
		for _, ns := range o.Namespaces {
			if !strings.HasPrefix(ns, "nsp1234-") || strings.ContainsAny(ns, "/.") || filepath.Base(ns) != ns {
				t.Fatalf("accepted namespace %q", ns)
			}
		}
		for _, d := range o.Dirs {
			if d != OVSDir("nsp1234") {
				t.Fatalf("accepted directory %q", d)
			}
		}
	})
}

// TestKernelThreadsAreSkipped: the teardown's sweep of /proc leaves out kthreadd and its
// children, which never run in a namespace nsperf made, and only when pid 2 is kthreadd.
func TestKernelThreadsAreSkipped(t *testing.T) {
	for _, c := range []struct {
		stat string
		want bool
	}{
		{"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 4 0 0 20 0 1 0 1 0 0", true},
		// pid 2 of a container's PID namespace: an ordinary process, whatever its name.
		{"2 (kthreadd) S 1 1 1 0 -1 4194560 120 0 0 0 0 0 0 0 20 0 1 0 300 2490368", false},
		{"2 (a) b) S 0 0 0 0 -1 2129984", true}, // the name ends at the last ")"
		{"2 (short) S 0 0", false},
		{"garbage", false},
	} {
		if st, _ := procstat.ParsePID([]byte(c.stat)); st.KernelThread() != c.want {
			t.Errorf("KernelThread of %q = %v, want %v", c.stat, st.KernelThread(), c.want)
		}
	}
	if _, err := os.Stat("/proc/2/task/2/children"); err != nil {
		t.Skipf("no children file of pid 2 (CONFIG_PROC_CHILDREN?): %v", err)
	}
	kt := kernelThreads()
	if !kt["2"] || len(kt) < 2 {
		t.Fatalf("kernel threads %v: want kthreadd and its children", kt)
	}
	if kt[strconv.Itoa(os.Getpid())] || kt["1"] {
		t.Errorf("kernel threads %v include this process or init", kt)
	}
	threads := 0
	for pid := range kt {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		st, _ := procstat.ParsePID(stat)
		if st.KernelThread() {
			threads++
		}
		// A child of kthreadd: a kernel thread, or a helper the kernel started (modprobe).
		if pid != "2" && st.PPID() != 2 {
			t.Errorf("pid %s is no child of kthreadd: %s", pid, stat)
		}
	}
	if threads < 2 {
		t.Errorf("only %d kernel threads among %v", threads, kt)
	}
}
