package version

import "testing"

func TestLastField(t *testing.T) {
	for in, want := range map[string]string{
		"Netperf version 2.7.0\n":                           "2.7.0",
		"ovs-vswitchd (Open vSwitch) 3.1.0\nDPDK 22.11.1\n": "3.1.0",
		"":       "",
		"  \n x": "",
	} {
		if got := LastField(in); got != want {
			t.Errorf("LastField(%q) = %q, want %q", in, got, want)
		}
	}
}
