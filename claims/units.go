package claims

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// unit is how a written unit maps to a normalised one: the metric kind it measures, the
// normalised unit, and the factor to it.
type unit struct {
	kind   string // rate (bits per second), packets (packets or events per second), trans (transactions per second), time, percent, cycles
	norm   string
	factor float64
}

// units are the units claims are written in, lower-cased, spaces removed. Bytes differ from
// bits only in case ("MB/s" against "Mb/s"), so those are in byteUnits, looked up first and
// as written.
var units = map[string]unit{
	"bit/s": {"rate", "bit/s", 1}, "bits/sec": {"rate", "bit/s", 1}, "bps": {"rate", "bit/s", 1}, "bits/s": {"rate", "bit/s", 1},
	"kbit/s": {"rate", "bit/s", 1e3}, "kbps": {"rate", "bit/s", 1e3}, "kbits/sec": {"rate", "bit/s", 1e3}, "kb/s": {"rate", "bit/s", 1e3}, "kb/sec": {"rate", "bit/s", 1e3},
	"mbit/s": {"rate", "bit/s", 1e6}, "mbps": {"rate", "bit/s", 1e6}, "mbits/sec": {"rate", "bit/s", 1e6}, "10^6bits/sec": {"rate", "bit/s", 1e6}, "10^6bits/s": {"rate", "bit/s", 1e6}, "mb/s": {"rate", "bit/s", 1e6}, "mb/sec": {"rate", "bit/s", 1e6}, "mbits/s": {"rate", "bit/s", 1e6},
	"gbit/s": {"rate", "bit/s", 1e9}, "gbit": {"rate", "bit/s", 1e9}, "mbit": {"rate", "bit/s", 1e6}, "gbps": {"rate", "bit/s", 1e9}, "gbits/sec": {"rate", "bit/s", 1e9}, "gb/s": {"rate", "bit/s", 1e9}, "10^9bits/sec": {"rate", "bit/s", 1e9}, "gbits/s": {"rate", "bit/s", 1e9},
	// "Gbs", "Mbs/sec": bits per second as some authors write them (lookupUnit keeps "GBs", a
	// size in bytes, out).
	"gbs": {"rate", "bit/s", 1e9}, "gbs/s": {"rate", "bit/s", 1e9}, "gbs/sec": {"rate", "bit/s", 1e9},
	"mbs": {"rate", "bit/s", 1e6}, "mbs/s": {"rate", "bit/s", 1e6}, "mbs/sec": {"rate", "bit/s", 1e6},
	"pps": {"packets", "pps", 1}, "kpps": {"packets", "pps", 1e3}, "mpps": {"packets", "pps", 1e6},
	"tps": {"trans", "trans/s", 1}, "trans/s": {"trans", "trans/s", 1}, "trans/sec": {"trans", "trans/s", 1}, "transactions/s": {"trans", "trans/s", 1}, "persec": {"trans", "trans/s", 1},
	"txns": {"trans", "trans/s", 1}, "txns/s": {"trans", "trans/s", 1}, "transactions/sec": {"trans", "trans/s", 1},
	// A request answered is a transaction (wrk's Requests/sec, redis-benchmark's "requests per
	// second", memtier's Ops/sec).
	"requests/s": {"trans", "trans/s", 1}, "requests/sec": {"trans", "trans/s", 1}, "req/s": {"trans", "trans/s", 1}, "reqs/s": {"trans", "trans/s", 1},
	"ops/s": {"trans", "trans/s", 1}, "ops/sec": {"trans", "trans/s", 1}, "operations/s": {"trans", "trans/s", 1},
	// An I/O completed is one too (fio's IOPS), and a query answered (QPS); RPS is requests.
	"iops": {"trans", "trans/s", 1}, "qps": {"trans", "trans/s", 1}, "rps": {"trans", "trans/s", 1},
	// The micro sign (U+00B5) and the Greek mu (U+03BC) look alike; authors type either.
	"us": {"time", "us", 1}, "usec": {"time", "us", 1}, "µs": {"time", "us", 1}, "μs": {"time", "us", 1}, "µsec": {"time", "us", 1}, "μsec": {"time", "us", 1},
	"usecs": {"time", "us", 1}, "microseconds": {"time", "us", 1},
	"ms": {"time", "us", 1e3}, "msec": {"time", "us", 1e3}, "msecs": {"time", "us", 1e3}, "milliseconds": {"time", "us", 1e3},
	"ns": {"time", "us", 1e-3}, "nsec": {"time", "us", 1e-3}, "nsecs": {"time", "us", 1e-3}, "nanoseconds": {"time", "us", 1e-3},
	"s": {"time", "us", 1e6}, "sec": {"time", "us", 1e6}, "secs": {"time", "us", 1e6}, "seconds": {"time", "us", 1e6},
	"%": {"percent", "%", 1},
	// A cost in CPU cycles (per packet, per call), as perf and the authors who quote it count.
	"cycles": {"cycles", "cycles", 1}, "cycle": {"cycles", "cycles", 1},
}

