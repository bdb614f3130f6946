package enetc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
)

// Per-stream filtering and policing, 802.1Qci (docs/hardware-enetc.md
// §13.5), programmed as Linux's enetc_qos.c does for tc flower with the
// gate and police actions: a stream identity entry (null stream
// identification: destination MAC and VLAN), a stream filter instance, a
// stream gate instance and its control list, and a flow meter instance,
// each through the control BD ring. gopmd gives stream h entry h of every
// table, and the filter matches the identity entry's stream handle h.

// Registers and fields of §13.5 (Linux enetc_hw.h), absolute BAR0 offsets.
const (
	regPPSFPMR  = portBase + 0x1B00 // port PSFP mode
	regPSIDCAPR = portBase + 0x1B08 // stream identity entries
	regPSFCAPR  = portBase + 0x1B18 // stream filter instances
	regPSGCAPR  = portBase + 0x1B28 // stream gate instances, gate list length
	regPFMCAPR  = portBase + 0x1B38 // flow meter instances

	ppsfpmr_ON      = 1<<0 | 1<<1 | 1<<2 | 1<<3 // PSFPEN, VS, PVC, PVZC as Linux sets them
	sipcapr0_PSFP   = 1 << 9
	capEntriesMask  = 0xFFFF
	psgcapr_GCL_SH  = 16
	psgcapr_GCL_MSK = 0x7

	cbdClassStreamID     = 7
	cbdClassStreamFilter = 8
	cbdClassStreamGate   = 9
	cbdClassFlowMeter    = 10
	cbdShortFormat       = 0x80 // status_flags SF

	qciGateListMax = 4  // the admin list length field holds entries-1 in 2 bits
	qciBufSize     = 64 // the largest data buffer: a 4-entry gate list is 48 bytes
	sidDataLen     = 8
	sgclHeader     = 16
	sgclEntry      = 8
	sfiCountersLen = 32
	cirUnitMilli   = 3725 // the flow meter's CIR counts 3.725 bit/s
)

// qciConfig is the port's streams, under ctl.
type qciConfig struct {
	streams map[int]driver.Stream
	buf     *dma.Region // the commands' data buffer
	// base is what each stream's counters held before function resets
	// zeroed them, added to what the device counts since.
	base map[int]driver.StreamStats
	// pending are the streams a function reset cleared that Start has not
	// set again (restoreLocked).
	pending map[int]driver.Stream
}

var _ driver.StreamFilter = (*Port)(nil)

// StreamCaps implements driver.StreamFilter from SIPCAPR0.PSFP and the
// capability registers: the streams are the handles every table has an
// entry for.
func (p *Port) StreamCaps() driver.StreamCaps {
	p.lock()
	defer p.unlock()
	if p.closed || !p.pf {
		return driver.StreamCaps{}
	}
	return p.streamCapsLocked()
}

func (p *Port) streamCapsLocked() driver.StreamCaps {
	r := p.regs
	if r.Read32(regSIPCAPR0)&sipcapr0_PSFP == 0 {
		return driver.StreamCaps{}
	}
	sg := r.Read32(regPSGCAPR)
	n := min(int(r.Read32(regPSIDCAPR)&capEntriesMask), int(r.Read32(regPSFCAPR)&capEntriesMask), int(sg&capEntriesMask))
	return driver.StreamCaps{
		Streams:        n,
		MaxGateEntries: min(int(sg>>psgcapr_GCL_SH&psgcapr_GCL_MSK), qciGateListMax),
		Meters:         int(r.Read32(regPFMCAPR)&capEntriesMask) >= n && n > 0,
	}
}

// qciCheck is the common refusal: a closed port, a VF, no PSFP.
func (p *Port) qciCheck(what string) error {
	if p.closed {
		return p.errClosed()
	}
	if !p.pf {
		return fmt.Errorf("%s: stream filters are a port function; a VF has none (configure them on the PF)", what)
	}
	if p.regs.Read32(regSIPCAPR0)&sipcapr0_PSFP == 0 {
		return fmt.Errorf("%s: %w: this port has no stream filtering (SIPCAPR0.PSFP clear)", what, driver.ErrNoStreamFilter)
	}
	return nil
}

