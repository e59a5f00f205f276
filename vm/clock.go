package vm

import (
	"errors"
	"fmt"
	"strings"
)

// The guest's clock (--vm-clock).
const (
	// ClockVirtual is QEMU's icount: the guest's clock advances with the instructions it
	// executes, not with the host's time, so host load cannot move a figure. TCG only.
	ClockVirtual = "virtual"
	// ClockWall is the host's time, as a guest normally has it.
	ClockWall = "wall"
	// ClockAuto is virtual under TCG and wall under KVM.
	ClockAuto = "auto"
)

// IcountOptions is -icount's value for the virtual clock, the same for every guest of every
// run so that their figures compare:
//   - shift=2: one guest instruction is 2^2 = 4 ns of virtual time, a 250 MIPS guest. A fixed
//     shift (not auto, which adapts to the host's speed) keeps the instruction-to-time ratio
//     the same on every host and under any load. A virtual second of measuring took 1.6 s of
//     wall time on the 2-CPU development VM, 4.5 s with both CPUs busy;
//   - sleep=off: an idle guest jumps to its next timer instead of waiting for it in wall time;
//   - align=off: the virtual clock is not held back to the host's (that is what makes it
//     independent of the host).
const IcountOptions = "shift=2,sleep=off,align=off"

// VirtualRTC is how a guest in virtual time keeps its real-time clock (-rtc base=DATE,VirtualRTC):
// on the virtual clock, from a date in whole seconds that every guest of a session shares. On
// the host's clock (QEMU's default) the CMOS clock's update-in-progress flag, which the kernel
// waits out when it reads the date at boot (mc146818_avoid_UIP), comes and goes with the
// host's time: two boots of one kernel then ran a different number of instructions at that
// wait, 1 to 10 µs apart in their boot logs, and diverged from there. With it the two boot logs are
// the same to the last line of the boot.
const VirtualRTC = "clock=vm"

// IdleGateSkipped is environment.vm.idle_gate where the guest's command was told to skip the
// idle gate: in virtual time, other work on the host cannot reach a figure.
const IdleGateSkipped = "skipped: virtual time"

// ResolveClock is the clock a guest runs with, given --vm-clock and the accelerator chosen;
// accel "" or auto is not yet chosen (the caller decides with KVM's probe). A clock other than
// auto, virtual or wall, and the virtual clock under KVM, are errors.
func ResolveClock(clock, accel string) (string, error) {
	switch clock {
	case "", ClockAuto:
		if accel == AccelKVM {
			return ClockWall, nil
		}
		return ClockVirtual, nil
	case ClockWall:
		return ClockWall, nil
	case ClockVirtual:
		if accel == AccelKVM {
			return "", fmt.Errorf("--vm-clock virtual with --vm-accel kvm: virtual time (QEMU's icount) exists under TCG only; use --vm-accel tcg (or auto), or --vm-clock wall")
		}
		return ClockVirtual, nil
	}
	return "", fmt.Errorf("--vm-clock %q: want auto (virtual under TCG, wall under KVM), virtual or wall", clock)
}

// CheckClockFlags refuses a --vm-clock and --vm-accel pair no guest can run with, before
// anything boots.
func CheckClockFlags(clock, accel string) error {
	if accel == "" || accel == "auto" {
		accel = ""
	}
	_, err := ResolveClock(clock, accel)
	return err
}

// ErrNoIcount: QEMU refused -icount.
var ErrNoIcount = errors.New("QEMU refused -icount")

// icountUnsupported reports whether QEMU's complaint on stderr is that it has no icount (a
// build without TCG, or an -icount it does not parse).
func icountUnsupported(stderr string) bool {
	s := strings.ToLower(stderr)
	return strings.Contains(s, "icount")
}

// PlannedClock is the clock a session with opt will run its guests on, as far as it is known
// before anything boots; "" when KVM's boot decides it (auto with a usable /dev/kvm: wall
// time, or virtual after a fall back to TCG).
func PlannedClock(opt Options) string {
	accel := opt.Accel
	if accel == "" || accel == "auto" {
		if opt.Clock == ClockVirtual || opt.Clock == ClockWall {
			return opt.Clock
		}
		if chosen, _ := chooseAccel(); chosen != AccelTCG {
			return ""
		}
		accel = AccelTCG
	}
	clock, err := ResolveClock(opt.Clock, accel)
	if err != nil {
		return ""
	}
	return clock
}
