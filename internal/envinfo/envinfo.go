// Package envinfo fingerprints the machine a result was measured on.
package envinfo

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Tool is a program whose version a result records.
type Tool struct {
	Name  string
	Argv  []string            // prints the version
	Parse func(string) string // reads it; nil keeps the first line of the output
}

// Facts are what a result records of the machine (results.Environment, filled in from them).
type Facts struct {
	KernelRelease, KernelVersion, Machine, Hostname string
	CPUModel                                        string
	CPUs                                            int
	Tools                                           map[string]string // name -> version
}

// Collect reads the kernel, CPU and the versions of the given tools.
func Collect(tools []Tool) Facts {
	env := Facts{CPUs: runtime.NumCPU(), Tools: map[string]string{}}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		env.KernelRelease = unix.ByteSliceToString(u.Release[:])
		env.KernelVersion = unix.ByteSliceToString(u.Version[:])
		env.Machine = unix.ByteSliceToString(u.Machine[:])
		env.Hostname = unix.ByteSliceToString(u.Nodename[:])
	}
	env.CPUModel = cpuModel()
	for _, t := range tools {
		out, err := exec.Command(t.Argv[0], t.Argv[1:]...).CombinedOutput()
		if err != nil && len(out) == 0 {
			env.Tools[t.Name] = "unavailable: " + err.Error()
			continue
		}
		if t.Parse != nil {
			env.Tools[t.Name] = t.Parse(string(out))
		} else {
			env.Tools[t.Name] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
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
