package model

import "fmt"

// RegInfo is one register of the model's table.
type RegInfo struct {
	// Name is the reference's name; indexed families (PSIPMAR0(n),
	// SIMSITRV(n), PRSSK(n), ...) appear as their n = 0 instance under the
	// bare family name, ring registers as ring 0 (add RingStride·n). The
	// MDIO blocks are EMDIO_* (port external, 0x11C00) and IMDIO_* (internal,
	// 0x18030); pMAC copies of the MAC counters are PM1_<name>.
	Name string
	// Offset is the byte offset in BAR0.
	Offset uint32
	// Access is "rw", "ro" (writes ignored and recorded as a model error),
	// "w1c" (write 1 to clear a bit) or "trigger" (a write starts an action:
	// MDIO cycles, counter clear). Doorbells (TBPIR, RBCIR, SICBDRPIR) are
	// "rw": they read back what was written and kick the DMA engine.
	Access string
	// Count and Stride describe an indexed register: instance n (n <
	// Count) is at Offset + n*Stride. Ring registers have MaxRings
	// instances RingStride apart. Count is 1 (Stride 0) for the others.
	Count  int
	Stride uint32
}

// Access kinds in the decode table.
const (
	accNone uint8 = iota // unimplemented
	accRW
	accRO
	accW1C
	accTrigger
)

var accNames = [...]string{"", "rw", "ro", "w1c", "trigger"}

type regDef struct {
	name string
	off  uint32
	acc  uint8
}

var siRegs = []regDef{
	{"SIMR", SIMR, accRW}, {"SICTR0", SICTR0, accRO}, {"SICTR1", SICTR1, accRO},
	{"SIPCAPR0", SIPCAPR0, accRO}, {"SIPCAPR1", SIPCAPR1, accRO}, {"SITGTGR", SITGTGR, accRW},
	{"SIRBGCR", SIRBGCR, accRW}, {"SICAR0", SICAR0, accRW}, {"SICAR1", SICAR1, accRW},
	{"SICAR2", SICAR2, accRW}, {"SIPMAR0", SIPMAR0, accRW}, {"SIPMAR1", SIPMAR1, accRW},
	{"PSIMSGRR", PSIMSGRR, accW1C},
	{"PSIVMSGRCVAR0", PSIVMSGRCVAR0, accRW}, {"PSIVMSGRCVAR1", PSIVMSGRCVAR1, accRW},
	{"SIROCT", SIROCT, accRO}, {"SIRFRM", SIRFRM, accRO}, {"SIRUCA", SIRUCA, accRO},
	{"SIRMCA", SIRMCA, accRO}, {"SITOCT", SITOCT, accRO}, {"SITFRM", SITFRM, accRO},
	{"SITUCA", SITUCA, accRO}, {"SITMCA", SITMCA, accRO},
	{"SICBDRMR", SICBDRMR, accRW}, {"SICBDRSR", SICBDRSR, accRO},
	{"SICBDRBAR0", SICBDRBAR0, accRW}, {"SICBDRBAR1", SICBDRBAR1, accRW},
	{"SICBDRPIR", SICBDRPIR, accRW}, {"SICBDRCIR", SICBDRCIR, accRW},
	{"SICBDRLENR", SICBDRLENR, accRW},
	{"SICAPR0", SICAPR0, accRO}, {"SICAPR1", SICAPR1, accRO},
	{"PSIIER", PSIIER, accRW}, {"PSIIDR", PSIIDR, accW1C}, {"SITXIDR", SITXIDR, accW1C},
	{"SIRXIDR", SIRXIDR, accW1C}, {"SIMSIVR", SIMSIVR, accRW},
	{"SIMSITRV", SIMSITRV, accRW}, {"SIMSIRRV", SIMSIRRV, accRW},
	{"SIUEFDCR", SIUEFDCR, accRO}, {"SIRFSCAPR", SIRFSCAPR, accRO}, {"SIRSSCAPR", SIRSSCAPR, accRO},
}

