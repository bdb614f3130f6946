/*
 * A forward through DPDK's net_enetfec PMD, for scripts/dpdk-instr.
 *
 * The program is linked against enet_rxtx.c of DPDK 22.11 (compiled by
 * the script from DPDK's source, which is not part of this tree) and
 * Debian's DPDK libraries. The queues are set up as the PMD's own queue
 * set-up leaves them for an i.MX8M: legacy 8-byte BDs (the PMD does not
 * use the enhanced ones), quirks MAC, GBIT and RACC (the 2-byte shift in
 * front of each received frame), no checksum or VLAN offload, rings of
 * 256 BDs as fec-fwd-bulk's, the last BD of each ring with W. Between
 * bursts the functions named dev_* play the device (docs/hardware-fec.md,
 * 3.1 and 3.3 for the BDs, 4.2 for ownership, 4.6 for the RACC shift):
 *
 *   RX: up to 32 empty BDs from the device's position get a frame: the
 *       length 66 (a 64-byte frame with its FCS and the 2 bytes RACC puts
 *       in front), E cleared, L set, W kept. The frame's bytes are not
 *       written.
 *   TX: after each burst every BD with R set gets R cleared (sent).
 *
 * The descriptor active registers (RDAR, TDAR) are plain memory. The
 * forward loop is that of harness.c; the EAL, the pool and the exit status
 * are common.c's, as for harness.c.
 *
 * usage: harness_fec N
 */
#include <stdint.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <ethdev_driver.h>

#include "enet_regs.h"
#include "enet_ethdev.h"

#include "common.h"

#define RING 256
#define RX_LEN 66

static struct enetfec_private fep;
static struct rte_eth_dev dev;
static struct rte_eth_dev_data dev_data;
static struct enetfec_priv_rx_q rxq;
static struct enetfec_priv_tx_q txq;
static volatile uint32_t rdar, tdar;
static struct bufdesc *dev_rx, *dev_tx; /* the device's next BD on each ring */

static struct bufdesc *next(struct bufdesc *bd, struct bufdesc_prop *p)
{
	return bd == p->last ? p->base : bd + 1;
}

/* dev_rx_writeback fills up to BURST empty RX BDs with a frame. */
static void __attribute__((noinline)) dev_rx_writeback(void)
{
	for (int k = 0; k < BURST; k++) {
		struct bufdesc *bd = dev_rx;
		uint16_t sc = __atomic_load_n(&bd->bd_sc, __ATOMIC_ACQUIRE);

		if (!(sc & RX_BD_EMPTY))
			break;
		bd->bd_datlen = RX_LEN;
		__atomic_store_n(&bd->bd_sc, (uint16_t)((sc & RX_BD_WRAP) | RX_BD_LAST), __ATOMIC_RELEASE);
		dev_rx = next(bd, &rxq.bd);
	}
}

/* dev_tx_complete sends every ready TX BD. */
static void __attribute__((noinline)) dev_tx_complete(void)
{
	for (;;) {
		struct bufdesc *bd = dev_tx;
		uint16_t sc = __atomic_load_n(&bd->bd_sc, __ATOMIC_ACQUIRE);

		if (!(sc & TX_BD_READY))
			break;
		__atomic_store_n(&bd->bd_sc, (uint16_t)(sc & ~TX_BD_READY), __ATOMIC_RELEASE);
		dev_tx = next(bd, &txq.bd);
	}
}

static void prop(struct bufdesc_prop *p, volatile uint32_t *reg)
{
	p->base = harness_mem(RING * sizeof(struct bufdesc));
	p->last = p->base + RING - 1;
	p->cur = p->base;
	p->active_reg_desc = (void *)reg;
	p->ring_size = RING;
	p->d_size = sizeof(struct bufdesc);
	p->d_size_log2 = 3;
}

int main(int argc, char **argv)
{
	struct rte_mbuf *pkts[BURST];
	long n, done = 0, dropped = 0;
	struct rte_mempool *mp = harness_start("harness_fec", argc, argv, &n);

	dev.data = &dev_data;
	fep.dev = &dev;
	fep.quirks = QUIRK_HAS_ENETFEC_MAC | QUIRK_GBIT | QUIRK_RACC;
	fep.bufdesc_ex = false;
	prop(&rxq.bd, &rdar);
	rxq.pool = mp;
	rxq.fep = &fep;
	prop(&txq.bd, &tdar);
	txq.pool = mp;
	txq.fep = &fep;
	/* As the PMD's RX queue set-up does: a buffer and E in every BD. */
	for (int i = 0; i < RING; i++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

		if (m == NULL) {
			fprintf(stderr, "harness_fec: the pool ran out filling the RX ring\n");
			return 2;
		}
		rxq.rx_mbuf[i] = m;
		rxq.bd.base[i].bd_bufaddr = (uint32_t)rte_pktmbuf_iova(m);
		rxq.bd.base[i].bd_sc = RX_BD_EMPTY;
	}
	rxq.bd.last->bd_sc |= RX_BD_WRAP;
	txq.bd.last->bd_sc |= TX_BD_WRAP;
	dev_rx = rxq.bd.base;
	dev_tx = txq.bd.base;

	while (done < n) {
		uint16_t got, sent;

		dev_rx_writeback();
		got = enetfec_recv_pkts(&rxq, pkts, BURST);
		sent = enetfec_xmit_pkts(&txq, pkts, got);
		dev_tx_complete();
		if (sent < got) {
			rte_pktmbuf_free_bulk(&pkts[sent], got - sent);
			dropped += got - sent;
		}
		if (got == 0) {
			fprintf(stderr, "harness_fec: RX stalled: nothing received after a write-back\n");
			return 1;
		}
		done += sent;
	}
	if (fep.stats.ierrors != 0 || fep.stats.oerrors != 0 || fep.stats.rx_nombuf != 0) {
		fprintf(stderr, "harness_fec: PMD counted ierrors %lu oerrors %lu rx_nombuf %lu\n",
			(unsigned long)fep.stats.ierrors, (unsigned long)fep.stats.oerrors,
			(unsigned long)fep.stats.rx_nombuf);
		return 1;
	}
	return harness_end(done, dropped, n);
}
