package results

import (
	"fmt"
	"math"
	"slices"

	"github.com/nsperf/nsperf/knobs"
)

// Evidence is what the datapath did in one state on one device, summed over the state's
// samples, or a warning that the state did not do what it set.
type Evidence struct {
	State  string `json:"state"`
	Device string `json:"device,omitempty"`
	// Direction is the one that carried the data on this device: tx or rx.
	Direction      string  `json:"direction,omitempty"`
	Packets        uint64  `json:"packets,omitempty"`
	BytesPerPacket float64 `json:"bytes_per_packet,omitempty"`
	// Big is the packets above 64 KiB seen in that direction; nil where not counted.
	Big  *uint64 `json:"big,omitempty"`
	Text string  `json:"text"`
	// Warning is set when the text is a warning: a limit raised and nothing above 64 KiB
	// seen, or packets that shrink along the path.
	Warning bool `json:"warning,omitempty"`
}

// Thresholds of the evidence warnings.
const (
	// legacyMaxSize is the largest GSO/GRO limit without BIG TCP (GSO_LEGACY_MAX_SIZE).
	legacyMaxSize = 65536
	// shrinkRatio: packets that leave one device this many times larger than they cross
	// another that carries as much of the data were segmented in software between them.
	shrinkRatio = 8
	// carrying: a device takes part in the path when it carried at least this share of the
	// bytes of the device that carried the most.
	carrying = 0.25
)

// devTotals are a state's device counters summed over its samples.
type devTotals struct {
	DeviceCounters
	bigTxOK, bigRxOK bool
	bigTx, bigRx     uint64
}

// stateTotals sums the device counters of a state's valid samples.
func stateTotals(samples []Sample, state string) (map[string]*devTotals, int) {
	out := map[string]*devTotals{}
	n := 0
	for _, s := range samples {
		if s.State != state || s.Error != "" || s.Invalid != "" || s.Counters == nil {
			continue
		}
		n++
		for ref, d := range s.Counters.Devices {
			t := out[ref]
			if t == nil {
				t = &devTotals{bigTxOK: true, bigRxOK: true}
				out[ref] = t
			}
			// Sums that would wrap saturate instead: a stored result is input, and a sum
			// past 2^64 would read as a small one.
			t.TxPackets = addSat(t.TxPackets, d.TxPackets)
			t.TxBytes = addSat(t.TxBytes, d.TxBytes)
			t.RxPackets = addSat(t.RxPackets, d.RxPackets)
			t.RxBytes = addSat(t.RxBytes, d.RxBytes)
			t.bigTxOK = t.bigTxOK && d.BigTx != nil
			t.bigRxOK = t.bigRxOK && d.BigRx != nil
			if d.BigTx != nil {
				t.bigTx = addSat(t.bigTx, *d.BigTx)
			}
			if d.BigRx != nil {
				t.bigRx = addSat(t.bigRx, *d.BigRx)
			}
		}
	}
	return out, n
}