// SetStream implements driver.StreamFilter. The filter, gate and meter
// are written before the identity entry that sends frames to them, so no
// frame meets a half-written stream; replacing a stream first takes its
// identity entry off. EIR and EBS are refused: Linux writes them 0 (a
// single-rate meter), and so does gopmd.
func (p *Port) SetStream(s driver.Stream) error {
	p.lock()
	defer p.unlock()
	if err := p.qciCheck("stream"); err != nil {
		return err
	}
	if err := s.Check(p.streamCapsLocked()); err != nil {
		return err
	}
	delete(p.qci.pending, s.Handle) // a stream a function reset cleared is replaced
	delete(p.qci.base, s.Handle)    // a filter written anew counts from 0
	return p.writeStreamLocked(s)
}

// writeStreamLocked programs stream s, checked, and records it (SetStream,
// and the reload after a function reset). Caller holds ctl.
func (p *Port) writeStreamLocked(s driver.Stream) error {
	var cir uint64
	if m := s.Meter; m != nil {
		if m.EIRBytes != 0 || m.EBSBytes != 0 {
			return fmt.Errorf("stream %d: meter: excess rate and burst are not programmed (Linux's single-rate meter): give EIR and EBS 0", s.Handle)
		}
		cir = uint64(m.CIRBytes) * 8000 / cirUnitMilli
		if cir == 0 || cir > 0xFFFFFFFF || m.CBSBytes > 0xFFFFFFFF {
			return fmt.Errorf("stream %d: meter: rate %d B/s, burst %d B: the meter takes 1 to %d B/s and bursts to 4 GiB", s.Handle, m.CIRBytes, m.CBSBytes, uint64(0xFFFFFFFF)*cirUnitMilli/8000)
		}
	}
	clk, err := p.clockLocked()
	if err != nil {
		return fmt.Errorf("stream %d: gate base times are the chip's 1588 timer's: %w", s.Handle, err)
	}
	now, err := clk.Now()
	if err != nil {
		return fmt.Errorf("stream %d: reading the clock: %w", s.Handle, err)
	}
	if err := p.qciBuffer(); err != nil {
		return err
	}
	if err := p.cbdrEnable(); err != nil {
		return err
	}
	h := s.Handle
	if _, ok := p.qci.streams[h]; ok {
		if err := p.streamIDWrite(h, nil); err != nil {
			return err
		}
	}
	fail := func(err error) error {
		_ = p.streamIDWrite(h, nil)
		delete(p.qci.streams, h)
		p.qciModeUpdate()
		return err
	}
	if err := p.streamFilterWrite(h, &s); err != nil {
		return fail(err)
	}
	if err := p.streamGateWrite(h, &s.Gate, now); err != nil {
		return fail(err)
	}
	if err := p.flowMeterWrite(h, s.Meter, cir); err != nil {
		return fail(err)
	}
	if err := p.streamIDWrite(h, &s); err != nil {
		return fail(err)
	}
	if p.qci.streams == nil {
		p.qci.streams = map[int]driver.Stream{}
	}
	s.Gate.Entries = append([]driver.StreamGateEntry(nil), s.Gate.Entries...)
	if s.Meter != nil {
		m := *s.Meter
		s.Meter = &m
	}
	p.qci.streams[h] = s
	p.qciModeUpdate()
	return nil
}

// DeleteStream implements driver.StreamFilter: the identity entry first,
// then the filter, gate and meter, as Linux's destroy does.
func (p *Port) DeleteStream(h int) error {
	p.lock()
	defer p.unlock()
	if err := p.qciCheck("delete stream"); err != nil {
		return err
	}
	if _, ok := p.qci.pending[h]; ok {
		delete(p.qci.pending, h) // cleared by a function reset: nothing in the device
		delete(p.qci.base, h)
		return nil
	}
	s, ok := p.qci.streams[h]
	if !ok {
		return fmt.Errorf("delete stream %d: no such stream (%s)", h, p.streamList())
	}
	err := p.streamOff(h, s.Meter != nil)
	delete(p.qci.streams, h)
	delete(p.qci.base, h)
	p.qciModeUpdate()
	return err
}

