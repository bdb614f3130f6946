package model

import (
	"encoding/binary"
	"sync"
)

// Per-stream filtering and policing, 802.1Qci (docs/hardware-enetc.md
// §13.5), as Linux's enetc_qos.c programs it for tc flower with the gate
// and police actions. While PPSFPMR.PSFPEN is set, a received frame the
// address filter accepted is looked up in the stream identity table (null
// stream identification: destination MAC, and by the entry's tag mode
// the VLAN); a frame that matches an enabled entry gets its stream
// handle, and the first enabled stream filter instance that matches the
// handle (or matches any, its handle-match bit clear) checks it:
//
//   - the filter's maximum SDU (MSDUEN): frame bytes without FCS; a longer
//     frame is dropped, counted in the filter's MSDU drops;
//   - the stream gate instance it names: at the chip timer's time of
//     arrival, a closed gate drops the frame (stream gate drops); an
//     entry's open/closed state runs on the gate's control list, from its
//     base time (a base time already past: the next base + N*cycle);
//     before that the gate's initial state holds;
//   - the flow meter instance it names (FMITEN): a single-rate token
//     bucket of CBS bytes filled at CIR (3.725 bit/s units), full when
//     loaded; a frame of L bytes with its FCS takes L tokens or is red and
//     dropped (flow meter drops). EIR and EBS other than 0 are refused.
//
// Every frame that reaches a filter counts in its matching frames. A
// frame no stream identity entry or no filter matches passes unfiltered.
const (
	regPPSFPMR  = 0x11B00
	regPSIDCAPR = 0x11B08
	regPSFCAPR  = 0x11B18
	regPSGCAPR  = 0x11B28
	regPFMCAPR  = 0x11B38

	ppsfpmr_PSFPEN = 1 << 0
	sipcapr0_PSFP  = 1 << 9

	// The control BD classes of the stream tables (Linux enum bdcr_cmd_class).
	CBDClassStreamID     = 7
	CBDClassStreamFilter = 8
	CBDClassStreamGate   = 9
	CBDClassFlowMeter    = 10

	// StreamEntries is how many entries each of the stream identity,
	// stream filter, stream gate and flow meter tables has (the model's
	// choice: PSIDCAPR, PSFCAPR, PSGCAPR[15:0] and PFMCAPR report it).
	StreamEntries = 16
	// StreamGateListMax is PSGCAPR[18:16], the longest stream gate list
	// (the model's choice; the admin list length field is 2 bits wide).
	StreamGateListMax = 4

	sgclHeader    = 16 // base time low, high, cycle time, extension
	sgclEntrySize = 8  // interval le32, max octets (3 bytes), flags
	streamIDData  = 8  // destination MAC, VID/VIDM/TG le16
	sfiCounters   = 32 // matching, MSDU, gate, meter drops: le32 low, high each
	cirUnitMilli  = 3725
)

type streamIDEntry struct {
	en     bool
	handle uint32
	dmac   [6]byte
	vid    uint16
	vidm   bool
	tg     uint8 // 1 tagged, 2 untagged, 3 any
}

type streamFilterEntry struct {
	en         bool
	handle     uint32
	sthm       bool
	gate       uint16
	msdu       uint16
	msduEn     bool
	meter      uint16
	meterEn    bool
	match, sdu uint64
	gateDrop   uint64
	red        uint64
}

type streamGateEntry struct {
	en       bool
	initOpen bool // before the list starts (OCGTST/AGTST)
	list     bool
	start    int64
	base     int64
	cycle    int64
	open     []bool
	interval []int64
}

type flowMeterEntry struct {
	en         bool
	cir, cbs   uint64 // CIR in 3.725 bit/s units, CBS bytes
	tokens     float64
	last       int64
	lastFilled bool
}

// qciState is the port's stream tables, under mu.
type qciState struct {
	mu      sync.Mutex
	ids     [StreamEntries]streamIDEntry
	filters [StreamEntries]streamFilterEntry
	gates   [StreamEntries]streamGateEntry
	meters  [StreamEntries]flowMeterEntry
}

// qciCaps sets the capability registers (reset, PF).
func (d *Device) qciCaps() {
	d.set(regPSIDCAPR, StreamEntries)
	d.set(regPSFCAPR, StreamEntries)
	d.set(regPSGCAPR, StreamGateListMax<<16|StreamEntries)
	d.set(regPFMCAPR, StreamEntries)
}

