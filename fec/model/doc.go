// Package model is a software model of the NXP FEC/ENET Ethernet MAC of
// i.MX SoCs, written from the hardware reference (docs/hardware-fec.md) and not from
// any driver. A *Device is the instance's register window (it satisfies
// driver.Regs) plus a DMA engine that reaches memory only by IOVA through a
// simdma.IOMMU. A bare section mark (§N) in this package's comments is a
// section of docs/hardware-fec.md.
//
// # What is modelled
//
//   - The register file of docs/hardware-fec.md §2 with its semantics: EIR
//     write-1-to-clear, RDAR/TDAR trigger registers, ECR reset/enable,
//     RCR/TCR, PALR/PAUR, OPD, MSCR/MMFR with a clause-22 PHY, RACC
//     SHIFT16, TACC, MIB counters, and ring 1/2 registers on multi-queue
//     parts, whose DMAnCFG shapes the AVB rings' frames (avb.go:
//     Departures). Registers the part does not have (and the space after the
//     register block) read 0; each such access is recorded (Unimplemented).
//   - Legacy 8-byte and enhanced 32-byte descriptors (ECR.EN1588 on parts
//     with enhanced descriptors), in the byte order the silicon uses.
//   - Per-SoC profiles (Profiles, LookupProfile) with the quirk table of
//     docs/hardware-fec.md §6; DefaultSoC is imx8mp.
//   - Fault injection, under the names enetc/model uses for the same
//     faults: link flap, PHY speed renegotiation (SetLinkSpeed), RX errors
//     (InjectRxErrors: every RX status error bit, CR, LG, TR, OV, NO, SH),
//     BD write-back corruption (CorruptRxWriteback, CorruptTxWriteback),
//     DMA to unmapped IOVAs (InjectRxDMAFault, InjectTxDMAFault), TX stall
//     and erratum ERR006358.
//
// # Descriptor byte order
//
// Every descriptor word is accessed as one 32-bit word. Word 0 holds the
// 16-bit status/control field in bits 31:16 and the 16-bit length in bits
// 15:0 in both byte orders: with ECR.DBSWP set, the word is little-endian
// (length in bytes 0-1, status in bytes 2-3, as the CPU of an i.MX sees it);
// with DBSWP clear an ENET-MAC part reads the word big-endian (status in
// bytes 0-1, length in bytes 2-3, every other word byte-swapped too). So the
// model loads a TX status with one Load32 of word 0 and publishes an RX
// status with one Store32 of word 0, after every other field it writes. A
// driver that forgets DBSWP sees garbage (unlike QEMU, which ignores it).
//
// # Modes
//
// Synchronous (Config.Engine false): a TDAR or RDAR write processes the ring
// before it returns, Receive delivers a frame before it returns and Pump
// pulls the attached sources (an RDAR write on ring 0 that finds an empty
// buffer pulls them too, so a driver that only refills its ring keeps
// frames coming); everything runs in the caller's goroutine, so
// one goroutine must drive the device. Engine (Config.Engine true): Start
// runs one goroutine that processes TX rings when TDAR is active and pulls
// sources, from the first RDAR write that finds an empty buffer on (the
// moment synchronous mode first pulls them), so a rate-limited source
// never sends into a MAC its driver has not started; with nothing to do it
// sleeps until there is work (a doorbell, a source that has a frame: a
// wire.Waker wakes it, or the time a clocked source's next frame is due).
// Receive may be called from any goroutine. Registers and descriptor status words are accessed
// with atomics in both modes.
//
// # Choices where the reference is silent
//
//   - Multi-buffer RX frames: each BD but the last holds MRBR bytes and has
//     length MRBR; the last has L and the whole frame's length (with the
//     SHIFT16 bytes and the FCS). If the ring runs out of empty BDs in the
//     middle of a frame, the last BD written gets L|OV.
//   - RX status: the model rewrites the whole status field (keeping W, RO1,
//     RO2), so stale error bits from a previous use of the BD do not remain.
//   - The FCS is always written to memory (RCR.CRCFWD's polarity is
//     unverified); frames shorter than 60 bytes from the wire are padded, as
//     a sending MAC does.
//   - A TX BD without TC carries its own FCS in its last 4 bytes: the model
//     checks and strips it; a bad one (or ABC) makes the frame count as
//     sent with a bad CRC, which the peer would drop: it does not reach the
//     wire.
//   - A DMA fault on a data buffer sets EIR.EBERR: a TX frame is completed
//     with TXE|FE (enhanced) and not sent; an RX frame is dropped with its
//     BDs left empty. A fault on a descriptor fetch also clears RDAR/TDAR.
//   - The MAC and PHY speeds must agree (ECR.SPEED, RCR.RMII_10T against
//     the PHY's resolved speed) or no frame passes, as on silicon; 1000
//     Mb/s also takes RCR.RGMII_EN, as MII and RMII carry 100 Mb/s at most
//     (docs/hardware-fec.md §5.4). The PHY resolves the best mode that it
//     (ANAR, CTRL1000) and its partner (every mode up to Config.LinkSpeed)
//     both advertise, when auto-negotiation restarts (IEEE 802.3 28B.3).
//   - RCR.LOOP (set at reset) loops TX frames back to RX and ignores the
//     wire, so a driver that does not clear it sends nothing. The reference
//     calls it internal loopback, between the MAC and the PHY interface:
//     the MAC transmits the frame, so the TX MIB counters (RMON_T_*,
//     IEEE_T_FRAME_OK, ...) count it, and the RX counters count it again
//     when it comes back. No link is needed.
//   - The PHY is a generic clause-22 gigabit PHY (ID 0x0022:0x1622) at
//     Config.PHYAddr that completes auto-negotiation at once. An MMFR frame
//     runs only while MSCR's MDC field is non-zero; it completes inside the
//     write, or Config.MDIOTime later (seen on the next EIR or MMFR read).
//     Config.PHYBus puts it on another model's MDIO bus instead, as the
//     i.MX6UL-EVK and i.MX7D boards wire ENET1's PHY to ENET2's MDIO pins:
//     this MAC's MDIO then reaches no PHY, the other's answers for it, and
//     it still carries this MAC's link (docs/hardware-fec.md §5.5).
//   - On the i.MX7D, i.MX8M, i.MX93 and i.MX8QM profiles the interrupt
//     output is three lines: int1 for ring 1's events, int2 for ring 2's,
//     int0 for the rest (SetIRQLine; docs/hardware-fec.md §1 and §4.8);
//     Profile.DTIRQLines says which line the device tree lists i-th.
//   - Reset leaves MIBC.MIB_DIS set (counters stopped until MIBC is
//     written 0), RCR.LOOP set and PALR/PAUR zero, as the reference says;
//     a driver must clear LOOP and program its address before frames flow.
package model
