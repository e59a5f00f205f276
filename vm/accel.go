package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultKVMDevice is the device whose opening says that KVM may be there.
const DefaultKVMDevice = "/dev/kvm"

// KVMDevice is the device nsperf opens to decide whether to try KVM: NSPERF_KVM_DEVICE, else
// /dev/kvm. Another device (a test's stand-in for a KVM that hangs) has a marker of its own,
// so that what a test learns never reaches the runs of this host.
func KVMDevice() string {
	if d := os.Getenv("NSPERF_KVM_DEVICE"); d != "" {
		return d
	}
	return DefaultKVMDevice
}

// QEMUBinary is the system emulator guests boot in: NSPERF_QEMU (a QEMU of one's own build,
// or a test's wrapper), else qemu-system-x86_64 from PATH.
func QEMUBinary() string {
	if q := os.Getenv("NSPERF_QEMU"); q != "" {
		return q
	}
	return QEMU
}

// KVMHangMarker is the file that remembers, until the next boot of the host, that a KVM guest
// hung after the BIOS: later runs go straight to TCG instead of waiting for the probe again.
func KVMHangMarker() string { return KVMHangMarkerOf(KVMDevice()) }

// KVMHangMarkerOf is the marker of a KVM device: kvm-hangs for /dev/kvm, kvm-hangs-HASH for
// another.
func KVMHangMarkerOf(device string) string {
	name := "kvm-hangs"
	if device != DefaultKVMDevice {
		sum := sha256.Sum256([]byte(device))
		name += "-" + hex.EncodeToString(sum[:6])
	}
	return filepath.Join(Dir(), name)
}

func bootID() string {
	id, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(id))
}

// chooseAccel picks KVM when its device opens and KVM has not hung since the host booted,
// else TCG with the reason.
func chooseAccel() (accel, warning string) {
	if seen, err := os.ReadFile(KVMHangMarker()); err == nil && strings.TrimSpace(string(seen)) == bootID() {
		return AccelTCG, "KVM hung after the BIOS in an earlier run since this host booted (nested virtualization): TCG"
	}
	fd, err := unix.Open(KVMDevice(), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return AccelTCG, "no usable " + KVMDevice() + " (" + err.Error() + "): TCG"
	}
	unix.Close(fd)
	return AccelKVM, ""
}

func markKVMBroken() {
	_ = os.WriteFile(KVMHangMarker(), []byte(bootID()+"\n"), 0o644)
}
