package topo

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/nsperf/nsperf/internal/netnsx"
	"github.com/nsperf/nsperf/internal/netstat"
	"github.com/nsperf/nsperf/results"
)

// Packets above 64 KiB are counted with nftables, in a netdev table of the namespace: per
// device a chain on the egress hook (before the qdisc and before any software segmentation,
// so it sees what the stack handed the device) and one on the ingress hook (after GRO), each
// with one rule, `meta length > LIMIT counter`. A packet is big when its IP packet is longer
// than 65535 bytes, what IP carries without BIG TCP: skb->len at ingress is the IP packet
// (the Ethernet header is pulled by then), at egress it includes the 14-byte header of an
// Ethernet device (veth, vxlan, macvlan, tap), so the egress limit is 65549 there. nftables was chosen over a tc filter and BPF:
// the kernel's own selftest counts big packets the same way (big_tcp.sh, with a length match),
// the rule needs no compiler and no program loaded, it is read back with its counter in one
// netlink dump, and the table dies with the namespace, so nothing outlives a killed run. The
// equivalent commands:
//
//	nft add table netdev nsperf_big
//	nft add chain netdev nsperf_big out-eth0 '{ type filter hook egress device eth0 priority 0; }'
//	nft add rule netdev nsperf_big out-eth0 meta length '>' 65549 counter
//	nft add chain netdev nsperf_big in-eth0 '{ type filter hook ingress device eth0 priority 0; }'
//	nft add rule netdev nsperf_big in-eth0 meta length '>' 65535 counter

// bigTable is the nftables table that counts packets above 64 KiB, in each namespace.
const bigTable = "nsperf_big"

// bigCounting is what CountBigPackets set up: per "ns/dev" whether it is counted.
type bigCounting struct {
	devices map[string]bool
	note    string
}

// CountBigPackets installs the counting of packets above 64 KiB on the devices ("ns/dev"),
// and says how they are counted or why they are not. A device in the namespace nsperf runs in
// (an existing OVS's) is not counted: a table there could outlive a killed run.
func (l *Live) CountBigPackets(devices []string) string {
	l.big = &bigCounting{devices: map[string]bool{}}
	var failed []string
	byNS := map[string][]string{}
	for _, ref := range devices {
		ns, dev := splitRef(ref)
		sp, ok := l.spaces[ns]
		switch {
		case !ok:
			failed = append(failed, ref+": not in the topology")
		case sp.root:
			failed = append(failed, ref+": in nsperf's own namespace, not counted")
		default:
			byNS[ns] = append(byNS[ns], dev)
		}
	}
	for _, ns := range sortedNS(byNS) {
		if err := installBig(l, ns, byNS[ns]); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", ns, err))
			continue
		}
		for _, dev := range byNS[ns] {
			l.big.devices[ns+"/"+dev] = true
		}
	}
	switch {
	case len(devices) == 0:
		l.big.note = "not counted: no state sets a GSO/GRO size limit"
	case len(failed) > 0:
		l.big.note = "unavailable on some devices: " + strings.Join(failed, "; ")
	default:
		l.big.note = "counted with nftables (netdev egress and ingress: IP packets above 65535 bytes) on " + strings.Join(devices, ", ")
	}
	return l.big.note
}