var ringRegs = []regDef{
	{"TBMR", TBMR, accRW}, {"TBSR", TBSR, accRO}, {"TBBAR0", TBBAR0, accRW},
	{"TBBAR1", TBBAR1, accRW}, {"TBPIR", TBPIR, accRW}, {"TBCIR", TBCIR, accRO},
	{"TBLENR", TBLENR, accRW}, {"TBIER", TBIER, accRW}, {"TBIDR", TBIDR, accW1C},
	{"TBICR0", TBICR0, accRW}, {"TBICR1", TBICR1, accRW},
	{"RBMR", RBMR, accRW}, {"RBSR", RBSR, accRO}, {"RBBSR", RBBSR, accRW},
	{"RBCIR", RBCIR, accRW}, {"RBBAR0", RBBAR0, accRW}, {"RBBAR1", RBBAR1, accRW},
	{"RBPIR", RBPIR, accRW}, {"RBLENR", RBLENR, accRW}, {"RBDCR", RBDCR, accRO},
	{"RBIER", RBIER, accRW}, {"RBIDR", RBIDR, accW1C}, {"RBICR0", RBICR0, accRW},
	{"RBICR1", RBICR1, accRW},
}

var portRegs = []regDef{
	{"PMR", PMR, accRW}, {"PSR", PSR, accRO}, {"PSIPMR", PSIPMR, accRW}, {"PSIPVMR", PSIPVMR, accRW},
	{"PSIPMAR0", PSIPMAR0, accRW}, {"PSIPMAR1", PSIPMAR1, accRW},
	{"PVCLCTR", PVCLCTR, accRW}, {"PCVLANR1", PCVLANR1, accRW}, {"PCVLANR2", PCVLANR2, accRW},
	{"PSIVLANR", PSIVLANR, accRW}, {"PPAUONTR", PPAUONTR, accRW}, {"PPAUOFFTR", PPAUOFFTR, accRW},
	{"PTXMBAR", PTXMBAR, accRW}, {"PICDR", PICDR, accRO}, {"PBFDSIR", PBFDSIR, accRO},
	{"PFDMSAPR", PFDMSAPR, accRO}, {"PCAPR0", PCAPR0, accRO}, {"PCAPR1", PCAPR1, accRO},
	{"PSICFGR0", PSICFGR0, accRW}, {"PRSSCAPR", PRSSCAPR, accRO}, {"PRSSK", PRSSK, accRW},
	{"UFDMF", UFDMF, accRO}, {"MFDMF", MFDMF, accRO}, {"PSIVLANFMR", PSIVLANFMR, accRW},
	{"PUFDVFR", PUFDVFR, accRO}, {"PMFDVFR", PMFDVFR, accRO}, {"PBFDVFR", PBFDVFR, accRO},
	{"PRFSMR", PRFSMR, accRW}, {"PRFSCAPR", PRFSCAPR, accRO}, {"PSIRFSCFGR", PSIRFSCFGR, accRW},
	{"PFPMR", PFPMR, accRW},
	{"EMDIO_CFG", EMDIOBase + MDIO_CFG, accRW}, {"EMDIO_CTL", EMDIOBase + MDIO_CTL, accTrigger},
	{"EMDIO_DATA", EMDIOBase + MDIO_DATA, accTrigger}, {"EMDIO_ADDR", EMDIOBase + MDIO_ADDR, accRW},
	{"PSIUMHFR0", PSIUMHFR0, accRW}, {"PSIUMHFR1", PSIUMHFR1, accRW},
	{"PSIMMHFR0", PSIMMHFR0, accRW}, {"PSIMMHFR1", PSIMMHFR1, accRW},
	{"PSIVHFR0", PSIVHFR0, accRW}, {"PSIVHFR1", PSIVHFR1, accRW}, {"MMCSR", MMCSR, accRW},
	{"PTCMSDUR", PTCMSDUR, accRW}, {"PAR_PORT_CFG", PAR_PORT_CFG, accRW},
	{"PM0_CMD_CFG", PM0_CMD_CFG, accRW}, {"PM0_MAXFRM", PM0_MAXFRM, accRW},
	{"PM0_RX_FIFO", PM0_RX_FIFO, accRW},
	{"IMDIO_CFG", IMDIOBase + MDIO_CFG, accRW}, {"IMDIO_CTL", IMDIOBase + MDIO_CTL, accTrigger},
	{"IMDIO_DATA", IMDIOBase + MDIO_DATA, accTrigger}, {"IMDIO_ADDR", IMDIOBase + MDIO_ADDR, accRW},
	{"PM0_PAUSE_QUANTA", PM0_PAUSE_QUANTA, accRW}, {"PM0_PAUSE_THRESH", PM0_PAUSE_THRESH, accRW},
	{"PM0_SINGLE_STEP", PM0_SINGLE_STEP, accRW}, {"PM0_STAT_CONFIG", PM0_STAT_CONFIG, accTrigger},
	{"PM0_IF_MODE", PM0_IF_MODE, accRW}, {"PM0_STATUS", PM0_STATUS, accRO},
	{"PM1_CMD_CFG", PM1_CMD_CFG, accRW}, {"PM1_IF_MODE", PM1_IF_MODE, accRW},
	{"G_EIPBRR0", G_EIPBRR0, accRO}, {"G_EIPBRR1", G_EIPBRR1, accRO}, {"G_EPFBLPR", G_EPFBLPR, accRO},
}

