package vm

import "testing"

// FuzzExitFile: whatever the guest writes as its exit status, the host reads a code of 0 to
// 255 or none.
func FuzzExitFile(f *testing.F) {
	for _, seed := range []string{"0\n", "4\n", "130", "", "-1", "99999999999999999999", "1e3", " 2 "} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		code, ok := parseExitCode(data)
		if ok && (code < 0 || code > 255) {
			t.Fatalf("exit file %q: code %d", data, code)
		}
	})
}
