// Package model is a software model of the NXP LS1028A ENETC Ethernet
// controller (PF and VF), written from the hardware's documented facts (the
// register map, descriptor layouts and errata as the public Linux header
// drivers/net/ethernet/freescale/enetc/enetc_hw.h and DPDK's
// drivers/net/enetc/base/enetc_hw.h state them) and from no driver's code:
// a BAR0 register window with the documented read-only,
// write-1-to-clear and trigger semantics, a DMA engine that reaches host
// memory only by IOVA through a simdma.IOMMU, a MAC with its counters, MDIO
// controllers with a simulated clause-22/45 PHY and PCS, the control BD
// ring (RSS indirection table, MAC filter entries, the port's gate
// control list), time gating and credit-based shaping timed against the
// chip's 1588 timer (tsn.go: Departures), frame preemption's MAC merge
// sublayer over a wire that carries mPackets (preempt.go), 802.1Qci stream
// filters, gates and flow meters on receive (qci.go), Toeplitz RSS, the
// documented errata and fault injection (InjectRxErrors, InjectRxDMAFault,
// InjectTxDMAFault, CorruptRxWriteback, InjectBogusTxCI, SetTxStall, under
// the names fec/model uses for the same faults). It imports no driver code; its
// register table (Registers) is its own transcription of the reference.
//
// The facts, each with its public source, are gathered in
// docs/hardware-enetc.md; a bare section mark (§N) in this package's
// comments is a section of it.
//
// # Modes
//
// Synchronous (Config.Engine false): a TBPIR write processes that TX ring
// before it returns, a SICBDRPIR write runs the control ring, Receive
// delivers a frame into posted buffers at once, Pump pulls the attached
// sources. The caller's goroutine does the work: each TX ring from one
// goroutine at a time, Receive and Pump from one goroutine at a time.
//
// Engine (Config.Engine true): Start launches one goroutine that polls the
// TX doorbells, the control ring and the sources (these from the moment
// the SI and its ring 0 are first enabled, so a rate-limited source never
// sends into a port its driver has not started); Stop ends it. With
// nothing to do it sleeps, and costs no CPU, until there is work: a
// doorbell or a register write that lets frames move, a source that has a
// frame (a wire.Waker wakes it), or the time a clocked source's next frame
// is due. StartOn
// runs the device on a shared Engine instead, one goroutine for several
// devices (sim: every engine-mode sim:enetcN shares one). Receive from
// other goroutines (a cable's peer) is serialised with the engine by a
// lock. Doorbells, indices and RX status words are read and written with
// atomics, so driver and engine are race-clean under go test -race.
//
// # The data path
//
// Every DMA access is a translation by IOVA through the simdma.IOMMU; the
// model keeps one simdma.View per stream of accesses (each ring's BDs, its
// RX buffers, its TX frames), which tries the mapping it hit last and
// re-validates it on every access. A source's frames are pulled a stage
// (up to 32) at a time and delivered back to back; the write-backs of a
// ring are published together, at the end of a delivery (Receive, a pump,
// an engine round) or every 64 BDs: first every BD's other fields, then the
// status words in ring order, each with an atomic store; then RBPIR. The
// MAC and SI counters of received frames are added once per delivery, the
// TX ones once per pass over a ring. TX frames sent from a single buffer
// are handed to the wire up to 32 at a time. None of this changes what the
// driver can observe beyond timing: a frame's status is never visible
// before its data and fields, and write-backs appear in ring order.
//
// # Choices where the reference is silent
//
//   - Reset values: see Device.reset's comment.
//   - RX error byte: RxErrCRC, RxErrOversize, RxErrDMA (real assignments
//     are UNVERIFIED; drivers treat any non-zero value as a bad frame).
//     Oversize frames are truncated at PM0_MAXFRM and delivered flagged.
//   - inet_csum is written as 0; L4 checksums are not checked. The IPv4
//     header checksum is checked unless PAR_PORT_CFG bit 0 is set (DPDK's
//     bit assignment; bit 1 with Config.PARBitsFreeBSD, FreeBSD's, §8.2);
//     a VF model has no port and always checks.
//     The parse-error bit (§3.7 bit 15) beside the L3 code alone is an L3
//     error (bad or cut-short IP header), beside an L4 code an L4 error (a
//     TCP or UDP header cut short), as DPDK's net/enetc reads it.
//   - RSS: Toeplitz over source and destination address, then source and
//     destination port for TCP/UDP (not fragments); non-IP hashes to 0.
//     PRSSK(n) holds key bytes 4n..4n+3, byte 4n in bits 7:0. The ring is
//     table[hash & 63] (64-entry table: SIRSSCAPR = PRSSCAPR = 1).
//   - RX ownership: the device fills BDs from RBPIR up to, not including,
//     the one before RBCIR; it never advances RBPIR onto RBCIR (§4.1,
//     §8.2): of N BDs prepared (RBCIR = RBPIR + N) it fills N - 1, of a
//     ring with RBCIR == RBPIR length - 1.
//   - MAC octet counters (REOCT, TEOCT, TOCT) include the 4-byte FCS; SI
//     octet counters do not. RPKT counts good and bad frames.
//   - Port filtering (PF): broadcast passes; unicast needs PSIPMR bit 0,
//     the SI's PSIPMAR0/1(0) address or an enabled CBDR class-1 entry for
//     SI 0; multicast needs PSIPMR bit 16 or such an entry. Misses count in
//     UFDMF / MFDMF. A VF accepts everything (the PF filters in silicon).
//   - Discards before a ring are counted in registers a driver reads: RDRP
//     for frames the MAC drops while the link is down, receive is disabled
//     (PM0_CMD_CFG.RX_EN, PMR, SIMR) or the FIFO is locked up (also
//     RDRNTP), RUND for runts, UFDMF / MFDMF for the filter, RBDCR(n) for
//     a ring that is disabled or has no buffer. The reference does not say
//     which of these silicon counts in RDRP; the model counts each once.
//   - CBDR completion codes: CBDErr* in the low 4 bits of status_flags.
//   - PHY: ID registers (Config.PHYID; by default the AR8031/AR8033's, the
//     LS1028A-RDB's SGMII PHY), BMSR with link latched low, the AR803x
//     status register (0x11) with speed/duplex/resolved/link, clause-45
//     MMDs 1, 3 and 7. The PCS answers at address 0 of the internal MDIO
//     bus. Neither is reset by an FLR (Reset).
//   - VF-to-PF mailbox (§2.10): a VF attached with AttachVF sends through
//     VSIMSGSNDAR0/1; the message lands in the PF's PSIVMSGRCVAR(n) buffer
//     and sets MR(n) in PSIMSGRR and PSIIDR; the PF's PSIMSGRR write
//     answers (MB cleared, MS for a code other than 0). PSIPMAR0/1(n+1) is
//     VF n's SIPMAR0/1, which the VF cannot write.
//   - VF rings (§9.1): an attached VF owns what its PF wrote in
//     PSICFGR0(n+1), which resets to 0 (Linux enetc_port_si_configure
//     assigns them at PF probe; nothing else does); a VF with no PF in the
//     model keeps Config.TxRings/RxRings. A PF's port has Config.PortRings
//     (PCAPR0, default 16) each way.
//   - Board interface (Config.PHYMode, §6.1): frames pass only while
//     PM0_IF_MODE and, for SGMII and 2500BASE-X, the Lynx PCS (IF_MODE,
//     DEV_ABILITY, link timer, BMCR) are set for the wiring and the speed
//     the PHY resolved; SGMII in-band AN reports link, duplex and speed in
//     the PCS's partner word. PM0_IF_MODE resets to the wiring's value as
//     the RCW leaves it (Config.StrictIFMode: to 0); the PCS keeps its
//     registers through an FLR and through its own BMCR reset. Every
//     bring-up of Linux, U-Boot and gopmd links. Empty PHYMode: not
//     modelled.
//   - ERR050089: a register access to any function of the chip made while
//     an MDIO register access is under way is recorded as a model error and
//     counted. The window is one MDIO register access, as Linux holds its
//     erratum lock per access (enetc_port_rd_mdio); accesses while a frame
//     is on the MDIO wire are allowed. With a Clock (SetClock), a cycle
//     keeps MDIO_CFG.BSY set for MDIOFrameTime of model time.
//   - PM0_RX_FIFO erratum: with a value other than 1, RX locks up after
//     Config.FIFOLockAfter frames (default 256) until a function reset;
//     lost frames count in RDRNTP.
//   - PM0_CMD_CFG XGLP (PF) loops transmitted frames back into the port's
//     own receive side instead of the wire.
//   - TX PI/CI erratum: TBCIR writes are refused and recorded (unless they
//     write the current value); TBPIR writes to a disabled ring that would
//     move PI off CI are recorded; only Reset clears the indices.
//
// # Not modelled
//
// Interrupts and MSI-X, TX VLAN insertion and timestamps (extension BDs
// are skipped), Qbv/Qbu, PAUSE frames (the flow-control registers keep
// what is written), RFS (a class-4 set of one 116-byte entry only counts
// the entry as written, UninitializedMemories), the IERB (not in any BAR),
// the hash filters, pMAC traffic (its counters read 0).
package model