// StreamStats implements driver.StreamFilter with the stream filter's
// counter query (class 8, command 2). Passing is what the filter let
// through: matching less the three kinds of drop.
func (p *Port) StreamStats(h int) (driver.StreamStats, error) {
	p.lock()
	defer p.unlock()
	if err := p.qciCheck("stream stats"); err != nil {
		return driver.StreamStats{}, err
	}
	if _, ok := p.qci.pending[h]; ok {
		return driver.StreamStats{}, fmt.Errorf("stream stats %d: a function reset after a stuck TX ring cleared the stream and Start has not set it again", h)
	}
	if _, ok := p.qci.streams[h]; !ok {
		return driver.StreamStats{}, fmt.Errorf("stream stats %d: no such stream (%s)", h, p.streamList())
	}
	st, err := p.streamCountersLocked(h)
	if err != nil {
		return driver.StreamStats{}, err
	}
	if b, ok := p.qci.base[h]; ok {
		st.Matching += b.Matching
		st.SDUDrops += b.SDUDrops
		st.GateDrops += b.GateDrops
		st.MeterDrops += b.MeterDrops
	}
	if d := st.SDUDrops + st.GateDrops + st.MeterDrops; d <= st.Matching {
		st.Passing = st.Matching - d
	}
	return st, nil
}

// streamCountersLocked reads stream filter h's counters as the device
// holds them (Passing left 0). Caller holds ctl.
func (p *Port) streamCountersLocked(h int) (driver.StreamStats, error) {
	iova := p.qci.buf.IOVA()
	c := cbd{index: uint16(h), length: sfiCountersLen, cmd: 2, class: cbdClassStreamFilter}
	c.addr[0], c.addr[1] = uint32(iova), uint32(iova>>32)
	b := p.qci.buf.Bytes()[:sfiCountersLen]
	clear(b)
	if err := p.cbdrRun(c, fmt.Sprintf("read stream filter %d's counters", h)); err != nil {
		return driver.StreamStats{}, err
	}
	dma.ReadBarrier()
	v := func(i int) uint64 {
		return uint64(binary.LittleEndian.Uint32(b[8*i:])) | uint64(binary.LittleEndian.Uint32(b[8*i+4:]))<<32
	}
	return driver.StreamStats{Matching: v(0), SDUDrops: v(1), GateDrops: v(2), MeterDrops: v(3)}, nil
}

// streamList names the streams set, for errors.
func (p *Port) streamList() string {
	if len(p.qci.streams) == 0 {
		return "none is set"
	}
	hs := make([]int, 0, len(p.qci.streams))
	for h := range p.qci.streams {
		hs = append(hs, h)
	}
	sort.Ints(hs)
	return fmt.Sprintf("streams set: %v", hs)
}

// qciBuffer allocates the commands' data buffer once.
func (p *Port) qciBuffer() error {
	if p.qci.buf != nil {
		return nil
	}
	buf, err := dma.Alloc(p.dev.Mapper, qciBufSize, dma.Options{Attr: dma.Attr{Contiguous: true, Name: p.name + " stream tables"}})
	if err != nil {
		return fmt.Errorf("stream table buffer (%d bytes): %w", qciBufSize, err)
	}
	if buf.IOVA()%cbdDataAlign != 0 {
		_ = buf.Close()
		return fmt.Errorf("stream table buffer IOVA %#x is not %d-byte aligned", buf.IOVA(), cbdDataAlign)
	}
	p.qci.buf = buf
	return nil
}

// qciModeUpdate turns PSFP on while a stream is set (Linux sets PSFPEN,
// VS, PVC and PVZC with hw-tc-offload) and off with none.
func (p *Port) qciModeUpdate() {
	r := p.regs
	v := r.Read32(regPPSFPMR)
	if len(p.qci.streams) > 0 {
		r.Write32(regPPSFPMR, v|ppsfpmr_ON)
	} else if v&ppsfpmr_ON != 0 {
		r.Write32(regPPSFPMR, v&^ppsfpmr_ON)
	}
}