// byteUnits are rates in bytes, as written (case matters).
var byteUnits = map[string]unit{
	"B/s": {"rate", "bit/s", 8}, "kB/s": {"rate", "bit/s", 8e3}, "KB/s": {"rate", "bit/s", 8e3}, "MB/s": {"rate", "bit/s", 8e6}, "GB/s": {"rate", "bit/s", 8e9},
	"KBytes/sec": {"rate", "bit/s", 8e3}, "MBytes/sec": {"rate", "bit/s", 8e6}, "GBytes/sec": {"rate", "bit/s", 8e9},
	"B/sec": {"rate", "bit/s", 8}, "kB/sec": {"rate", "bit/s", 8e3}, "KB/sec": {"rate", "bit/s", 8e3}, "MB/sec": {"rate", "bit/s", 8e6}, "GB/sec": {"rate", "bit/s", 8e9},
	// A capital B is bytes in "MBps" too: sockperf prints "60.437 MBps (483.499 Mbps)".
	"Bps": {"rate", "bit/s", 8}, "kBps": {"rate", "bit/s", 8e3}, "KBps": {"rate", "bit/s", 8e3}, "MBps": {"rate", "bit/s", 8e6}, "GBps": {"rate", "bit/s", 8e9},
	"KiB/s": {"rate", "bit/s", 8 * 1024}, "MiB/s": {"rate", "bit/s", 8 * 1024 * 1024}, "GiB/s": {"rate", "bit/s", 8 * 1024 * 1024 * 1024},
}

// slashSpacesRe is a slash with spaces around it.
var slashSpacesRe = regexp.MustCompile(`\s*/\s*`)

// eventRateRe is any "<events>/s" a tool prints for a rate of packets or events: rx/s,
// pkt/s, xmit/s, err,drop/s.
var eventRateRe = regexp.MustCompile(`^[a-z][a-z,_-]*/s(ec)?$`)

// perOneRe is what a cost per one thing is per: a packet, an operation, a call, an iteration,
// a byte.
var perOneRe = regexp.MustCompile(`^(?:pkt|pkts|packet|packets|op|ops|operation|call|calls|iter|iteration|msg|message|req|request|byte|frame|segment|skb)$`)

// lookupUnit finds a written unit ("Gbps", "10^6bits/sec", "trans/s", "MB/s", "rx/s").
func lookupUnit(s string) (unit, bool) {
	s = slashSpacesRe.ReplaceAllString(s, "/") // "requests / second", "Mbit / s": the unit written apart
	if u, ok := byteUnits[s]; ok {
		return u, true
	}
	// A time or a count of cycles per packet, per operation or per byte ("35.1 ns/pkt", "1.2
	// us/op", "1,532 cycles/pkt"): the cost of one.
	if base, per, ok := strings.Cut(strings.ToLower(s), "/"); ok && perOneRe.MatchString(per) {
		if u, ok := units[base]; ok && (u.kind == "time" || u.kind == "cycles") {
			return u, true
		}
	}
	if u, ok := units[strings.ToLower(strings.ReplaceAll(s, " ", ""))]; ok {
		if strings.Contains(s, "Bs") {
			return unit{}, false // "GBs", "MBs": sizes in bytes, plural, no rate
		}
		return u, true
	}
	if u, ok := rateByGrammar(s); ok {
		return u, true
	}
	if f, ok := scaleSuffix[strings.TrimSuffix(s, "/s")]; ok && strings.HasSuffix(s, "/s") {
		// "45k/s": thousands of what the sentence counts, each second (not 45 of a "k"
		// event); perf stat's "M/sec" comments stay out, as they are no result.
		return unit{"packets", "pps", f}, true
	}
	if eventRateRe.MatchString(s) && !strings.HasPrefix(s, "bit") && !strings.HasPrefix(s, "byte") {
		return unit{"packets", "pps", 1}, true
	}
	return unit{}, false
}

