package waitlimit

import (
	"context"
	"testing"
	"time"
)

func TestOnVirtualClockLiftsAndRestores(t *testing.T) {
	if Virtual() || Of(time.Second) != time.Second {
		t.Fatal("a fresh process is on the wall clock with its bounds")
	}
	restore := OnVirtualClock()
	if !Virtual() || Of(time.Second) != None {
		t.Errorf("on a virtual clock: Of(1s) = %s", Of(time.Second))
	}
	ctx, cancel := Context(context.Background(), time.Millisecond)
	defer cancel()
	if d, _ := ctx.Deadline(); time.Until(d) < time.Hour {
		t.Errorf("a virtual clock's context ends in %s", time.Until(d))
	}
	inner := OnVirtualClock()
	inner()
	if !Virtual() {
		t.Error("a nested restore ended the outer virtual clock")
	}
	restore()
	if Virtual() || Of(time.Second) != time.Second {
		t.Error("restore did not put the bounds back")
	}
}
