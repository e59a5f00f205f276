package results

import "testing"

// TestDirectionIsDeclaredNeverGuessed: a metric's direction is its tool's declaration, or
// the CPU per unit of work derived from a declared CPU utilisation; a name no tool declares
// has none, whatever it looks like.
func TestDirectionIsDeclaredNeverGuessed(t *testing.T) {
	for name, want := range map[string]Direction{
		Throughput: HigherIsBetter, "p99_latency": LowerIsBetter, Retransmits: LowerIsBetter,
		CPUSender: NoDirection, "local_cpu_util": NoDirection,
		"cpu_sender_per_gbit": LowerIsBetter, "remote_cpu_util_per_trans": LowerIsBetter,
		"frobnicate_latency": NoDirection, // looks like a latency: no tool reports it
		"bogus":              NoDirection, // was "higher is better" by default
		"bogus_per_gbit":     NoDirection,
	} {
		if got := DirectionOf(name); got != want {
			t.Errorf("DirectionOf(%q) = %d, want %d", name, got, want)
		}
	}
}
