package model

import (
	"strings"
	"testing"
)

func TestRegisterTableWellFormed(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	offs := map[uint32]string{}
	for _, r := range Registers() {
		if names[r.Name] {
			t.Errorf("register %s listed twice", r.Name)
		}
		names[r.Name] = true
		if o, dup := offs[r.Offset]; dup {
			t.Errorf("offset %#x is both %s and %s", r.Offset, o, r.Name)
		}
		offs[r.Offset] = r.Name
		if r.Offset%4 != 0 || r.Offset >= PFBAR0Size {
			t.Errorf("%s: offset %#x not a 32-bit register of a PF BAR0", r.Name, r.Offset)
		}
		switch r.Access {
		case "rw", "ro", "w1c", "trigger":
		default:
			t.Errorf("%s: access %q", r.Name, r.Access)
		}
		if decode[r.Offset>>2] == accNone {
			t.Errorf("%s (%#x) is in the table but the decoder does not implement it", r.Name, r.Offset)
		}
	}
	// Spot checks against the reference's text (§2).
	for name, off := range map[string]uint32{
		"SIMR": 0x0, "SICAR0": 0x40, "SIPMAR0": 0x80, "SICAPR0": 0x900, "SIRXIDR": 0xA28,
		"TBMR": 0x8000, "TBPIR": 0x8018, "TBCIR": 0x801C, "TBLENR": 0x8020,
		"RBMR": 0x8100, "RBBSR": 0x8108, "RBCIR": 0x810C, "RBPIR": 0x8118, "RBDCR": 0x8180,
		"PMR": 0x10000, "PSIPMR": 0x10018, "PSIPMAR0": 0x10100, "PSICFGR0": 0x10940, "PRSSK": 0x11410,
		"PM0_CMD_CFG": 0x18008, "PM0_MAXFRM": 0x18014, "PM0_RX_FIFO": 0x1801C, "PM0_IF_MODE": 0x18300,
		"EMDIO_CFG": 0x11C00, "IMDIO_CFG": 0x18030, "REOCT": 0x18100, "RFRM": 0x18120, "RDRNTP": 0x181C8,
		"TEOCT": 0x18200, "TFRM": 0x18220, "TECOL": 0x182F0, "SICBDRPIR": 0x818, "G_EIPBRR0": 0x20BF8,
	} {
		if got, ok := Lookup(name); !ok || got.Offset != off {
			t.Errorf("%s: table has %#x (found %v), reference says %#x", name, got.Offset, ok, off)
		}
	}
	if RingStride != 0x200 {
		t.Errorf("RingStride = %#x", RingStride)
	}
}

// The counter indices used by the data path must match the table's order.
func TestCounterIndices(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		idx  int
		name string
	}{
		{cREOCT, "REOCT"}, {cRFRM, "RFRM"}, {cRFCS, "RFCS"}, {cRERR, "RERR"}, {cRUCA, "RUCA"},
		{cRBCA, "RBCA"}, {cRPKT, "RPKT"}, {cRUND, "RUND"}, {cR64, "R64"}, {cR1523X, "R1523X"},
		{cROVR, "ROVR"}, {cRDRNTP, "RDRNTP"}, {cTEOCT, "TEOCT"}, {cTFRM, "TFRM"}, {cTERR, "TERR"},
		{cTUCA, "TUCA"}, {cTBCA, "TBCA"}, {cTPKT, "TPKT"}, {cTUND, "TUND"}, {cT64, "T64"}, {cTECOL, "TECOL"},
	} {
		if macCounters[c.idx].name != c.name {
			t.Errorf("counter index %d is %s, want %s", c.idx, macCounters[c.idx].name, c.name)
		}
		if macCounterIndex(macCounters[c.idx].off) != c.idx {
			t.Errorf("%s: offset lookup gives %d", c.name, macCounterIndex(macCounters[c.idx].off))
		}
	}
	if len(macCounters) != nMACCounters {
		t.Fatalf("%d counters in the table, %d indices", len(macCounters), nMACCounters)
	}
}

