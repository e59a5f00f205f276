package results

import (
	"testing"

	"github.com/nsperf/nsperf/scenarios"
)

// TestWithClients: the clients' rates and counts add up, their latencies are averaged, a
// metric one client lacks has no total, and each client's figures (its own CPU per Gbit
// included) are kept under its name with its metric's direction.
func TestWithClients(t *testing.T) {
	got := map[string]float64{}
	for _, m := range WithClients([][]Metric{
		{{Name: Throughput, Unit: "bit/s", Value: 10e9}, {Name: RTTMean, Unit: "us", Value: 40}, {Name: CPUSender, Unit: "%", Value: 50}, {Name: Retransmits, Unit: "count", Value: 3}},
		{{Name: Throughput, Unit: "bit/s", Value: 5e9}, {Name: RTTMean, Unit: "us", Value: 80}, {Name: CPUSender, Unit: "%", Value: 50}},
	}) {
		got[m.Name] = m.Value
	}
	for name, want := range map[string]float64{
		Throughput: 15e9, RTTMean: 60, CPUSender: 100, CPUSender + perGbit: 100.0 / 100 / 15,
		"throughput_client1": 10e9, "throughput_client2": 5e9, "rtt_mean_client2": 80,
		"cpu_sender_per_gbit_client2": 50.0 / 100 / 5, "retransmits_client1": 3,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (%v), want %v", name, v, ok, want)
		}
	}
	if _, ok := got[Retransmits]; ok {
		t.Errorf("retransmits has a total though the second client did not report it")
	}
	if DirectionOf("throughput_client2") != HigherIsBetter || DirectionOf("rtt_mean_client1") != LowerIsBetter || DirectionOf("throughput_clientx") != NoDirection {
		t.Error("a client's figure has not its metric's direction")
	}
	one := WithClients([][]Metric{{{Name: Throughput, Unit: "bit/s", Value: 1e9}, {Name: CPUSender, Unit: "%", Value: 10}}})
	if len(one) != 3 || one[0].Name != Throughput {
		t.Errorf("one client: %v, want its own figures with its efficiency", one)
	}
}

func TestClientMetricBase(t *testing.T) {
	for name, want := range map[string]struct {
		base   string
		client int
		ok     bool
	}{
		"throughput_client1":           {"throughput", 0, true},
		"cpu_sender_per_gbit_client64": {"cpu_sender_per_gbit", 63, true},
		"throughput_client65":          {},
		"throughput_client0":           {},
		"throughput_client01":          {},
		"throughput_client":            {},
		"_client1":                     {},
		"throughput":                   {},
		"throughput_client1x":          {},
	} {
		base, client, ok := scenarios.ClientMetricBase(name)
		if base != want.base || client != want.client || ok != want.ok {
			t.Errorf("%q: %q %d %v, want %+v", name, base, client, ok, want)
		}
	}
}

// FuzzClientMetricBase: what a name parses to names it again.
func FuzzClientMetricBase(f *testing.F) {
	for _, s := range []string{"throughput_client1", "rtt_mean_client12", "x_client0", "_client_client3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if base, client, ok := scenarios.ClientMetricBase(name); ok && scenarios.ClientMetric(base, client) != name {
			t.Fatalf("%q parses to %q and client %d, which names %q", name, base, client, scenarios.ClientMetric(base, client))
		}
	})
}
