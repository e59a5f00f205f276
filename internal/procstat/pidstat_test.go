package procstat

import (
	"os"
	"testing"
	"time"
)

func TestParsePID(t *testing.T) {
	for _, c := range []struct {
		stat    string
		ok      bool
		state   string
		ppid    int
		exited  bool
		kthread bool
		cpu     time.Duration
	}{
		// A running process: utime 150 and stime 50 ticks are 2 s.
		{"4242 (iperf3) R 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 1 0 300 2490368", true, "R", 1, false, false, 2 * time.Second},
		{"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 4 0 0 20 0 1 0 1 0 0", true, "S", 0, false, true, 40 * time.Millisecond},
		{"77 (a) b) Z 1 1 1 0 -1 4194560", true, "Z", 1, true, false, 0}, // the name ends at the last ")"
		{"78 (x) X", true, "X", 0, true, false, 0},
		{"79 (no fields)", false, "", 0, false, false, 0},
		{"garbage", false, "", 0, false, false, 0},
	} {
		st, ok := ParsePID([]byte(c.stat))
		if ok != c.ok || st.State() != c.state || st.PPID() != c.ppid || st.Exited() != c.exited || st.KernelThread() != c.kthread || st.CPUTime() != c.cpu {
			t.Errorf("%q: ok %v state %q ppid %d exited %v kthread %v cpu %v", c.stat, ok, st.State(), st.PPID(), st.Exited(), st.KernelThread(), st.CPUTime())
		}
	}
	self, ok := ReadPID(os.Getpid())
	if !ok || self.Exited() || self.State() == "" {
		t.Errorf("this process: ok %v, state %q", ok, self.State())
	}
	if _, ok := ReadPID(-1); ok {
		t.Error("pid -1 was read")
	}
}

func FuzzParsePID(f *testing.F) {
	f.Add([]byte("4242 (iperf3) R 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 1 0 300 2490368"))
	f.Add([]byte("2 (a) b) S 0 0"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, stat []byte) {
		st, _ := ParsePID(stat)
		_, _, _, _, _ = st.State(), st.PPID(), st.Exited(), st.KernelThread(), st.CPUTime()
	})
}