// macCounters lists the eMAC counters in order; each is 64-bit at its offset.
var macCounters = []regDef{
	{"REOCT", REOCT, accRO}, {"RALN", RALN, accRO}, {"RXPF", RXPF, accRO}, {"RFRM", RFRM, accRO},
	{"RFCS", RFCS, accRO}, {"RVLAN", RVLAN, accRO}, {"RERR", RERR, accRO}, {"RUCA", RUCA, accRO},
	{"RMCA", RMCA, accRO}, {"RBCA", RBCA, accRO}, {"RDRP", RDRP, accRO}, {"RPKT", RPKT, accRO},
	{"RUND", RUND, accRO}, {"R64", R64, accRO}, {"R127", R127, accRO}, {"R255", R255, accRO},
	{"R511", R511, accRO}, {"R1023", R1023, accRO}, {"R1522", R1522, accRO}, {"R1523X", R1523X, accRO},
	{"ROVR", ROVR, accRO}, {"RJBR", RJBR, accRO}, {"RFRG", RFRG, accRO}, {"RCNP", RCNP, accRO},
	{"RDRNTP", RDRNTP, accRO},
	{"TEOCT", TEOCT, accRO}, {"TOCT", TOCT, accRO}, {"TCRSE", TCRSE, accRO}, {"TXPF", TXPF, accRO},
	{"TFRM", TFRM, accRO}, {"TFCS", TFCS, accRO}, {"TVLAN", TVLAN, accRO}, {"TERR", TERR, accRO},
	{"TUCA", TUCA, accRO}, {"TMCA", TMCA, accRO}, {"TBCA", TBCA, accRO}, {"TPKT", TPKT, accRO},
	{"TUND", TUND, accRO}, {"T64", T64, accRO}, {"T127", T127, accRO}, {"T255", T255, accRO},
	{"T511", T511, accRO}, {"T1023", T1023, accRO}, {"T1522", T1522, accRO}, {"T1523X", T1523X, accRO},
	{"TCNP", TCNP, accRO}, {"TDFR", TDFR, accRO}, {"TMCOL", TMCOL, accRO}, {"TSCOL", TSCOL, accRO},
	{"TLCOL", TLCOL, accRO}, {"TECOL", TECOL, accRO},
}

// Indexed register families: first instance, count, stride. The table
// lists the first; the decoder knows them all.
var families = []struct {
	off, stride uint32
	n           int
	acc         uint8
}{
	{PSIVMSGRCVAR0, 8, 2, accRW}, {PSIVMSGRCVAR1, 8, 2, accRW},
	{SIMSITRV, 4, MaxRings, accRW}, {SIMSIRRV, 4, MaxRings, accRW},
	{PSIPMAR0, PSIPMARStride, 3, accRW}, {PSIPMAR1, PSIPMARStride, 3, accRW},
	{PSIVLANR, 4, 3, accRW}, {PICDR, 8, 4, accRO}, {PSICFGR0, PSICFGR0Stride, 3, accRW},
	{PRSSK, 4, RSSKeyLen / 4, accRW}, {PSIRFSCFGR, 4, 3, accRW}, {PTCMSDUR, 4, 8, accRW},
	{G_EPFBLPR, 4, 4, accRO},
	{PSIUMHFR0, 0x10, 3, accRW}, {PSIUMHFR1, 0x10, 3, accRW},
	{PSIMMHFR0, 0x10, 3, accRW}, {PSIMMHFR1, 0x10, 3, accRW},
	{PSIVHFR0, 8, 3, accRW}, {PSIVHFR1, 8, 3, accRW},
}

