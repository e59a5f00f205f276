package claims

import (
	"os"
	"testing"
)

func TestZZDebugLayouts(t *testing.T) {
	data, _ := os.ReadFile(os.Getenv("ZZ_FILE"))
	base, _ := Read("m.txt", data)
	t.Logf("all: %d claims", len(base.Claims))
	for _, l := range proseLayouts {
		layoutOff[l.name] = true
		r, _ := Read("m.txt", data)
		if len(r.Claims) != len(base.Claims) {
			t.Logf("off %q: %d claims", l.name, len(r.Claims))
		}
		delete(layoutOff, l.name)
	}
}
