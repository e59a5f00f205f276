package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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

// StableWallClock says whether this machine can give stable wall-clock figures, and why
// not: only a KVM guest, or the host itself when it is quiet, measure on a clock host load
// does not stretch. Without a usable KVM (none, or one that hung since boot) a guest runs
// under TCG, where only virtual time is stable; with a host whose load is above half its
// CPUs, the wall clock is shared.
func StableWallClock() (bool, string) {
	if accel, why := chooseAccel(); accel != AccelKVM {
		return false, strings.TrimSuffix(why, ": TCG")
	}
	if load, ok := loadPerCPU(); ok && load > 0.5 {
		return false, fmt.Sprintf("the host is shared (load %.2f per CPU)", load)
	}
	return true, ""
}

// loadPerCPU is the 1-minute load average over the CPUs online.
func loadPerCPU() (float64, bool) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, false
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil || runtime.NumCPU() == 0 {
		return 0, false
	}
	return load / float64(runtime.NumCPU()), true
}