// qciReset forgets every stream table entry (FLR, power-on).
func (d *Device) qciReset() {
	q := &d.qci
	q.mu.Lock()
	q.ids, q.filters, q.gates, q.meters = [StreamEntries]streamIDEntry{}, [StreamEntries]streamFilterEntry{}, [StreamEntries]streamGateEntry{}, [StreamEntries]flowMeterEntry{}
	q.mu.Unlock()
}

// qciOn reports whether received frames go through the stream tables.
func (d *Device) qciOn() bool { return d.get(regPPSFPMR)&ppsfpmr_PSFPEN != 0 }

// qciPass runs one received frame (FCS excluded) through the stream
// tables and reports whether it passes.
func (d *Device) qciPass(frame []byte) bool {
	tagged, vid := false, uint16(0)
	if len(frame) >= 18 {
		if et := binary.BigEndian.Uint16(frame[12:14]); et == etVLAN || et == etQinQ {
			tagged, vid = true, binary.BigEndian.Uint16(frame[14:16])&0xFFF
		}
	}
	q := &d.qci
	q.mu.Lock()
	defer q.mu.Unlock()
	var handle uint32
	found := false
	for i := range q.ids {
		e := &q.ids[i]
		if !e.en || [6]byte(frame[0:6]) != e.dmac {
			continue
		}
		switch e.tg {
		case 1:
			if !tagged || e.vidm && vid != e.vid {
				continue
			}
		case 2:
			if tagged {
				continue
			}
		case 3:
		default:
			continue
		}
		handle, found = e.handle, true
		break
	}
	if !found {
		return true
	}
	var f *streamFilterEntry
	for i := range q.filters {
		if e := &q.filters[i]; e.en && (!e.sthm || e.handle == handle) {
			f = e
			break
		}
	}
	if f == nil {
		return true
	}
	f.match++
	if f.msduEn && len(frame) > int(f.msdu) {
		f.sdu++
		return false
	}
	now := int64(d.stampNs())
	if int(f.gate) < len(q.gates) {
		if g := &q.gates[f.gate]; g.en && !g.openAt(now) {
			f.gateDrop++
			return false
		}
	}
	if f.meterEn && int(f.meter) < len(q.meters) {
		if m := &q.meters[f.meter]; m.en && !m.green(now, len(frame)+4) {
			f.red++
			return false
		}
	}
	return true
}

// openAt is the gate's state at timer time t.
func (g *streamGateEntry) openAt(t int64) bool {
	if !g.list || t < g.start {
		return g.initOpen
	}
	phase := (t - g.base) % g.cycle
	var at int64
	for i, iv := range g.interval {
		if phase < at+iv {
			return g.open[i]
		}
		at += iv
	}
	return g.open[len(g.open)-1] // the last state holds to the cycle's end
}

// green takes n bytes of tokens at time t, refilled at CIR since the
// last frame up to CBS; false: too few, the frame is red.
func (m *flowMeterEntry) green(t int64, n int) bool {
	if m.lastFilled && t > m.last {
		bytesPerNs := float64(m.cir) * cirUnitMilli / 1000 / 8 / 1e9
		m.tokens += float64(t-m.last) * bytesPerNs
	}
	if m.tokens > float64(m.cbs) {
		m.tokens = float64(m.cbs)
	}
	if t > m.last || !m.lastFilled {
		m.last, m.lastFilled = t, true
	}
	if m.tokens < float64(n) {
		return false
	}
	m.tokens -= float64(n)
	return true
}