// addSat is a + b, or the largest uint64 where the sum would wrap.
func addSat(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// dataDirection is the direction that carried more bytes on a device, with its packets,
// bytes and big packets (nil: not counted).
func (t *devTotals) dataDirection() (dir string, packets, bytes uint64, big *uint64) {
	if t.RxBytes > t.TxBytes {
		dir, packets, bytes = "rx", t.RxPackets, t.RxBytes
		if t.bigRxOK {
			big = &t.bigRx
		}
		return
	}
	dir, packets, bytes = "tx", t.TxPackets, t.TxBytes
	if t.bigTxOK {
		big = &t.bigTx
	}
	return
}

// limitDevices are the devices any state sets a GSO/GRO size limit on, sorted.
func limitDevices(states []StateRecord) []string {
	var out []string
	for _, st := range states {
		for ref, attrs := range st.Devices {
			for _, k := range knobs.SizeLimits() {
				if _, ok := attrs[k]; ok && !slices.Contains(out, ref) {
					out = append(out, ref)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// raised names the first size limit a state sets above 64 KiB on a device, "" when none.
func raised(st StateRecord, ref string) string {
	for _, k := range knobs.SizeLimits() {
		if v, ok := st.Devices[ref][k]; ok && v > legacyMaxSize {
			return fmt.Sprintf("%s %d", k, v)
		}
	}
	return ""
}

// heldUpstream names a device upstream of ref on the state's data path whose size limits the
// state keeps at 64 KiB or below, "" when there is none: through it, no packet above 64 KiB
// reaches ref, by design (ovs-internal-tso's "off" holds int0 at 64 KiB, and the veth port
// after it keeps its 524280 in every state). The path is the limit devices that carry at
// least a quarter of the data, and upstream is read from their direction and lower devices:
// every sending (tx) device is upstream of every receiving (rx) one; among sending devices,
// all but ref's own lower devices (an upper such as a vxlan sends through its lower, which
// comes after it); among receiving ones, ref's lower devices (they receive first).
func heldUpstream(st StateRecord, ref string, devices []string, totals map[string]*devTotals) string {
	carries := map[string]string{} // device -> direction, for the devices on the path
	most := uint64(0)
	for _, d := range devices {
		if t := totals[d]; t != nil {
			_, _, bytes, _ := t.dataDirection()
			most = max(most, bytes)
		}
	}
	for _, d := range devices {
		if t := totals[d]; t != nil {
			dir, packets, bytes, _ := t.dataDirection()
			if packets > 0 && float64(bytes) >= carrying*float64(most) {
				carries[d] = dir
			}
		}
	}
	lowerOf := func(upper, lower string) bool { // lower is upper's lower device, at any depth
		for seen := 0; seen < len(st.Lower) && st.Lower[upper] != ""; seen++ {
			if upper = st.Lower[upper]; upper == lower {
				return true
			}
		}
		return false
	}
	dir, ok := carries[ref]
	if !ok {
		return ""
	}
	for _, u := range devices {
		udir, on := carries[u]
		if u == ref || !on || raised(st, u) != "" || !hasSizeLimit(st, u) {
			continue
		}
		upstream := false
		switch {
		case dir == "rx" && udir == "tx":
			upstream = true
		case dir == "tx" && udir == "tx":
			upstream = !lowerOf(ref, u)
		case dir == "rx" && udir == "rx":
			upstream = lowerOf(ref, u)
		}
		if upstream {
			return u
		}
	}
	return ""
}

// hasSizeLimit reports whether the state read back a GSO/GRO size limit of the device.
func hasSizeLimit(st StateRecord, ref string) bool {
	for _, k := range knobs.SizeLimits() {
		if _, ok := st.Devices[ref][k]; ok {
			return true
		}
	}
	return false
}

// Explain computes a case's evidence lines and side metrics from its samples.
func Explain(c *Case, policy Policy) {
	c.Evidence, c.SideMetrics = nil, nil
	devices := limitDevices(c.States)
	for _, st := range c.States {
		if st.Unavailable != "" {
			continue
		}
		totals, n := stateTotals(c.Samples, st.Name)
		if n == 0 {
			continue
		}
		for _, ref := range devices {
			if t := totals[ref]; t != nil {
				c.Evidence = append(c.Evidence, deviceEvidence(st, ref, t, heldUpstream(st, ref, devices, totals))...)
			}
		}
		if e, ok := shrinkEvidence(st.Name, totals); ok {
			c.Evidence = append(c.Evidence, e)
		}
	}
	c.SideMetrics = sideMetrics(c, policy)
}

// deviceEvidence is a device's line in a state, and the warning when the state meant packets
// above 64 KiB to cross the device (it raises the device's limit, and held names no device
// upstream that keeps them at 64 KiB) and none did.
func deviceEvidence(st StateRecord, ref string, t *devTotals, held string) []Evidence {
	dir, packets, bytes, big := t.dataDirection()
	e := Evidence{State: st.Name, Device: ref, Direction: dir, Packets: packets, Big: big}
	if packets == 0 {
		e.Text = fmt.Sprintf("%s: %s no packets", st.Name, ref)
		return []Evidence{e}
	}
	e.BytesPerPacket = float64(bytes) / float64(packets)
	e.Text = fmt.Sprintf("%s: %s %s %s per packet", st.Name, ref, dir, FormatBytes(e.BytesPerPacket))
	if big != nil {
		e.Text += fmt.Sprintf(", %s above 64 KiB", share(*big, packets))
	}
	out := []Evidence{e}
	if limit := raised(st, ref); limit != "" && held == "" && big != nil && *big == 0 {
		out = append(out, Evidence{State: st.Name, Device: ref, Warning: true,
			Text: fmt.Sprintf("%s: BIG TCP not in effect on %s: %s, but no packet above 64 KiB in %d %s packets (%s per packet)", st.Name, ref, limit, packets, dir, FormatBytes(e.BytesPerPacket))})
	}
	return out
}

// share is big of all as a percentage: "98%", "0%", "<1%".
func share(big, all uint64) string {
	p := 100 * float64(big) / float64(all)
	switch {
	case big > 0 && p < 1:
		return "<1%"
	case p > 100:
		// Big packets are counted before the device segments them, its packets after.
		return fmt.Sprintf("%d packets (%d sent)", big, all)
	}
	return fmt.Sprintf("%.0f%%", p)
}

// shrinkEvidence warns when the packets of a state's data path are much larger on one device
// than on another that carried as much: something segmented them in software in between.
func shrinkEvidence(state string, totals map[string]*devTotals) (Evidence, bool) {
	type leg struct {
		ref, dir    string
		bytes, size float64
	}
	var legs []leg
	most := 0.0
	for _, ref := range sortedKeys(totals) {
		dir, packets, bytes, _ := totals[ref].dataDirection()
		if packets == 0 {
			continue
		}
		legs = append(legs, leg{ref, dir, float64(bytes), float64(bytes) / float64(packets)})
		most = math.Max(most, float64(bytes))
	}
	var big *leg
	for i := range legs {
		if l := &legs[i]; l.bytes >= carrying*most && (big == nil || l.size > big.size) {
			big = l
		}
	}
	if big == nil {
		return Evidence{}, false
	}
	// Where packets were segmented: the device that sent them smallest (its tx counts what it
	// sent, after segmentation), rather than one that only received them small downstream.
	var small, smallTx *leg
	for i := range legs {
		l := &legs[i]
		if l.bytes < carrying*most {
			continue
		}
		if small == nil || l.size < small.size {
			small = l
		}
		if l.dir == "tx" && l.size*shrinkRatio <= big.size && (smallTx == nil || l.size < smallTx.size) {
			smallTx = l
		}
	}
	if smallTx != nil {
		small = smallTx
	}
	if big == nil || big.size < shrinkRatio*small.size || big.size <= 16e3 {
		return Evidence{}, false
	}
	return Evidence{State: state, Device: small.ref, Direction: small.dir, BytesPerPacket: small.size, Warning: true,
		Text: fmt.Sprintf("%s: packets shrink along the path: %s %s %s per packet, but %s %s %s: segmented in software between them",
			state, big.ref, big.dir, FormatBytes(big.size), small.ref, small.dir, FormatBytes(small.size))}, true
}

// EvidenceLines are a case's evidence texts, warnings prefixed.
func EvidenceLines(c Case) []string {
	var out []string
	for _, e := range c.Evidence {
		if e.Warning {
			out = append(out, "WARNING "+e.Text)
		} else {
			out = append(out, e.Text)
		}
	}
	return out
}

// evidenceValue is a figure of the evidence for expect: the mean per sample of a device's
// counters in a state.
func evidenceValue(c Case, state, ref, name string) (float64, bool) {
	var sum float64
	n := 0
	for _, s := range c.Samples {
		if s.State != state || s.Error != "" || s.Invalid != "" || s.Counters == nil {
			continue
		}
		v, ok := s.Counters.Flat()[ref+" "+name]
		if !ok {
			return 0, false
		}
		sum += v
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// PacketSizes are the mean bytes per packet, in the direction that carried the data, of each
// device in each state (over the state's samples): what the HTML report plots.
func PacketSizes(c Case) (devices []string, sizes map[string]map[string]float64) {
	sizes = map[string]map[string]float64{}
	for _, st := range c.States {
		totals, n := stateTotals(c.Samples, st.Name)
		if n == 0 {
			continue
		}
		for ref, t := range totals {
			_, packets, bytes, _ := t.dataDirection()
			if packets == 0 {
				continue
			}
			if sizes[st.Name] == nil {
				sizes[st.Name] = map[string]float64{}
			}
			sizes[st.Name][ref] = float64(bytes) / float64(packets)
			if !slices.Contains(devices, ref) {
				devices = append(devices, ref)
			}
		}
	}
	slices.Sort(devices)
	return devices, sizes
}
