package kconfig

import (
	"bytes"
	"strings"
	"testing"
)

// Parse: the last assignment of an option wins, as in Kconfig, and a line of over 1 MiB
// drops no option after it (issue 31, item 17).
func TestParseLastWinsAndLongLines(t *testing.T) {
	text := "CONFIG_VXLAN=m\nCONFIG_VETH=y\n# CONFIG_VETH is not set\nCONFIG_TUN=m\nCONFIG_TUN=n\nCONFIG_BRIDGE=n\nCONFIG_BRIDGE=m\n" +
		"CONFIG_CMDLINE=\"" + strings.Repeat("x", 2<<20) + "\"\nCONFIG_OPENVSWITCH=m\n"
	c := Parse(".config", []byte(text))
	for name, want := range map[string]bool{"VXLAN": true, "VETH": false, "TUN": false, "BRIDGE": true, "CMDLINE": true, "OPENVSWITCH": true} {
		if c.Has(name) != want {
			t.Errorf("CONFIG_%s set: %v, want %v", name, c.Has(name), want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("CONFIG_VXLAN=m\n# CONFIG_VETH is not set\nCONFIG_TUN=n\n")
	f.Fuzz(func(t *testing.T, text string) {
		c := Parse(".config", []byte(text))
		for name, value := range c.set {
			if value == "" || value == "n" || strings.Contains(name, "\n") {
				t.Fatalf("CONFIG_%s=%q kept", name, value)
			}
		}
	})
}

// Value unquotes strings; Values gives every option set; the writer's lines read back.
func TestValueAndFragment(t *testing.T) {
	c := Parse(".config", []byte("CONFIG_CC_VERSION_TEXT=\"x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14) 12.2.0\"\nCONFIG_HZ=250\nCONFIG_VETH=m\n"))
	if got := c.Value("CC_VERSION_TEXT"); got != "x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14) 12.2.0" {
		t.Errorf("CC_VERSION_TEXT %q", got)
	}
	if v := c.Values(); len(v) != 3 || v["HZ"] != "250" || v["VETH"] != "m" {
		t.Errorf("values %v", v)
	}
	var b bytes.Buffer
	WriteFragment(&b, []Group{{Why: "veth", Names: []string{"VETH"}}, {Why: "vxlan", Names: []string{"VXLAN", "IPV6"}}}, "left out", []string{"SOUND"})
	want := "# veth\nCONFIG_VETH=y\n# vxlan\nCONFIG_VXLAN=y\nCONFIG_IPV6=y\n# left out\n# CONFIG_SOUND is not set\n"
	if b.String() != want {
		t.Errorf("fragment:\n%s\nwant:\n%s", b.String(), want)
	}
	back := Parse("f", b.Bytes())
	if !back.Has("VXLAN") || back.Has("SOUND") {
		t.Errorf("the fragment reads back as %v", back.Values())
	}
}
