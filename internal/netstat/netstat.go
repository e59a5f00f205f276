// Package netstat reads the kernel's network counters as nstat names them: /proc/net/snmp and
// /proc/net/netstat (a header line and a value line per protocol: IpInReceives,
// TcpExtTCPOFOQueue), /proc/net/snmp6 (one name and value per line), and the per-CPU
// /proc/net/softnet_stat, the lines of /proc/softirqs and of /proc/interrupts. Parsing only: the caller
// reads the files inside the namespace it means.
package netstat

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
)

// Counters are named counter values.
type Counters map[string]uint64

// ParseSNMP reads the two-line format of /proc/net/snmp and /proc/net/netstat into out: for
// each "Proto: A B C" header followed by "Proto: 1 2 3", ProtoA=1, ProtoB=2, ProtoC=3. Values
// that are not unsigned numbers (Tcp MaxConn is -1) are skipped, as are lines that do not pair.
func ParseSNMP(data []byte, out Counters) {
	lines := strings.Split(string(data), "\n")
	for i := 0; i+1 < len(lines); i++ {
		proto, names, ok := strings.Cut(lines[i], ":")
		proto2, values, ok2 := strings.Cut(lines[i+1], ":")
		if !ok || !ok2 || proto != proto2 || proto == "" {
			continue
		}
		n, v := strings.Fields(names), strings.Fields(values)
		if len(n) != len(v) || len(v) == 0 {
			continue
		}
		if _, err := strconv.ParseInt(v[0], 10, 64); err != nil {
			continue // two header lines in a row
		}
		for k := range n {
			if x, err := strconv.ParseUint(v[k], 10, 64); err == nil {
				out[proto+n[k]] = x
			}
		}
		i++
	}
}

// ParseSNMP6 reads /proc/net/snmp6 ("Ip6InReceives 2" per line) into out.
func ParseSNMP6(data []byte, out Counters) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		if x, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[f[0]] = x
		}
	}
}

// Softnet is one CPU's line of /proc/net/softnet_stat: what the backlog of that CPU processed
// and dropped, and how often net_rx_action ran out of budget or time (time_squeeze).
type Softnet struct {
	Processed, Dropped, TimeSqueeze uint64
}

// ParseSoftnet reads /proc/net/softnet_stat (hexadecimal columns) by CPU: the 13th column is
// the CPU's number where the kernel writes it (since 5.10), else the line's position.
func ParseSoftnet(data []byte) map[int]Softnet {
	out := map[int]Softnet{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 0; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) < 3 {
			continue
		}
		var v [3]uint64
		ok := true
		for k := range v {
			x, err := strconv.ParseUint(f[k], 16, 64)
			if err != nil {
				ok = false
				break
			}
			v[k] = x
		}
		if !ok {
			continue
		}
		cpu := line
		if len(f) >= 13 {
			if x, err := strconv.ParseUint(f[12], 16, 32); err == nil {
				cpu = int(x)
			}
		}
		out[cpu] = Softnet{Processed: v[0], Dropped: v[1], TimeSqueeze: v[2]}
	}
	return out
}

// ParseSoftirqs reads the NET_RX and NET_TX lines of /proc/softirqs: name -> CPU -> count.
func ParseSoftirqs(data []byte) map[string]map[int]uint64 {
	out := ParsePerCPU(data)
	for name := range out {
		if name != "NET_RX" && name != "NET_TX" {
			delete(out, name)
		}
	}
	return out
}

// ParsePerCPU reads a table of per-CPU counts with a header of CPUs, as /proc/softirqs and
// /proc/interrupts are: every row, name (its first field without the colon: TIMER, LOC, or
// an interrupt's number) -> CPU -> count. What follows a row's counts (an interrupt's chip
// and device) is left out.
func ParsePerCPU(data []byte) map[string]map[int]uint64 {
	out := map[string]map[int]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	var cpus []int
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if cpus == nil && strings.HasPrefix(f[0], "CPU") {
			for _, c := range f {
				n, err := strconv.Atoi(strings.TrimPrefix(c, "CPU"))
				if err != nil {
					cpus = nil
					break
				}
				cpus = append(cpus, n)
			}
			continue
		}
		name, ok := strings.CutSuffix(f[0], ":")
		if !ok || name == "" {
			continue
		}
		row := map[int]uint64{}
		for k, v := range f[1:] {
			if k >= len(cpus) {
				break
			}
			x, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				break // ERR: and MIS: have one count, not one per CPU
			}
			row[cpus[k]] = x
		}
		out[name] = row
	}
	return out
}
