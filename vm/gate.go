package vm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nsperf/nsperf/internal/waitlimit"
	"github.com/nsperf/nsperf/results"
)

// The A/B gate: two guests take turns. Before each round a guest writes gate/ready-N into its
// exchange directory and waits for go-N from the host, in a directory of the host's that the
// guest sees read-only (GuestGateDir): a guest can plant nothing the host would write through.
// The host lets one guest run (QMP
// cont) until it is ready for its next round, pauses it (QMP stop) and lets the other run the
// same round. A paused guest uses no host CPU, so the running one measures alone.

const gateDir = "gate"

// gatePoll is how often each side looks for the other's file: between rounds only.
const gatePoll = waitlimit.Poll

// GuestGate returns the guest's side of the gate for the runner's BeforeRound: dir is the
// exchange directory as the guest sees it, where it says ready-N; the host's go-N appear in
// GuestGateDir.
func GuestGate(ctx context.Context, dir string) func() error {
	n := 0
	return func() error {
		n++
		g := filepath.Join(dir, gateDir)
		if err := os.MkdirAll(g, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(g, "ready-"+strconv.Itoa(n)), nil, 0o644); err != nil {
			return fmt.Errorf("gate: %w", err)
		}
		for {
			if _, err := os.Stat(filepath.Join(GuestGateDir, "go-"+strconv.Itoa(n))); err == nil {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(gatePoll):
			}
		}
	}
}

// readyOrExit waits until guest i is ready for gate n or its QEMU exits.
func (s *Session) readyOrExit(ctx context.Context, i, n int) (ready bool, err error) {
	path := filepath.Join(s.Exchange(i), gateDir, "ready-"+strconv.Itoa(n))
	m := s.guests[i].m
	for {
		if _, err := os.Lstat(path); err == nil {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-m.Exited():
			return false, nil
		case <-time.After(gatePoll):
		}
	}
}

// Alternate runs the guests' rounds in turns: every guest runs round N while the others are
// paused, in ABBA order (A first in odd rounds, B first in even ones) so that neither kernel
// always follows the other. It returns when every guest has ended, with the turns taken. Guests
// that run together (Session.Together) run each round at once instead (inStep).
func (s *Session) Alternate(ctx context.Context) ([]results.Turn, error) {
	if s.Together() {
		return s.inStep(ctx)
	}
	alive := make([]bool, len(s.guests))
	// Every guest boots, builds its topology and reaches gate 1; then it is paused.
	for i := range s.guests {
		ready, err := s.readyOrExit(ctx, i, 1)
		if err != nil {
			return nil, err
		}
		alive[i] = ready
		if ready {
			if err := s.guests[i].m.Pause(); err != nil {
				return nil, err
			}
		}
	}
	var turns []results.Turn
	for n := 1; ; n++ {
		order := make([]int, len(s.guests))
		for i := range order {
			order[i] = i
			if n%2 == 0 {
				order[i] = len(s.guests) - 1 - i
			}
		}
		any := false
		for _, i := range order {
			if !alive[i] {
				continue
			}
			any = true
			m := s.guests[i].m
			others := map[int]time.Duration{}
			for j, g := range s.guests {
				if j != i && alive[j] {
					others[j] = g.m.CPUTime()
				}
			}
			start := time.Now()
			// In the host's gate directory, which the guest sees read-only.
			if err := os.WriteFile(filepath.Join(s.guests[i].cfg.Gate(), "go-"+strconv.Itoa(n)), nil, 0o644); err != nil {
				return turns, err
			}
			if err := m.Cont(); err != nil {
				return turns, err
			}
			ready, err := s.readyOrExit(ctx, i, n+1)
			if err != nil {
				return turns, err
			}
			t := results.Turn{Gate: n, Kernel: s.guests[i].cfg.Name, Seconds: time.Since(start).Seconds()}
			for j, before := range others {
				t.PausedCPUSeconds += (s.guests[j].m.CPUTime() - before).Seconds()
			}
			turns = append(turns, t)
			if !ready {
				alive[i] = false
				continue
			}
			if err := m.Pause(); err != nil {
				return turns, err
			}
		}
		if !any {
			return turns, nil
		}
	}
}

// inStep runs the guests' rounds at once, in step: every guest gets go-N together and round
// N+1 starts when every guest is ready for it (or has ended). A guest that is ready first is
// paused (QMP stop) until the others are: waiting at its gate in virtual time it would poll
// through hours of its clock (idle time warps forward) for nothing. Each guest has a host CPU
// of its own (PlanTogether) and measures in virtual time. Both kernels thus measure each round
// of the alternated schedule side by side, as the turns record (Together).
func (s *Session) inStep(ctx context.Context) ([]results.Turn, error) {
	alive := make([]bool, len(s.guests))
	for i := range s.guests {
		ready, err := s.readyOrExit(ctx, i, 1)
		if err != nil {
			return nil, err
		}
		if alive[i] = ready; ready {
			if err := s.guests[i].m.Pause(); err != nil {
				return nil, err
			}
		}
	}
	var turns []results.Turn
	for n := 1; ; n++ {
		var pending []int
		for i, a := range alive {
			if a {
				pending = append(pending, i)
			}
		}
		if len(pending) == 0 {
			return turns, nil
		}
		start := time.Now()
		for _, i := range pending {
			if err := os.WriteFile(filepath.Join(s.guests[i].cfg.Gate(), "go-"+strconv.Itoa(n)), nil, 0o644); err != nil {
				return turns, err
			}
		}
		for _, i := range pending {
			if err := s.guests[i].m.Cont(); err != nil {
				return turns, err
			}
		}
		for len(pending) > 0 {
			var still []int
			for _, i := range pending {
				ready, ended := s.readyNow(i, n+1)
				if !ready && !ended {
					still = append(still, i)
					continue
				}
				turns = append(turns, results.Turn{Gate: n, Kernel: s.guests[i].cfg.Name, Seconds: time.Since(start).Seconds(), Together: true})
				if alive[i] = ready; ready {
					if err := s.guests[i].m.Pause(); err != nil {
						return turns, err
					}
				}
			}
			if pending = still; len(pending) == 0 {
				break
			}
			select {
			case <-ctx.Done():
				return turns, ctx.Err()
			case <-time.After(gatePoll):
			}
		}
	}
}

// readyNow says, without waiting, whether guest i is ready for gate n, or has ended.
func (s *Session) readyNow(i, n int) (ready, ended bool) {
	if _, err := os.Lstat(filepath.Join(s.Exchange(i), gateDir, "ready-"+strconv.Itoa(n))); err == nil {
		return true, false
	}
	select {
	case <-s.guests[i].m.Exited():
		return false, true
	default:
		return false, false
	}
}
