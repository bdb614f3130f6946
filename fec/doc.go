// Package fec is gopmd's poll-mode driver for the NXP/Freescale FEC and ENET
// Ethernet MACs of the i.MX family (docs/hardware-fec.md). It registers itself with
// package driver: import it and open "platform:2188000.ethernet" (UIO,
// vfio-platform, /dev/mem) or "sim:fec0?soc=imx8mp" (the device model;
// soc= picks the SoC profile, imx8mp when left out; see package sim for
// the model's other options). The quirk profile follows the node's
// compatible strings, most specific first. A bare section mark (§N) in this
// package's comments is a section of docs/hardware-fec.md.
//
// The port follows the reference's bring-up (reset, MAC address, MDIO
// clock, RCR/TCR, ring bases, RACC/TACC, OPD, ECR with EN1588 and DBSWP,
// then RDAR), keeps its descriptor rings in memory the CPU and device see
// identically, and keeps packet buffers correct on non-coherent SoCs with
// dma.Region's SyncForDevice/SyncForCPU. On 32-bit ARM, which cannot clean
// or invalidate caches from user space, a non-coherent FEC needs uncached
// buffer memory: a physical carve-out (dma-carveout=ADDR+SIZE), whose
// mapper allocates uncached regions (dma.Allocator). Without an IOMMU or a
// carve-out, DMA memory is mlocked 4 KiB pages found through pagemap: each
// ring must fit one page, and the kernel must not migrate them
// (vm.compact_unevictable_allowed=0; New refuses otherwise).
//
// Spec options: bd=legacy|enhanced (descriptor format; default enhanced
// where the part has it), phy=N|none|scan (PHY address, none for a fixed
// link, scan for the one PHY that answers on the port's own MDIO bus
// whatever the device tree says; default: the device tree's phy-handle,
// else scan; a bus where several PHYs answer is refused; a phy-handle on
// another MAC's MDIO bus, as ENET1's on the i.MX6UL-EVK, is reached through
// that MAC's port in the same process or the kernel's MII ioctls on its
// interface: MDIOPath says which),
// fixed-link=SPEED[,full|,half] (no PHY: the link runs at SPEED Mb/s, 10,
// 100 or 1000; without it a port with no PHY takes the device tree's
// fixed-link speed and duplex, else the top speed its phy-mode carries:
// 100 Mb/s over RMII and MII, a speed the phy-mode cannot carry is
// refused), phy-mode=
// rgmii|rgmii-id|rgmii-rxid|rgmii-txid|rmii|mii (MAC-PHY interface;
// default per SoC; the -id forms, or the device tree's phy-mode, also set
// the PHY's RGMII clock delays where its part is known, physetup.go),
// phy-reset=pulse|keep (pulse, the default, drives the device tree's PHY
// reset line through the GPIO character device before the PHY is read;
// keep leaves the PHY as its holder or the boot loader set it; a line the
// kernel holds is refused unless keep is given), link-poll=DURATION
// (how often a goroutine reads the PHY and brings the MAC's speed and
// duplex bits in line, and on ERR006358 parts re-kicks a stalled TX ring;
// default 1s, and every 10 ms while frames flow, since the MAC does not
// sense the link and sends into a dead one until the poll sees it; 0 only
// at Start, UpdateLink and Reclaim), mac=ADDR (the port's address; default
// what PALR/PAUR hold, or one derived from the spec when they hold no
// station's address: zero, multicast, broadcast; such an address given to
// mac= or SetMAC is refused, as on the ENETC),
// dma-coherent=1 (declare the device's DMA cache-coherent, as under QEMU),
// rx-coalesce-frames=N and rx-coalesce-ticks=T (RX interrupt coalescing,
// RXICn: one interrupt per N frames, 1-255 and at most half the RX ring,
// or T units of 64 ENET clock cycles after the first, 1-65535; default
// off).
//
// Every frame is received or counted by cause; TX counts a frame sent once
// reclaim finds the MAC done with it without an error (a TXE in an
// enhanced BD counts it as a frame error instead), and Stop counts the
// frames it takes back unsent as stopped. A receive DMA fault leaves only
// EIR.EBERR: Stats, the counter and link polls and each MAC reset count it
// as one dma_fault (Port.Stats).
//
// RX queues implement driver.RxInterrupter (irq.go) where the backend
// delivers the MAC's interrupt (platform: through vfio-platform or UIO,
// uio:, sim:): an adaptive worker sleeps on it (driver.RxWaiter). On the
// i.MX7D, i.MX8M, i.MX93 and i.MX8QM rings 1 and 2 raise lines of their
// own (int1, int2) and each ring sleeps on its ring's line (IRQLines);
// uio_pdrv_genirq delivers only the node's first interrupt, which on the
// i.MX8M and i.MX93 trees is int1, and arming a ring whose line it does
// not deliver is refused: use vfio-platform there, or poll that ring.
//
// shift16=0 is a workaround for QEMU only, never for silicon: QEMU 7.2's
// ENET model ignores RACC.SHIFT16 when it receives into legacy (8-byte)
// descriptors, so frames arrive 2 bytes short unless the driver stops
// expecting the pad. The default, right for every RACC part (docs/hardware-fec.md
// §4.6), is SHIFT16 on in both descriptor formats.
//
// # One frame's trip
//
//  1. The device writes a received frame into the buffer of an empty BD and clears E.
//  2. RxBurst takes the BDs from ntc, checks them and hands the buffers out as *pool.Packet.
//  3. The application reads, rewrites or frees them; TxBurst writes their BDs at ntu, R last, one TDAR write.
//  4. Reclaim finds R cleared and gives every sent buffer back: FreeBulk, or straight into its RX pool's cache.
//  5. RxBurst's refill posts fresh buffers from the pool, E set, one RDAR write.
package fec