func TestResetValues(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, MAC: [6]byte{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}, TxRings: 4, RxRings: 6})
	d := h.d
	for _, c := range []struct {
		name string
		off  uint32
		want uint32
	}{
		{"SIMR", regSIMR, 0},
		{"SIPMAR0", regSIPMAR0, 0x33221102},
		{"SIPMAR1", regSIPMAR1, 0x5544},
		{"PSIPMAR0", regPSIPMAR0, 0x33221102},
		{"PSIPMAR1", regPSIPMAR1, 0x5544},
		{"SICAPR0", regSICAPR0, 4 | 6<<16},
		{"SIPCAPR0", regSIPCAPR0, sipcapr0_RSS | sipcapr0_QBV | sipcapr0_QBU | sipcapr0_PSFP},
		{"MMCSR", regMMCSR, mmcsr_LPS | vstsInitial<<mmcsr_VSTS_SH},
		{"PTGCAPR", regPTGCAPR, GateListMax},
		{"PSGCAPR", regPSGCAPR, StreamGateListMax<<16 | StreamEntries},
		{"PSIDCAPR", regPSIDCAPR, StreamEntries},
		{"SIRSSCAPR", regSIRSSCAPR, 1},
		{"PRSSCAPR", regPRSSCAPR, 1},
		{"PCAPR0", regPCAPR0, MaxRings<<24 | MaxRings<<16 | pcapr0_IMDIO},
		{"PSICFGR0", regPSICFGR0, 4 | 6<<16},
		{"PM0_CMD_CFG", regPM0_CMD_CFG, 0x0810},
		{"PM0_MAXFRM", regPM0_MAXFRM, 1536},
		{"PM0_RX_FIFO", regPM0_RX_FIFO, 2},
		{"PMR", regPMR, 0},
		{"TBMR", regTBMR, 0},
		{"TBPIR(3)", regTBPIR + 3*RingStride, 0},
		{"TBCIR(3)", regTBCIR + 3*RingStride, 0},
		{"RBMR(5)", regRBMR + 5*RingStride, 0},
		{"PM0_STATUS (link up, 1G, FD)", regPM0_STATUS, pm0_status_LINK | 2<<17 | pm0_status_FULLDX},
		{"EMDIO_CFG", EMDIOBase, 0},
	} {
		if got := d.Read32(c.off); got != c.want {
			t.Errorf("%s: reads %#x after reset, want %#x", c.name, got, c.want)
		}
	}
	if d.Size() != PFBAR0Size {
		t.Errorf("PF BAR0 size %#x", d.Size())
	}
	h.noModelErrors()
	if s := d.Stats(); s.Unimplemented != 0 {
		t.Errorf("%d unimplemented accesses reading documented registers: %v", s.Unimplemented, d.Unimplemented())
	}
}

func TestRegisterSemantics(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		off       uint32
		write     uint32
		pre       uint32 // stored first (bypassing semantics)
		want      uint32
		modelErrs int
	}{
		{"rw keeps the value", regSICAR0, 0x2B2B6727, 0, 0x2B2B6727, 0},
		{"ro ignores writes", regSICAPR0, 0, 0, 8 | 8<<16, 1},
		{"ro counter ignores writes", regPM0_RFRM, 5, 0, 0, 1},
		{"w1c clears written ones", regSIRXIDR, 0x5, 0x7, 0x2, 0},
		{"w1c zero writes keep", regTBIDR, 0, 0x3, 0x3, 0},
		{"TBCIR is read-only (erratum)", regTBCIR, 5, 0, 0, 1},
		{"TBCIR write of the current value is quiet", regTBCIR, 0, 0, 0, 0},
		{"PM0_STAT_CONFIG clear is a trigger", regPM0_STAT_CONFIG, pm0_stat_config_CLEAR, 0, 0, 0},
		{"SIPMAR0 of the PF is PSIPMAR0(0)", regSIPMAR0, 0xAABBCCDD, 0, 0xAABBCCDD, 0},
		{"RBPIR is initialised by software", regRBPIR, 7, 0, 7, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PF: true})
			if c.pre != 0 {
				h.d.set(c.off, c.pre)
			}
			h.d.Write32(c.off, c.write)
			if got := h.d.Read32(c.off); got != c.want {
				t.Errorf("%#x reads %#x, want %#x", c.off, got, c.want)
			}
			if n := len(h.d.ModelErrors()); n != c.modelErrs {
				t.Errorf("%d model errors, want %d: %q", n, c.modelErrs, h.d.ModelErrors())
			}
		})
	}
}

func TestCounterClearTrigger(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.setupRx(0, 64, 2048, 0)
	h.d.Receive(sized(100))
	if h.d.Read32(regPM0_RFRM) != 1 || h.d.Read64(regPM0_REOCT) != 104 {
		t.Fatalf("RFRM %d REOCT %d before clear", h.d.Read32(regPM0_RFRM), h.d.Read64(regPM0_REOCT))
	}
	h.d.Write32(regPM0_STAT_CONFIG, pm0_stat_config_CLEAR)
	if h.d.Read32(regPM0_RFRM) != 0 || h.d.Read64(regPM0_REOCT) != 0 {
		t.Fatal("MAC counters not cleared by PM0_STAT_CONFIG")
	}
	if h.d.Read64(regSIRFRM) != 1 {
		t.Fatal("SI counters must not be cleared by the MAC counter clear")
	}
}

func TestUnimplementedAndOutOfWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true, TxRings: 2})
	d := h.d
	if v := d.Read32(0x0C); v != 0 {
		t.Errorf("unimplemented register reads %#x", v)
	}
	d.Write32(0x1300C, 1)
	d.Read32(regTBMR + 5*RingStride) // ring 5 of a 2-ring SI
	got := d.Unimplemented()
	want := []Access{{0x0C, false}, {0x1300C, true}, {regTBMR + 5*RingStride, false}}
	if len(got) != len(want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("access %d: %v, want %v", i, got[i], want[i])
		}
	}
	if d.Stats().Unimplemented != 3 {
		t.Errorf("Stats.Unimplemented = %d", d.Stats().Unimplemented)
	}
	if d.Err() != nil {
		t.Fatal("Err before any out-of-window access")
	}
	if v := d.Read32(PFBAR0Size); v != 0xFFFFFFFF {
		t.Errorf("out-of-window read %#x, want all ones", v)
	}
	d.Write32(PFBAR0Size+8, 1)
	if err := d.Err(); err == nil || !strings.Contains(err.Error(), "0x40000") || !strings.Contains(err.Error(), "0x40000 bytes") {
		t.Errorf("Err = %v: must name the offset and the size", err)
	}

	vf := newHarness(t, Config{PF: false})
	if vf.d.Size() != VFBAR0Size {
		t.Fatalf("VF BAR0 size %#x", vf.d.Size())
	}
	if v := vf.d.Read32(regPM0_RX_FIFO); v != 0xFFFFFFFF {
		t.Errorf("VF port register read %#x, want all ones", v)
	}
	if err := vf.d.Err(); err == nil || !strings.Contains(err.Error(), "0x1801c") {
		t.Errorf("VF Err = %v", err)
	}
	if v := vf.d.Read32(regSIPMAR0); v != 0xe1000002 {
		t.Errorf("VF SIPMAR0 = %#x", v)
	}
}

// Indexed families follow the strides the reference trusts (Linux's);
// the other sources' strides land on unimplemented offsets and are
// recorded.
func TestRegisterFamilies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		off    uint32
		implem bool
	}{
		{"PSIPMAR0(1), stride 8", regPSIPMAR0 + 8, true},
		{"PSIPMAR0(1) at DPDK's stride 0x20", regPSIPMAR0 + 0x20, false},
		{"PSICFGR0(1), stride 0xC", regPSICFGR0 + 0xC, true},
		{"PSICFGR0(1) at U-Boot's stride 0x10", regPSICFGR0 + 0x10, false},
		{"PRSSK(9)", regPRSSK + 36, true},
		{"PTCMSDUR(7)", regPTCMSDUR + 28, true},
		{"SIMSIRRV(15)", regSIMSIRRV + 60, true},
		{"PSIVHFR1(2)", regPSIVHFR1 + 16, true},
		{"RBDCR(15)", regRBDCR + 15*RingStride, true},
	} {
		h := newHarness(t, Config{PF: true, TxRings: 16, RxRings: 16})
		h.d.Write32(c.off, 0x1234)
		got := h.d.Read32(c.off)
		unimpl := h.d.Stats().Unimplemented
		if c.implem && unimpl != 0 || !c.implem && unimpl != 2 {
			t.Errorf("%s: %d unimplemented accesses recorded", c.name, unimpl)
		}
		if !c.implem && got != 0 {
			t.Errorf("%s: unimplemented register reads %#x", c.name, got)
		}
	}
	if n := regName(regPSIPMAR0 + 16); n != "PSIPMAR0(2)" {
		t.Errorf("regName = %q", n)
	}
	if n := regName(regTBCIR + 3*RingStride); n != "TBCIR(3)" {
		t.Errorf("regName = %q", n)
	}
}

// TestPSIPMARStride: PSIPMAR0/1(n) are 8 bytes apart (§8.2): the MACs of
// SI 1 and SI 2 are their own registers, and writing them leaves SI 0's
// address, and so its filter, alone.
func TestPSIPMARStride(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Config{PF: true})
	h.up()
	h.d.Write32(regPSIPMR, 0) // filter on the primary MAC
	h.setupRx(0, 16, 2048, 0)
	si0 := h.d.Read32(regPSIPMAR0)
	h.d.Write32(regPSIPMAR0+8, 0x44332211)
	h.d.Write32(regPSIPMAR1+8, 0x6655)
	h.d.Write32(regPSIPMAR0+16, 0xAABBCCDD)
	if h.d.Read32(0x10108) != 0x44332211 || h.d.Read32(0x1010C) != 0x6655 || h.d.Read32(0x10110) != 0xAABBCCDD {
		t.Fatalf("PSIPMAR(1) %#x/%#x PSIPMAR0(2) %#x", h.d.Read32(0x10108), h.d.Read32(0x1010C), h.d.Read32(0x10110))
	}
	if h.d.Read32(regPSIPMAR0) != si0 {
		t.Fatalf("PSIPMAR0(0) changed to %#x by writes to other SIs", h.d.Read32(regPSIPMAR0))
	}
	if !h.d.Receive(ether(h.d.cfg.MAC[:], macB, 0x88B5, make([]byte, 50))) {
		t.Fatal("a frame to SI 0's MAC was filtered after SI 1's MAC was set")
	}
	if h.d.Receive(ether([]byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66}, macB, 0x88B5, make([]byte, 50))) {
		t.Fatal("SI 1's MAC was accepted for SI 0")
	}
}