// Registers returns the model's register table: every register it
// implements, by the reference's names (see RegInfo for the conventions).
func Registers() []RegInfo {
	var out []RegInfo
	add := func(defs []regDef, prefix string, delta uint32, count int, stride uint32) {
		for _, d := range defs {
			r := RegInfo{Name: prefix + d.name, Offset: d.off + delta, Access: accNames[d.acc], Count: count, Stride: stride}
			for _, f := range families {
				if f.off == r.Offset {
					r.Count, r.Stride = f.n, f.stride
				}
			}
			out = append(out, r)
		}
	}
	add(siRegs, "", 0, 1, 0)
	add(ringRegs, "", 0, MaxRings, RingStride)
	add(portRegs, "", 0, 1, 0)
	add(macCounters, "", 0, 1, 0)
	add(macCounters, "PM1_", PM1Offset, 1, 0)
	return out
}

// decode is the access kind of every 32-bit word of a PF's BAR0, built once.
var decode [PFBAR0Size / 4]uint8

// counterIdx maps a word of a 64-bit counter to its index in Device.mac (or
// -1); macWord tells low (0) from high (1) half.
var (
	counterIdx [(RDRNTP - REOCT + 8) / 4]int8
	txCounter  [(TECOL - TEOCT + 8) / 4]int8
)

func init() {
	set := func(off uint32, acc uint8) {
		if decode[off>>2] != accNone {
			panic(fmt.Sprintf("enetc model: register %#x defined twice", off))
		}
		decode[off>>2] = acc
	}
	for _, d := range siRegs {
		if d.off >= 0xB00 && d.off < 0xC00 || d.off == PSIVMSGRCVAR0 || d.off == PSIVMSGRCVAR1 {
			continue // families below
		}
		if d.off >= SIROCT && d.off <= SITMCA {
			set(d.off, d.acc)
			set(d.off+4, d.acc)
			continue
		}
		set(d.off, d.acc)
	}
	for r := uint32(0); r < MaxRings; r++ {
		for _, d := range ringRegs {
			set(d.off+r*RingStride, d.acc)
		}
	}
	for _, d := range portRegs {
		switch d.off {
		case PSIPMAR0, PSIPMAR1, PSIVLANR, PICDR, PSICFGR0, PRSSK, PSIRFSCFGR, PTCMSDUR, G_EPFBLPR,
			PSIUMHFR0, PSIUMHFR1, PSIMMHFR0, PSIMMHFR1, PSIVHFR0, PSIVHFR1:
			continue // families below
		}
		set(d.off, d.acc)
	}
	for _, f := range families {
		for i := 0; i < f.n; i++ {
			set(f.off+uint32(i)*f.stride, f.acc)
		}
	}
	for _, d := range macCounters {
		for _, base := range []uint32{0, PM1Offset} {
			set(d.off+base, accRO)
			set(d.off+base+4, accRO)
		}
	}
	for i := range counterIdx {
		counterIdx[i] = -1
	}
	for i := range txCounter {
		txCounter[i] = -1
	}
	for i, d := range macCounters {
		if d.off < TEOCT {
			counterIdx[(d.off-REOCT)/4] = int8(i)
		} else {
			txCounter[(d.off-TEOCT)/4] = int8(i)
		}
	}
}

// macCounterIndex returns the index in macCounters of the counter whose low
// word is at off (eMAC block), or -1.
func macCounterIndex(off uint32) int {
	switch {
	case off >= REOCT && off <= RDRNTP:
		return int(counterIdx[(off-REOCT)/4])
	case off >= TEOCT && off <= TECOL:
		return int(txCounter[(off-TEOCT)/4])
	}
	return -1
}

// Lookup returns the table entry of the register with the given name (as
// Registers lists it), or false.
func Lookup(name string) (RegInfo, bool) {
	for _, r := range Registers() {
		if r.Name == name {
			return r, true
		}
	}
	return RegInfo{}, false
}
