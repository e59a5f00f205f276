package scenarios

import (
	"strings"
	"testing"
)

// TestQdiscRanges: every numeric qdisc parameter is refused when it is NaN, infinite,
// negative or beyond what the kernel's field holds as nsperf fills it, with the range in the
// message; the ends of each range are accepted.
func TestQdiscRanges(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string // in the error; "" accepts
	}{
		// tbf: rate in whole bytes a second (u64, TCA_TBF_RATE64), burst and limit u32 bytes,
		// the burst's time at the rate 32 bits of 64ns ticks.
		{"{tbf: {rate: inf, burst: 1mb}}", `"inf" is not a rate`},
		{"{tbf: {rate: nan, burst: 1mb}}", `"nan" is not a rate`},
		{"{tbf: {rate: -1gbit, burst: 1mb}}", `"-1gbit" is not a rate`},
		{"{tbf: {rate: 1e30, burst: 1mb}}", `"1e30" exceeds 18446744073709551615bit (2^64-1)`},
		{"{tbf: {rate: 0.5bit, burst: 1mb}}", `"0.5bit" is below 1bit`},
		{"{tbf: {rate: 4bit, burst: 1mb}}", "tbf rate: 4bit: at least 8bit"},
		{"{tbf: {rate: 1gbit, burst: inf}}", `"inf" is not a size`},
		{"{tbf: {rate: 1gbit, burst: 1e20}}", `"1e20" exceeds 18446744073709551615b`},
		{"{tbf: {rate: 1000gbit, burst: 5000mb}}", "tbf burst: 5000mb exceeds 4294967295b, the most tbf's 32-bit burst holds"},
		{"{tbf: {rate: 8kbit, burst: 1mb}}", "tbf burst: 1mb lasts 17m28.576s at 8kbit; tbf's buffer (32 bits of 64ns ticks) holds at most 4m34.877906s"},
		{"{tbf: {rate: 30kbit, burst: 1mb}}", "tbf burst: 1mb lasts 4m39.620266s at 30kbit"},
		{"{tbf: {rate: 31kbit, burst: 1mb}}", ""}, // 4m30.6s
		{"{tbf: {rate: 1000gbit, burst: 64kb}}", "tbf burst: 64kb lasts less than 1us at 1000gbit, the unit tbf's buffer is sent in"},
		{"{tbf: {rate: 1gbit, burst: 1mb, latency: -1s}}", "tbf latency: -1s: at least 0 (none: the default 50ms)"},
		{"{tbf: {rate: 1gbit, burst: 1mb, latency: 100000h}}", "tbf latency: 100000h0m0s: at most 34.351349s at 1gbit with a burst of 1mb; tbf's limit, rate × latency + burst, is a 32-bit count of bytes"},
		{"{tbf: {rate: 1gbit, burst: 1mb, latency: 34.351349s}}", ""},
		{"{tbf: {rate: 1gbit, burst: 1mb, latency: 34.35135s}}", "at most 34.351349s"},
		{"{tbf: {rate: 1000gbit, burst: 1mb}}", "tbf latency: the default 50ms: at most 34.351ms at 1000gbit"},
		{"{tbf: {rate: 1000gbit, burst: 1mb, latency: 34ms}}", ""},
		{"{tbf: {rate: 8bit, burst: 64kb, latency: 1us}}", "tbf burst: 64kb lasts 18h12m16s at 8bit"},
		{"{tbf: {rate: 2gbit, burst: 1mb}}", ""},
		// netem: delay and jitter in whole microseconds as 32 bits of 64ns ticks (the
		// kernel caps jitter at INT_MAX ns), probabilities 32-bit fractions, limit u32.
		{"{netem: {delay: 4294.97s}}", "netem delay: 1h11m34.97s exceeds 4m34.877906s, the most netem's latency (32 bits of 64ns ticks) holds"},
		{"{netem: {delay: 274.877907s}}", "netem delay: 4m34.877907s exceeds 4m34.877906s"},
		{"{netem: {delay: 274.877906999s}}", ""},
		{"{netem: {delay: -1ms, loss: 1%}}", "netem delay: -1ms: want 0 to 4m34.877906s"},
		{"{netem: {delay: 500ns}}", "netem delay: 500ns is below 1us, the unit it is sent in: want 0 or 1us to 4m34.877906s"},
		{"{netem: {delay: 10ms, jitter: -5ms}}", "netem jitter: -5ms: want 0 to 2.147483s"},
		{"{netem: {delay: 10s, jitter: 3s}}", "netem jitter: 3s exceeds 2.147483s, the most netem's jitter (INT_MAX ns) holds"},
		{"{netem: {delay: 10s, jitter: 2.147483s}}", ""},
		{"{netem: {delay: 1ms, jitter: 2ms}}", "netem jitter: 2ms exceeds the delay 1ms"},
		{"{netem: {loss: nan}}", "netem loss: NaN%: want 0% to 100%"},
		{"{netem: {delay: 1ms, loss: inf}}", "netem loss: +Inf%: want 0% to 100%"},
		{"{netem: {delay: 1ms, loss: -1%}}", "netem loss: -1%: want 0% to 100%"},
		{"{netem: {delay: 1ms, loss: 100.5%}}", "netem loss: 100.5%: want 0% to 100%"},
		{"{netem: {delay: 1ms, loss: 1e-8%}}", "netem loss: 1e-08% is below 2.33e-08%, the smallest netem holds (1/(2^32-1))"},
		{"{netem: {delay: 1ms, reorder: nan}}", "netem reorder: NaN%: want 0% to 100%"},
		{"{netem: {delay: 1ms, loss: 100%, reorder: 2.33e-8%}}", ""},
		{"{netem: {delay: 1ms, limit: -1}}", "netem limit: -1: a number of packets, 1 to 4294967295"},
		{"{netem: {delay: 1ms, limit: 4294967296}}", "netem limit: 4294967296: a number of packets, 1 to 4294967295"},
		{"{netem: {delay: 1ms, limit: 4294967295}}", ""},
		// fq: maxrate u32 bytes a second (all ones: unlimited), quantum 1b to 1mb, limits u32.
		{"{fq: {maxrate: 35gbit}}", "fq maxrate: 35gbit: fq takes at most 34359738359bit (34.36gbit) per flow"},
		{"{fq: {maxrate: 34359738360bit}}", "fq takes at most 34359738359bit"},
		{"{fq: {maxrate: 34359738359bit}}", ""},
		{"{fq: {maxrate: 7bit}}", "fq maxrate: 7bit: at least 8bit"},
		{"{fq: {maxrate: inf}}", `"inf" is not a rate`},
		{"{fq: {quantum: 2mb}}", "fq quantum: 2mb: fq takes 1b to 1mb"},
		{"{fq: {flow_limit: 4294967296}}", "fq flow_limit: 4294967296: a number of packets, 1 to 4294967295"},
		{"{fq: {limit: -5}}", "fq limit: -5: a number of packets"},
		// fq_codel: target and interval u32 microseconds, limit u32.
		{"{fq_codel: {target: -1ms}}", "fq_codel target: -1ms: want 0 to 1h11m34.967295s"},
		{"{fq_codel: {interval: 4294.967296s}}", "fq_codel interval: 1h11m34.967296s exceeds 1h11m34.967295s, the most fq_codel's 32-bit count of microseconds holds"},
		{"{fq_codel: {target: 5ms, interval: 4294.967295s}}", ""},
		{"{fq_codel: {target: 100ns}}", "fq_codel target: 100ns is below 1us"},
		{"{fq_codel: {target: 10ms, interval: 5ms}}", "fq_codel target: 10ms: below the interval 5ms"},
		{"{fq_codel: {limit: 4294967296}}", "fq_codel limit: 4294967296: a number of packets"},
	} {
		_, err := ParseQdisc(tc.text)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tc.text, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.text, err, tc.want)
		}
	}
}
