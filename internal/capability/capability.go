// Package capability holds the one error that says a machine or kernel lacks what a scenario
// needs: not a failure of the change being measured but a run that cannot happen here, exit 4
// (skipped), 125 in a bisect step. Each error that says so, whatever it carries, answers
// errors.Is(err, capability.ErrMissing); nothing tests their types one by one.
package capability

import (
	"errors"
	"strings"
)

// ErrMissing is what every "this machine cannot do it" error is.
var ErrMissing = errors.New("a capability the scenario needs is missing")

// Missing is an error of its own text that is ErrMissing, for a reason with nothing more to
// carry (needs root, a program that is not installed).
func Missing(text string) error { return missing(text) }

type missing string

func (m missing) Error() string        { return string(m) }
func (m missing) Is(target error) bool { return target == ErrMissing }

// Error says that the kernel, a device or the machine cannot do what a scenario asks, with
// every reason found: the run is skipped (exit 4), not failed. A state marked optional that
// meets one is measured as unavailable instead.
type Error struct{ Reasons []string }

// Is makes an Error an ErrMissing.
func (e *Error) Is(target error) bool { return target == ErrMissing }

func (e *Error) Error() string {
	return "this kernel cannot apply the scenario: " + strings.Join(e.Reasons, "; ") +
		" (`nsperf probe` shows what it can do; `--kernel` measures in a guest on a kernel that has it; `optional: true` on a state measures the others without it)"
}
