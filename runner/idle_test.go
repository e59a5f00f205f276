package runner

import (
	"testing"
	"time"
)

// TestIdleLimitEnv: $NSPERF_IDLE_WAIT sets the gate's default limit (0: no wait); anything
// else leaves the 10 s default.
func TestIdleLimitEnv(t *testing.T) {
	for env, want := range map[string]time.Duration{"": DefaultIdleLimit, "2s": 2 * time.Second, "0": -1, "soon": DefaultIdleLimit, "-3s": DefaultIdleLimit} {
		t.Setenv(IdleWaitEnv, env)
		if got := (IdleGate{}).withDefaults().Limit; got != want {
			t.Errorf("%s=%q: limit %s, want %s", IdleWaitEnv, env, got, want)
		}
	}
}
