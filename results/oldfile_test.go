package results

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestResultBeforeSettingKindsLoads: a result written by nsperf before the state settings
// became registered kinds (921a76b: `nsperf run` of a veth pair whose "on" state sets device
// limits, an offload, a sysctl and a route's attributes) loads with every state's record as it
// was written, and writes back to the same JSON.
func TestResultBeforeSettingKindsLoads(t *testing.T) {
	const path = "testdata/result-before-setting-kinds.json"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, warnings, err := Parse(path, data)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("%v %v", warnings, err)
	}
	on := r.Cases[0].States[1]
	if on.Name != "on" || on.Devices["client/eth0"]["gso_max_size"] != 185000 || on.Devices["server/eth0"]["gro_max_size"] != 185000 ||
		on.Sysctls["client"]["net.ipv4.tcp_autocorking"] != "0" || on.Routes["server"]["198.18.0.0/24"] == "" || !on.Features["client/eth0"]["tx-checksum-ip-generic"] {
		t.Errorf("the 'on' state's record: %+v", on)
	}
	var again bytes.Buffer
	if err := Encode(&again, r); err != nil {
		t.Fatal(err)
	}
	var was, is any
	if err := json.Unmarshal(data, &was); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again.Bytes(), &is); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(was, is) {
		t.Errorf("the result written back differs from the file:\n%s", again.String())
	}
}
