package guesttest

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/nsperf/nsperf/testkit/clitest"
	"github.com/nsperf/nsperf/vm"
)

// TestVMTwinBoots: one kernel booted twice in virtual time, together, boots alike to the last
// line the kernel prints before it runs /init: every line and its timestamp the same. Nothing
// of the host's timing reaches a guest before its first I/O to the host (the 9p mounts, after
// /init starts): not the real-time clock (on the virtual clock, from one date: vm.VirtualRTC)
// and not the console (two FIFOs: the guest reads nothing back of what it wrote).
func TestVMTwinBoots(t *testing.T) {
	t.Parallel()
	image, modules := clitest.GuestTest(t)
	img, err := vm.ReadImage(image)
	if err != nil {
		t.Fatal(err)
	}
	k := vm.Kernel{Image: img, Modules: modules}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := vm.Boot(ctx, vm.Options{Kernels: []vm.Kernel{k, k}, CPUs: 2, Accel: vm.AccelTCG, Clock: vm.ClockVirtual, Pin: true,
		Binary: clitest.Binary, Args: func(int, string) []string { return []string{"--help"} }, Progress: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	outs := s.Wait(ctx)
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	if len(outs) != 2 {
		t.Fatalf("%d outcomes", len(outs))
	}
	var boots [2][]byte
	for i, o := range outs {
		if o.Err != nil || o.ExitCode != 0 {
			t.Fatalf("guest %d: exit %d, %v, %s\n%s\n%s", i, o.ExitCode, o.Err, o.Error, o.Stdout, o.Console)
		}
		if o.Info.RTC == "" {
			t.Errorf("guest %d: no real-time clock recorded for virtual time", i)
		}
		end := bytes.Index(o.Console, []byte("Run /init as init process"))
		if end < 0 {
			t.Fatalf("guest %d: the console has no 'Run /init as init process':\n%s", i, o.Console)
		}
		boots[i] = o.Console[:end]
	}
	if !bytes.Equal(boots[0], boots[1]) {
		a, b := bytes.Split(boots[0], []byte("\n")), bytes.Split(boots[1], []byte("\n"))
		for n := 0; n < min(len(a), len(b)); n++ {
			if !bytes.Equal(a[n], b[n]) {
				t.Fatalf("the two boots part at line %d of %d:\nA: %s\nB: %s", n+1, len(a), a[n], b[n])
			}
		}
		t.Fatalf("the two boots differ in length: %d and %d lines", len(a), len(b))
	}
	if outs[0].Info.RTC != outs[1].Info.RTC {
		t.Errorf("the guests' real-time clocks start apart: %s, %s", outs[0].Info.RTC, outs[1].Info.RTC)
	}
}