func sortedNS(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func nft(l *Live, ns string) (*nftables.Conn, error) {
	return nftables.New(nftables.WithNetNSFd(int(l.spaces[ns].fd)))
}

// bigLimit is the largest skb->len at a hook that is no big packet: 65535 bytes of IP, and
// at egress the link-layer header (header bytes: 14 on an Ethernet device, 0 on others).
func bigLimit(egress bool, header uint32) uint32 {
	if egress {
		return results.BigPacket + header
	}
	return results.BigPacket
}

func bigChains(t *nftables.Table, dev string) []*nftables.Chain {
	accept := nftables.ChainPolicyAccept
	return []*nftables.Chain{
		{Name: "out-" + dev, Table: t, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookEgress, Priority: nftables.ChainPriorityFilter, Policy: &accept, Device: dev},
		{Name: "in-" + dev, Table: t, Type: nftables.ChainTypeFilter, Hooknum: nftables.ChainHookIngress, Priority: nftables.ChainPriorityFilter, Policy: &accept, Device: dev},
	}
}

// installBig adds the namespace's table in one transaction, and its undo.
func installBig(l *Live, ns string, devs []string) error {
	c, err := nft(l, ns)
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyNetdev, Name: bigTable})
	for _, dev := range devs {
		header := uint32(0)
		if link, err := l.spaces[ns].nl.LinkByName(dev); err == nil && len(link.Attrs().HardwareAddr) == 6 {
			header = 14 // an Ethernet device: ETH_HLEN
		}
		for i, ch := range bigChains(t, dev) {
			c.AddChain(ch)
			// As nft itself compiles `meta length > N`: the length is loaded in host order and
			// turned to network order, as the kernel compares registers byte by byte (memcmp).
			c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: []expr.Any{
				&expr.Meta{Key: expr.MetaKeyLEN, Register: 1},
				&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 4, Size: 4},
				&expr.Cmp{Op: expr.CmpOpGt, Register: 1, Data: binaryutil.BigEndian.PutUint32(bigLimit(i == 0, header))},
				&expr.Counter{},
			}})
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nftables netdev table (nft add table netdev %s): %w", bigTable, err)
	}
	l.push("delete nftables table "+bigTable+" in "+ns, func() error {
		c, err := nft(l, ns)
		if err != nil {
			return err
		}
		c.DelTable(&nftables.Table{Family: nftables.TableFamilyNetdev, Name: bigTable})
		if err := c.Flush(); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("nft delete table netdev %s in %s: %w", bigTable, ns, err)
		}
		return nil
	})
	return nil
}

// readBig reads a namespace's big-packet counters: "out-DEV"/"in-DEV" -> packets.
func readBig(l *Live, ns string, devs []string) (map[string]uint64, error) {
	c, err := nft(l, ns)
	if err != nil {
		return nil, err
	}
	t := &nftables.Table{Family: nftables.TableFamilyNetdev, Name: bigTable}
	out := map[string]uint64{}
	for _, dev := range devs {
		for _, ch := range bigChains(t, dev) {
			rules, err := c.GetRules(t, ch)
			if err != nil {
				continue // the chain went with its device (recreated)
			}
			for _, r := range rules {
				for _, e := range r.Exprs {
					if cnt, ok := e.(*expr.Counter); ok {
						out[ch.Name] = cnt.Packets
					}
				}
			}
		}
	}
	return out, nil
}

// Counters reads every topology device's link and root-qdisc statistics (`ip -s link`,
// `tc -s qdisc`), the big-packet counters, each namespace's SNMP and netstat counters (as
// `nstat -az` in it) and the CPUs' softnet_stat and network softirqs. What cannot be read is
// named in Errors.
func (l *Live) Counters(cpus []int) results.Counters {
	c := results.Counters{Devices: map[string]results.DeviceCounters{}, Namespaces: map[string]map[string]uint64{}}
	wanted := map[string][]string{}
	for ref := range l.pristine {
		ns, dev := splitRef(ref)
		wanted[ns] = append(wanted[ns], dev)
	}
	for _, ns := range sortedNS(wanted) {
		if err := nsCounters(l, ns, wanted[ns], &c); err != nil {
			c.Errors = append(c.Errors, fmt.Sprintf("%s: %v", ns, err))
		}
	}
	if len(cpus) > 0 {
		readCPUCounters(cpus, &c)
	}
	return c
}

