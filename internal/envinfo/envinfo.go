// Package envinfo fingerprints the machine a result was measured on.
package envinfo

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/results"
)

// Collect reads the kernel, CPU and the versions of the given tools (name -> argv that prints
// the version; the first line of its output is kept unless parse is given).
func Collect(tools map[string][]string, parse map[string]func(string) string) results.Environment {
	env := results.Environment{CPUs: runtime.NumCPU(), Tools: map[string]string{}}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		env.KernelRelease = unix.ByteSliceToString(u.Release[:])
		env.KernelVersion = unix.ByteSliceToString(u.Version[:])
		env.Machine = unix.ByteSliceToString(u.Machine[:])
		env.Hostname = unix.ByteSliceToString(u.Nodename[:])
	}
	env.CPUModel = cpuModel()
	for name, argv := range tools {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil && len(out) == 0 {
			env.Tools[name] = "unavailable: " + err.Error()
			continue
		}
		if p := parse[name]; p != nil {
			env.Tools[name] = p(string(out))
		} else {
			env.Tools[name] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		}
	}
	return env
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
