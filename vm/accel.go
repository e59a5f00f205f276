package vm

import (
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// KVMHangMarker is the file that remembers, until the next boot of the host, that a KVM guest
// hung after the BIOS: later runs go straight to TCG instead of waiting for the probe again.
func KVMHangMarker() string { return filepath.Join(Dir(), "kvm-hangs") }

func bootID() string {
	id, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(id))
}

// chooseAccel picks KVM when /dev/kvm opens and KVM has not hung since the host booted, else
// TCG with the reason.
func chooseAccel() (accel, warning string) {
	if seen, err := os.ReadFile(KVMHangMarker()); err == nil && strings.TrimSpace(string(seen)) == bootID() {
		return AccelTCG, "KVM hung after the BIOS in an earlier run since this host booted (nested virtualization): TCG"
	}
	fd, err := unix.Open("/dev/kvm", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return AccelTCG, "no usable /dev/kvm (" + err.Error() + "): TCG"
	}
	unix.Close(fd)
	return AccelKVM, ""
}

func markKVMBroken() {
	_ = os.WriteFile(KVMHangMarker(), []byte(bootID()+"\n"), 0o644)
}