func nsCounters(l *Live, ns string, devs []string, c *results.Counters) error {
	sp := l.spaces[ns]
	links, err := retryDump(sp.nl.LinkList)
	if err != nil {
		return fmt.Errorf("ip -s link: %w", err)
	}
	qdiscs, err := retryDump(func() ([]netlink.Qdisc, error) { return sp.nl.QdiscList(nil) })
	if err != nil {
		return fmt.Errorf("tc -s qdisc: %w", err)
	}
	var bigDevs []string
	for _, dev := range devs {
		if l.big != nil && l.big.devices[ns+"/"+dev] {
			bigDevs = append(bigDevs, dev)
		}
	}
	var big map[string]uint64
	if len(bigDevs) > 0 {
		if big, err = readBig(l, ns, bigDevs); err != nil {
			c.Errors = append(c.Errors, fmt.Sprintf("%s: nftables: %v", ns, err))
		}
	}
	for _, link := range links {
		a := link.Attrs()
		if !slices.Contains(devs, a.Name) || a.Statistics == nil {
			continue
		}
		d := results.DeviceCounters{TxPackets: a.Statistics.TxPackets, TxBytes: a.Statistics.TxBytes, RxPackets: a.Statistics.RxPackets, RxBytes: a.Statistics.RxBytes}
		for _, q := range qdiscs {
			qa := q.Attrs()
			if qa.LinkIndex == a.Index && qa.Parent == netlink.HANDLE_ROOT && qa.Statistics != nil && qa.Statistics.Queue != nil {
				d.QdiscDrops, d.QdiscRequeues = uint64(qa.Statistics.Queue.Drops), uint64(qa.Statistics.Queue.Requeues)
				d.QdiscOverlimits, d.QdiscBacklog = uint64(qa.Statistics.Queue.Overlimits), uint64(qa.Statistics.Queue.Backlog)
			}
		}
		if v, ok := big["out-"+a.Name]; ok {
			d.BigTx = &v
		}
		if v, ok := big["in-"+a.Name]; ok {
			d.BigRx = &v
		}
		c.Devices[ns+"/"+a.Name] = d
	}
	// /proc/thread-self/net is the calling thread's namespace: read it from inside.
	counters := netstat.Counters{}
	err = netnsx.Do(sp.fd, func() error {
		for _, f := range []string{"snmp", "netstat", "snmp6"} {
			data, err := os.ReadFile("/proc/thread-self/net/" + f)
			if err != nil {
				if f == "snmp6" && errors.Is(err, os.ErrNotExist) {
					continue // IPv6 disabled
				}
				return err
			}
			if f == "snmp6" {
				netstat.ParseSNMP6(data, counters)
			} else {
				netstat.ParseSNMP(data, counters)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("nstat: %w", err)
	}
	c.Namespaces[ns] = counters
	return nil
}

// readCPUCounters reads the CPUs' softnet_stat lines, softirqs and interrupts, which are the
// machine's, not a namespace's.
func readCPUCounters(cpus []int, c *results.Counters) {
	softnet, err1 := os.ReadFile("/proc/net/softnet_stat")
	softirqs, err2 := os.ReadFile("/proc/softirqs")
	interrupts, err3 := os.ReadFile("/proc/interrupts")
	if err := errors.Join(err1, err2, err3); err != nil {
		c.Errors = append(c.Errors, fmt.Sprintf("cpu counters: %v", err))
		return
	}
	sn, si, irq := netstat.ParseSoftnet(softnet), netstat.ParsePerCPU(softirqs), netstat.ParsePerCPU(interrupts)
	c.CPUs = map[string]results.CPUCounters{}
	for _, cpu := range cpus {
		s := sn[cpu]
		var devices uint64
		for name, row := range irq {
			if _, err := strconv.Atoi(name); err == nil {
				devices += row[cpu]
			}
		}
		c.CPUs[results.CPUKey(cpu)] = results.CPUCounters{Processed: s.Processed, Dropped: s.Dropped, TimeSqueeze: s.TimeSqueeze,
			NetRX: si["NET_RX"][cpu], NetTX: si["NET_TX"][cpu],
			TimerSoftirqs: si["TIMER"][cpu], SchedSoftirqs: si["SCHED"][cpu], RCUSoftirqs: si["RCU"][cpu],
			LocalTimerIRQs: irq["LOC"][cpu], ReschedIPIs: irq["RES"][cpu], CallIPIs: irq["CAL"][cpu], DeviceIRQs: devices}
	}
}