// cbdShort is a short-format command: 24 bytes of data in the BD itself.
func cbdShort(b *[24]byte, index uint16, cmd, class uint8) cbd {
	c := cbd{index: index, length: 1, cmd: cmd, class: class, status: cbdShortFormat}
	c.addr[0] = binary.LittleEndian.Uint32(b[0:4])
	c.addr[1] = binary.LittleEndian.Uint32(b[4:8])
	for i := range c.opt {
		c.opt[i] = binary.LittleEndian.Uint32(b[8+4*i:])
	}
	return c
}

// streamIDWrite writes identity entry h (class 7, command 0, long format):
// enabled for s with stream handle h, or disabled for nil.
func (p *Port) streamIDWrite(h int, s *driver.Stream) error {
	d := p.qci.buf.Bytes()[:sidDataLen]
	clear(d)
	iova := p.qci.buf.IOVA()
	c := cbd{index: uint16(h), length: sidDataLen, class: cbdClassStreamID}
	c.addr[0], c.addr[1] = uint32(iova), uint32(iova>>32)
	var b [24]byte // bytes 8-23 of the BD: streamid_conf
	b[16] = 1      // null stream identification
	b[17], b[18], b[19] = 0xC2, 0x80, 0x00
	binary.LittleEndian.PutUint32(b[12:16], 1<<p.portIndex())
	what := fmt.Sprintf("disable stream identity entry %d", h)
	if s != nil {
		binary.LittleEndian.PutUint32(b[8:12], uint32(h))
		b[23] = 0x80
		copy(d[0:6], s.DMAC[:])
		var v uint16
		switch s.VID {
		case driver.VLANAny:
			v = 3 << 14
		case driver.VLANUntagged:
			v = 2 << 14
		default:
			v = uint16(s.VID) | 1<<14
		}
		binary.LittleEndian.PutUint16(d[6:8], v|1<<12) // VIDM: the VID must match
		what = fmt.Sprintf("set stream identity entry %d (%x vlan %d)", h, s.DMAC, s.VID)
	}
	c.opt[0] = binary.LittleEndian.Uint32(b[8:12])
	c.opt[1] = binary.LittleEndian.Uint32(b[12:16])
	c.opt[2] = binary.LittleEndian.Uint32(b[16:20])
	c.opt[3] = binary.LittleEndian.Uint32(b[20:24])
	dma.DoorbellBarrier()
	if err := p.cbdrRun(c, what); err != nil {
		return err
	}
	return nil
}

// streamFilterWrite writes filter instance h (class 8, command 0, short
// format): matching stream handle h, gate h, meter h if s has one, max
// SDU; disabled for nil.
func (p *Port) streamFilterWrite(h int, s *driver.Stream) error {
	var b [24]byte
	what := fmt.Sprintf("disable stream filter %d", h)
	if s != nil {
		binary.LittleEndian.PutUint32(b[0:4], uint32(h))
		b[7] = 0x80 // match the stream handle
		binary.LittleEndian.PutUint16(b[12:14], uint16(h))
		binary.LittleEndian.PutUint32(b[16:20], 1<<p.portIndex())
		if s.MaxSDU > 0 {
			binary.LittleEndian.PutUint16(b[10:12], uint16(s.MaxSDU))
			b[4] |= 0x40
		}
		if s.Meter != nil {
			binary.LittleEndian.PutUint16(b[8:10], uint16(h))
			b[4] |= 0x80
		}
		b[23] = 0x80
		what = fmt.Sprintf("set stream filter %d", h)
	}
	if err := p.cbdrRun(cbdShort(&b, uint16(h), 0, cbdClassStreamFilter), what); err != nil {
		return err
	}
	return nil
}