// runQciCBD runs one command of the stream classes (7-10).
func (d *Device) runQciCBD(c []byte, addr uint64, idx, length int) uint8 {
	if !d.pf {
		return CBDErrClass
	}
	if idx >= StreamEntries {
		return CBDErrIndex
	}
	q := &d.qci
	cmd := c[cbdCmd]
	switch c[cbdClass] {
	case CBDClassStreamID: // long format: streamid_conf, data streamid_data
		if cmd != 0 {
			return CBDErrClass
		}
		if length != streamIDData {
			return CBDErrLength
		}
		b := d.iommu.Slice(addr, length, false)
		if b == nil {
			d.st.dmaFaults.Add(1)
			return CBDErrDMA
		}
		e := streamIDEntry{
			en:     c[23]&0x80 != 0,
			handle: binary.LittleEndian.Uint32(c[8:12]),
			dmac:   [6]byte(b[0:6]),
		}
		v := binary.LittleEndian.Uint16(b[6:8])
		e.vid, e.vidm, e.tg = v&0xFFF, v&(1<<12) != 0, uint8(v>>14)
		if e.en && (c[16] != 1 || e.tg == 0) {
			return CBDErrArgument // only null stream identification is modelled
		}
		q.mu.Lock()
		q.ids[idx] = e
		q.mu.Unlock()
		return CBDErrNone
	case CBDClassStreamFilter:
		switch cmd {
		case 0: // short format: sfi_conf in the BD
			e := streamFilterEntry{
				en:      c[23]&0x80 != 0,
				handle:  binary.LittleEndian.Uint32(c[0:4]),
				sthm:    c[7]&0x80 != 0,
				meter:   binary.LittleEndian.Uint16(c[8:10]),
				msdu:    binary.LittleEndian.Uint16(c[10:12]),
				gate:    binary.LittleEndian.Uint16(c[12:14]),
				msduEn:  c[4]&0x40 != 0,
				meterEn: c[4]&0x80 != 0,
			}
			if e.en && (c[4]&0x08 != 0 || int(e.gate) >= StreamEntries || e.meterEn && int(e.meter) >= StreamEntries) {
				return CBDErrArgument // priority match is not modelled
			}
			q.mu.Lock()
			q.filters[idx] = e
			q.mu.Unlock()
			return CBDErrNone
		case 2: // counters query: sfi_counter_data at addr
			if length != sfiCounters {
				return CBDErrLength
			}
			b := d.iommu.Slice(addr, length, true)
			if b == nil {
				d.st.dmaFaults.Add(1)
				return CBDErrDMA
			}
			q.mu.Lock()
			f := &q.filters[idx]
			for i, v := range []uint64{f.match, f.sdu, f.gateDrop, f.red} {
				binary.LittleEndian.PutUint32(b[8*i:], uint32(v))
				binary.LittleEndian.PutUint32(b[8*i+4:], uint32(v>>32))
			}
			q.mu.Unlock()
			return CBDErrNone
		}
		return CBDErrClass
	case CBDClassStreamGate:
		switch cmd {
		case 0: // short format: sgi_table in the BD
			q.mu.Lock()
			q.gates[idx] = streamGateEntry{en: c[23]&0x80 != 0, initOpen: c[11]&0x80 != 0}
			q.mu.Unlock()
			return CBDErrNone
		case 1: // long format: sgcl_conf, data sgcl_data
			n := int(c[20]&0x3) + 1
			if length != sgclHeader+sgclEntrySize*n || n > StreamGateListMax {
				return CBDErrLength
			}
			b := d.iommu.Slice(addr, length, false)
			if b == nil {
				d.st.dmaFaults.Add(1)
				return CBDErrDMA
			}
			g := streamGateEntry{
				base:     int64(binary.LittleEndian.Uint64(b[0:8])),
				cycle:    int64(binary.LittleEndian.Uint32(b[8:12])),
				initOpen: c[11]&0x80 != 0,
				list:     true,
				open:     make([]bool, n),
				interval: make([]int64, n),
			}
			for i := range n {
				e := b[sgclHeader+sgclEntrySize*i:]
				g.interval[i] = int64(binary.LittleEndian.Uint32(e[0:4]))
				if g.interval[i] == 0 || e[7]&0x09 != 0 {
					return CBDErrArgument // IPV and per-entry octet limits are not modelled
				}
				g.open[i] = e[7]&0x10 != 0
			}
			if g.cycle == 0 {
				return CBDErrArgument
			}
			g.start = g.base
			if now := int64(d.stampNs()); g.base < now {
				g.start = g.base + ((now-g.base)/g.cycle+1)*g.cycle
			}
			q.mu.Lock()
			if !q.gates[idx].en {
				q.mu.Unlock()
				return CBDErrArgument // the instance is set (cmd 0) before its list
			}
			g.en = true
			q.gates[idx] = g
			q.mu.Unlock()
			return CBDErrNone
		}
		return CBDErrClass
	case CBDClassFlowMeter: // short format: fmi_conf in the BD
		if cmd != 0 {
			return CBDErrClass
		}
		m := flowMeterEntry{
			en:  c[23]&0x80 != 0,
			cir: uint64(binary.LittleEndian.Uint32(c[0:4])),
			cbs: uint64(binary.LittleEndian.Uint32(c[4:8])),
		}
		if m.en && (binary.LittleEndian.Uint32(c[8:12]) != 0 || binary.LittleEndian.Uint32(c[12:16]) != 0 || c[16] != 0) {
			return CBDErrArgument // EIR, EBS and the colour modes are not modelled
		}
		m.tokens = float64(m.cbs)
		q.mu.Lock()
		q.meters[idx] = m
		q.mu.Unlock()
		return CBDErrNone
	}
	return CBDErrClass
}
