package results

import (
	"encoding/json"
	"testing"
)

// TestOlderABResultsPlaced: an A/B result written before states carried their side is read
// with each state and sample placed from its merged name, and its summaries recomputed with
// them; a run of one kernel is left as it is, "@" in a state's name and all.
func TestOlderABResultsPlaced(t *testing.T) {
	r := Result{Schema: Schema, RunID: "nsp0001", Kernels: []*Result{{RunID: "a"}, {RunID: "b"}},
		Cases: []Case{{States: []StateRecord{{Name: "off@A"}, {Name: "on@B", CompareTo: "off@A"}},
			Samples: []Sample{{State: "off@A", Round: 1}, {State: "on@B", Round: 1}}}}}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseResult("ab.json", data)
	if err != nil {
		t.Fatal(err)
	}
	c := got.Cases[0]
	if c.States[1].SideOf != (SideOf{Side: "B", Of: "on"}) || c.Samples[0].SideOf != (SideOf{Side: "A", Of: "off"}) {
		t.Errorf("states %+v, samples %+v", c.States, c.Samples)
	}
	one := Result{Schema: Schema, RunID: "nsp0002", Cases: []Case{{States: []StateRecord{{Name: "mtu@9000"}}}}}
	data, _ = json.Marshal(one)
	if got, err := parseResult("one.json", data); err != nil || got.Cases[0].States[0].SideOf != (SideOf{}) {
		t.Errorf("a run of one kernel: %+v %v", got.Cases[0].States[0], err)
	}
}