// rateGrammarRe is a rate as authors spell it beyond the lists above: a scale, what is
// counted and "per second" in any of its forms ("Gbit/sec", "Gbits/second", "KBytes/s",
// "Mpkt/s", "Mpackets/sec", "Mbit per second", "Krps", "datagrams per second", "kmsg/s": a
// message sent or received, sockperf's count, is a packet's rate here; a connection, set up
// and torn down as TCP_CRR's transaction is, a transaction's). A capital B
// alone is bytes; any other spelling of the counted thing says itself.
var rateGrammarRe = regexp.MustCompile(`^(10\^\d{1,2}|[kKmMgGtT]i?)?\s?(bits?|b|[Bb]ytes?|B|pkts?|packets?|frames?|datagrams?|msgs?|messages?|p|trans|transactions?|txns?|t|req(?:uest)?s?|r|quer(?:y|ies)|q|ops|operations?|conns?|connections?)(?:\s?/\s?s(?:ec(?:ond)?)?|ps|\s+per\s+s(?:ec(?:ond)?)?)$`)

// rateScales are the written scales of a rate: decimal letters, binary ones and powers of ten.
var rateScales = map[string]float64{"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30, "ti": 1 << 40}

// rateByGrammar reads a rate of bits, bytes, packets or transactions by rateGrammarRe.
// "ps" follows only a one-letter quantity (Mbps, Kpps, Mrps), so "ops" is operations.
func rateByGrammar(s string) (unit, bool) {
	m := rateGrammarRe.FindStringSubmatch(s)
	if m == nil {
		return unit{}, false
	}
	scale, ok := rateScales[strings.ToLower(m[1])]
	if strings.HasPrefix(m[1], "10^") {
		exp, _ := strconv.Atoi(m[1][3:])
		scale, ok = math.Pow10(exp), exp <= 15
	}
	if !ok {
		return unit{}, false
	}
	switch q := m[2]; {
	case q == "B" || strings.HasPrefix(strings.ToLower(q), "byte"):
		return unit{"rate", "bit/s", 8 * scale}, true
	case q == "b" || strings.HasPrefix(q, "bit"):
		return unit{"rate", "bit/s", scale}, true
	case q == "p" || strings.HasPrefix(q, "pkt") || strings.HasPrefix(q, "packet") || strings.HasPrefix(q, "frame") || strings.HasPrefix(q, "datagram") || strings.HasPrefix(q, "msg") || strings.HasPrefix(q, "message"):
		return unit{"packets", "pps", scale}, true
	}
	return unit{"trans", "trans/s", scale}, true
}

var numberRe = regexp.MustCompile(`^[-+]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$`)

// parseNumber reads a number as people write it: 34440.00, 6,144, 1,234.5. Numbers past
// float range are not numbers.
func parseNumber(s string) (float64, bool) {
	if len(s) > 40 || !numberRe.MatchString(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	return v, err == nil
}

// valueRe is a number with an optional unit after it: "8.68 Gbps", "139 Mbps", "6,144 %".
var valueRe = regexp.MustCompile(`([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*((?:10\^[69])?[A-Za-zµ/%^0-9]*(?:/s(?:ec)?)?)`)

// parseValue reads "8.68 Gbps" into the normalised value and its unit.
func parseValue(s string) (v float64, u unit, ok bool) {
	m := valueRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || strings.TrimSpace(s) != strings.TrimSpace(m[0]) {
		return spacedValue(s)
	}
	n, ok := parseNumber(m[1])
	if !ok {
		return 0, unit{}, false
	}
	u, ok = lookupUnit(m[2])
	if !ok {
		return 0, unit{}, false
	}
	return n * u.factor, u, true
}

// spacedValueRe is a figure whose unit is words apart from it, with a scale glued on the
// number or not: "61.4k transactions per second", "61400 trans/s", "2.1 M packets/s".
var spacedValueRe = regexp.MustCompile(`^((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s?((?-i:[kKM])?)\s+([A-Za-z][A-Za-z/]*(?:\s+per\s+sec(?:ond)?|\s*/\s*s(?:ec)?)?)$`)

// spacedValue reads a spacedValueRe figure: the unit a rate of what it counts.
func spacedValue(s string) (v float64, u unit, ok bool) {
	m := spacedValueRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, unit{}, false
	}
	n, ok := parseNumber(m[1])
	if !ok {
		return 0, unit{}, false
	}
	if u, ok = lookupUnit(m[3]); !ok || m[2] != "" && u.factor != 1 {
		return 0, unit{}, false // "1.2k Gbit/s" is no figure of a rate's unit
	}
	if m[2] != "" {
		n *= scaleSuffix[m[2]]
	}
	return n * u.factor, u, true
}

// numbers reads a line that is only numbers (a data row), nil if it is not one.
func numbers(line string) []float64 {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil
	}
	out := make([]float64, len(fields))
	for i, f := range fields {
		v, ok := parseNumber(f)
		if !ok {
			return nil
		}
		out[i] = v
	}
	return out
}
