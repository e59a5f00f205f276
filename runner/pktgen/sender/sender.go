// Package sender runs the kernel's packet generator in this process's network namespace:
// the writes to /proc/net/pktgen that package pktgen plans (pktgen.Options.Setup), the
// destination's MAC from the neighbour table, start and stop. It touches the kernel; `nsperf
// pktgen` (cmd/nsperf) is its only caller, started by the runner in the client's namespace.
package sender

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/nsperf/nsperf/runner/pktgen"
)

// Send runs the generator in this process's network namespace for o.Seconds (or until ctx
// ends) and prints the device's file, its result in it, to w. The thread loses the device
// on every way out.
func Send(ctx context.Context, o pktgen.Options, w io.Writer) error {
	if err := o.Check(); err != nil {
		return err
	}
	if _, err := os.Stat(pktgen.Dir); errors.Is(err, fs.ErrNotExist) {
		return pktgen.ErrNoPktgen
	}
	thread := filepath.Join(pktgen.Dir, pktgen.ThreadFile(o.Thread))
	if _, err := os.Stat(thread); err != nil {
		return fmt.Errorf("pktgen has no thread for CPU %d (%s): %w", o.Thread, thread, err)
	}
	mac := o.DstMAC
	if mac == "" {
		var err error
		if mac, err = resolveMAC(ctx, o.Device, o.Dst, o.Port); err != nil {
			return err
		}
	}
	if o.ResolveOnly {
		_, err := fmt.Fprintln(w, mac)
		return err
	}
	defer write(pktgen.Write{File: pktgen.ThreadFile(o.Thread), Line: "rem_device_all"}) //nolint:errcheck // the namespace's end removes it too
	for _, c := range o.Setup(mac) {
		if err := write(c); err != nil {
			return err
		}
	}
	return run(ctx, o, w)
}

// run starts every thread of the namespace (pgctrl's start, which returns only when they
// stop), stops them after the run's seconds or when ctx ends, and prints the device's file.
func run(ctx context.Context, o pktgen.Options, w io.Writer) error {
	started := make(chan error, 1)
	go func() { started <- write(pktgen.Write{File: "pgctrl", Line: "start"}) }()
	timer := time.NewTimer(time.Duration(o.Seconds) * time.Second)
	defer timer.Stop()
	select {
	case err := <-started:
		if err != nil {
			return err
		}
		return fmt.Errorf("pktgen stopped by itself before %d s: %s", o.Seconds, resultOf(o.Device))
	case <-ctx.Done():
	case <-timer.C:
	}
	if err := write(pktgen.Write{File: "pgctrl", Line: "stop"}); err != nil {
		return err
	}
	if err := <-started; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	text, err := os.ReadFile(filepath.Join(pktgen.Dir, o.Device))
	if err != nil {
		return fmt.Errorf("pktgen's result: %w", err)
	}
	_, err = w.Write(text)
	return err
}

// write writes one command to one of pktgen's files in one write(2), as echo does; pktgen
// answers a bad one with EINVAL and says why in the file's Result line.
func write(c pktgen.Write) error {
	path := filepath.Join(pktgen.Dir, c.File)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pktgen: %w", err)
	}
	_, err = f.Write([]byte(c.Line + "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pktgen: echo %q > %s: %w%s", c.Line, path, err, resultNote(c.File))
	}
	return nil
}

// resultNote is what a device's file says of the last command, for an error.
func resultNote(file string) string {
	if r := resultOf(file); r != "" {
		return " (" + r + ")"
	}
	return ""
}

// resultOf is the Result line of one of pktgen's files, "" when it has none.
func resultOf(file string) string {
	text, err := os.ReadFile(filepath.Join(pktgen.Dir, file))
	if err != nil {
		return ""
	}
	return pktgen.ResultLine(string(text))
}

// resolveMAC finds the MAC of dst on dev, as the stack would: one UDP datagram to it makes
// the kernel resolve the neighbour (ARP), and the neighbour table then has it (`ip neigh
// show DST dev DEV`). pktgen sends to the MAC it is given and resolves nothing itself.
func resolveMAC(ctx context.Context, dev, dst string, port int) (string, error) {
	link, err := netlink.LinkByName(dev)
	if err != nil {
		return "", fmt.Errorf("pktgen's device %s: %w", dev, err)
	}
	ip := net.ParseIP(dst)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if mac := neighbourMAC(link.Attrs().Index, ip); mac != "" {
			return mac, nil
		}
		if c, err := net.Dial("udp4", net.JoinHostPort(dst, strconv.Itoa(port))); err == nil {
			c.Write([]byte{0}) //nolint:errcheck // only to make the kernel resolve the neighbour
			c.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("pktgen: no MAC for %s on %s after 5 s (its neighbour never answered ARP): is %s the address of the server's end of %s?", dst, dev, dst, dev)
}

// neighbourMAC is the MAC the neighbour table has for ip on the device, "" for none yet.
func neighbourMAC(index int, ip net.IP) string {
	neighs, err := netlink.NeighList(index, netlink.FAMILY_V4)
	if err != nil {
		return ""
	}
	for _, n := range neighs {
		if n.IP.Equal(ip) && len(n.HardwareAddr) == 6 && n.State&(netlink.NUD_REACHABLE|netlink.NUD_STALE|netlink.NUD_DELAY|netlink.NUD_PROBE|netlink.NUD_PERMANENT) != 0 {
			return n.HardwareAddr.String()
		}
	}
	return ""
}
