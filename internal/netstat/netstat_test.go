package netstat

import (
	"testing"
)

func TestParseSNMP(t *testing.T) {
	got := Counters{}
	ParseSNMP([]byte("Ip: Forwarding DefaultTTL InReceives\nIp: 2 64 29475\nTcp: RtoAlgorithm MaxConn InSegs\nTcp: 1 -1 77\nUdp: A B\nUdp: 1\n"), got)
	want := Counters{"IpForwarding": 2, "IpDefaultTTL": 64, "IpInReceives": 29475, "TcpRtoAlgorithm": 1, "TcpInSegs": 77}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d", k, got[k], v)
		}
	}
	ParseSNMP6([]byte("Ip6InReceives                   \t2\nIp6InHdrErrors 0\nbad\n"), got)
	if got["Ip6InReceives"] != 2 || len(got) != 7 {
		t.Errorf("snmp6: %v", got)
	}
}

func TestParseSoftnet(t *testing.T) {
	got := ParseSoftnet([]byte("08b51090 00000002 00000407 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n" +
		"03746e97 00000000 0000000a 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000003 00000000 00000000\nzz\n"))
	if got[0] != (Softnet{0x08b51090, 2, 0x407}) || got[3] != (Softnet{0x03746e97, 0, 10}) || len(got) != 2 {
		t.Errorf("softnet: %+v", got)
	}
	old := ParseSoftnet([]byte("00000010 00000000 00000001\n00000020 00000000 00000002\n"))
	if old[1].Processed != 0x20 {
		t.Errorf("softnet without CPU column: %+v", old)
	}
}

func TestParseSoftirqs(t *testing.T) {
	got := ParseSoftirqs([]byte("                    CPU0       CPU1       \n          HI:          0          1\n      NET_TX:    2349424     570119\n      NET_RX:   94328729   47543339\n"))
	if got["NET_TX"][1] != 570119 || got["NET_RX"][0] != 94328729 || len(got) != 2 {
		t.Errorf("softirqs: %v", got)
	}
}

func TestParsePerCPU(t *testing.T) {
	got := ParsePerCPU([]byte(`           CPU0       CPU1       
 26:          0          7  IO-APIC   4-edge      ttyS0
 31:         12          3 PCI-MSIX-0000:00:02.0   1-edge      virtio1-requests
NMI:          0          0   Non-maskable interrupts
LOC:      47421      39002   Local timer interrupts
ERR:          0
      TIMER:       1500       1400
`))
	if got["26"][1] != 7 || got["31"][0] != 12 || got["LOC"][0] != 47421 || got["TIMER"][1] != 1400 || len(got["ERR"]) != 1 || len(got) != 6 {
		t.Errorf("per-CPU rows: %v", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("Ip: A B\nIp: 1 2\n"))
	f.Add([]byte("Ip6InReceives 2\n"))
	f.Add([]byte("                    CPU0       CPU1\n      NET_RX:   9   4\n"))
	f.Add([]byte("08b51090 00000002 00000407 0 0 0 0 0 0 0 0 0 00000003\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := Counters{}
		ParseSNMP(data, c)
		ParseSNMP6(data, c)
		ParseSoftnet(data)
		ParseSoftirqs(data)
		ParsePerCPU(data)
	})
}
