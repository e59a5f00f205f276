package procstat

import (
	"strconv"
	"strings"
)

// ParseCPUList reads a kernel CPU list, as in isolcpus= or a task's Cpus_allowed_list
// ("0-3,8"). Parts it cannot read are skipped.
func ParseCPUList(s string) []int {
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for n := a; n <= b && n-a < 4096; n++ {
			out = append(out, n)
		}
	}
	return out
}

// FormatCPUList writes CPUs as the kernel does in Cpus_allowed_list: ascending runs as
// ranges ("0-3,8").
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
