// Package enetc is the poll-mode driver of the NXP LS1028A ENETC Ethernet
// controller, PF (1957:e100) and VF (1957:ef00). It registers itself with
// package driver: import it (for its side effect) and open a port with
// driver.Open("pci:0000:00:00.0") or, against the device model,
// driver.Open("sim:enetc0").
//
// The driver reaches the device only through driver.Regs (BAR0) and DMA
// memory from package dma, so it cannot tell the model from silicon. The
// hardware reference is docs/hardware-enetc.md; a bare section mark (§N) in
// this package's comments is a section of it. Bring-up follows its §9; the
// files follow one frame: rx.go (RxBurst, refill), tx.go (TxBurst, reclaim),
// bd.go (descriptor layouts), regs.go (names and numbers), chiplock.go
// (the ERR050089 chip lock and gate), mdio.go (the MDIO bus), phy.go (PHY
// and link), pcs.go (MAC interface mode and the SerDes PCS, phy-mode=),
// pause.go (flow control at link-up, pause=), vf.go (VF-to-PF messages,
// VF rings), rss.go, stats.go; scheduled traffic and stream filters are
// tsn.go, preempt.go and qci.go.
//
// # Register access and ERR050089
//
// On the LS1028A an MDIO access concurrent with any other register access
// of any ENETC function may be lost or corrupted, so the rule spans every
// port of the chip (Linux takes one global rwlock). Every control-path
// register access (bring-up, Stats, Link, SetMTU, ...) holds its port's
// mutex and the read side of the chip's lock; each MDIO register access
// holds the write side, for that access only, as Linux does. The data path
// takes no lock: it follows the stop protocol of package internal/gate,
// whose MDIO bit an MDIO register access on any port sets in the gate of
// every open port of the chip before it waits until no queue of any of
// them is inside a burst. So no ring register (RBCIR, TBPIR, TBCIR) is
// touched during an MDIO register access, and the rings run while a frame
// is on the MDIO wire. The chip is
// driver.Device.Chip: every real ENETC function of the process shares one
// (backends that reach silicon leave it empty); simulated chips (sim's
// chip= option) each keep their own. An RX burst that finds the gate closed
// returns 0 and the caller polls again; a TX burst waits, off the gate, for
// the access to end (bounded by mdioGateWaitMax) and then sends:
// housekeeping never costs a frame. On arm64, the target, the handshake
// costs per burst a swap of the queue's flag (an atomic read-modify-write:
// an LDAXR/STLXR pair on the LS1028A's Cortex-A72, a SWPAL on a core with
// the LSE atomics), a load-acquire of the gate and a store-release; on
// amd64 the swap and the store are each an XCHG.
//
// # Device-written fields
//
// Every RX write-back is checked before use: the ready bit on each BD of a
// frame, buf_len against RBBSR and the maximum frame, non-final BDs filled
// to RBBSR, the frame within the posted BDs; TBCIR must lie in the ring and
// between the driver's consumer and producer indices. A failed check drops
// the frame as driver.CauseBadDescriptor and recycles its buffers. A BD that
// stays not ready while a later posted one is ready is given up after
// rxStuckPolls looks, taken once every rxPeekEvery polls of an idle ring (a
// lost status write would otherwise stall the ring); the looks find the
// ready one however far ahead, one status word each, so any number of lost
// write-backs in a row is given up, BD after BD.
// The reference does not document the RX error bits, so any non-zero error
// byte counts as driver.CauseFrame. One case no driver can detect: if the
// first BD of a multi-BD frame loses its status (or its F bit turns up
// garbled), the frame's remaining BDs look like a frame of their own.
//
// # One frame's trip
//
//  1. The device writes a received frame into a posted buffer and its BD back (R, F set).
//  2. RxBurst takes the BDs from ntc, checks them and hands the buffers out as *pool.Packet.
//  3. The application reads, rewrites or frees them; TxBurst writes their BDs at ntu, one TBPIR write.
//  4. Reclaim reads TBCIR and gives every sent buffer back: FreeBulk, or straight into its RX pool's cache.
//  5. RxBurst's refill posts fresh buffers from the pool at ntu, one RBCIR write.
package enetc