// streamGateWrite sets gate instance h (class 9, command 0, short format:
// open before its list, enabled) and loads its list (command 1, long
// format); nil disables it.
func (p *Port) streamGateWrite(h int, g *driver.StreamGate, now driver.Time) error {
	var b [24]byte
	if g == nil {
		if err := p.cbdrRun(cbdShort(&b, uint16(h), 0, cbdClassStreamGate), fmt.Sprintf("disable stream gate %d", h)); err != nil {
			return err
		}
		return nil
	}
	b[11] = 0x80 // open until the list starts
	b[23] = 0x80
	if err := p.cbdrRun(cbdShort(&b, uint16(h), 0, cbdClassStreamGate), fmt.Sprintf("set stream gate %d", h)); err != nil {
		return err
	}
	n := len(g.Entries)
	size := sgclHeader + sgclEntry*n
	d := p.qci.buf.Bytes()[:size]
	clear(d)
	binary.LittleEndian.PutUint64(d[0:8], uint64(g.CycleStart(now)))
	binary.LittleEndian.PutUint32(d[8:12], uint32(g.Cycle()))
	for i, e := range g.Entries {
		en := d[sgclHeader+sgclEntry*i:]
		binary.LittleEndian.PutUint32(en[0:4], uint32(e.Interval))
		if e.Open {
			en[7] = 0x10
		}
	}
	iova := p.qci.buf.IOVA()
	c := cbd{index: uint16(h), length: uint16(size), cmd: 1, class: cbdClassStreamGate}
	c.addr[0], c.addr[1] = uint32(iova), uint32(iova>>32)
	var o [24]byte
	o[11] = 0x80           // admin gate state: open
	o[20] = uint8(n-1) & 3 // admin list length - 1
	c.opt[0] = binary.LittleEndian.Uint32(o[8:12])
	c.opt[3] = binary.LittleEndian.Uint32(o[20:24])
	dma.DoorbellBarrier()
	if err := p.cbdrRun(c, fmt.Sprintf("load stream gate %d's %d-entry list", h, n)); err != nil {
		return err
	}
	return nil
}

// flowMeterWrite sets meter instance h (class 10, command 0, short
// format) to m's committed rate (cir, in 3.725 bit/s) and burst, or
// disables it for nil.
func (p *Port) flowMeterWrite(h int, m *driver.Meter, cir uint64) error {
	var b [24]byte
	what := fmt.Sprintf("disable flow meter %d", h)
	if m != nil {
		binary.LittleEndian.PutUint32(b[0:4], uint32(cir))
		binary.LittleEndian.PutUint32(b[4:8], uint32(m.CBSBytes))
		b[23] = 0x80
		what = fmt.Sprintf("set flow meter %d", h)
	}
	if err := p.cbdrRun(cbdShort(&b, uint16(h), 0, cbdClassFlowMeter), what); err != nil {
		return err
	}
	return nil
}

// streamOff disables stream h's identity entry, filter, gate and meter.
func (p *Port) streamOff(h int, meter bool) error {
	errs := []error{p.streamIDWrite(h, nil), p.streamFilterWrite(h, nil), p.streamGateWrite(h, nil, 0)}
	if meter {
		errs = append(errs, p.flowMeterWrite(h, nil, 0))
	}
	return errors.Join(errs...)
}

// qciOff takes every stream off and frees the buffer (Close, with the
// device still reachable).
func (p *Port) qciOff() error {
	if !p.pf || p.qci.buf == nil {
		return nil
	}
	var errs []error
	for h, s := range p.qci.streams {
		errs = append(errs, p.streamOff(h, s.Meter != nil))
	}
	p.qci.streams, p.qci.base, p.qci.pending = nil, nil, nil
	p.qciModeUpdate()
	if err := p.qci.buf.Close(); err != nil {
		errs = append(errs, fmt.Errorf("stream table buffer: %w", err))
	}
	p.qci.buf = nil
	return errors.Join(errs...)
}

// portIndex is the port's bit in the tables' input port masks: its PCI
// function on the LS1028A's ENETC (functions 0, 1, 2 and 6 are ports 0-3,
// Linux enetc_pf_to_port); 0 where the address says nothing (the sim).
func (p *Port) portIndex() int {
	n := p.dev.Spec.Name
	if p.dev.Spec.Scheme != "pci" || len(n) < 2 || n[len(n)-2] != '.' {
		return 0
	}
	switch f := n[len(n)-1]; f {
	case '0', '1', '2':
		return int(f - '0')
	case '6':
		return 3
	}
	return 0
}
