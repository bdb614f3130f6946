/*
 * A forward through DPDK's net_enetc PMD, for scripts/dpdk-instr.
 *
 * The program is linked against enetc_rxtx.c of DPDK 22.11 (compiled by
 * the script from DPDK's source, which is not part of this tree) and
 * Debian's DPDK libraries. One RX ring and one TX ring of 512 BDs sit in
 * ordinary memory; between bursts the functions named dev_* play the
 * device, as the stand-in device of gopmd's enetc-fwd-2048 does:
 *
 *   RX: up to 32 of the BDs software has posted (those from the device's
 *       producer index up to the index software last wrote to the ring's
 *       consumer index register) get a write-back: 60 bytes (a 64-byte
 *       frame less its FCS), parse summary "L2 only" (0x0060), lstatus
 *       R | F (bits 30 and 31; docs/hardware-enetc.md, 3.5 and 3.7). The
 *       frame's bytes are not written.
 *   TX: after each burst every BD software posted is done: the consumer
 *       index register the PMD reads (TBCISR) takes the value it wrote to
 *       the producer index register (TBPIR).
 *
 * The forward loop: enetc_recv_pkts into 32 mbufs, enetc_xmit_pkts of
 * what arrived, anything not sent back to the pool, until N frames have
 * been sent. The mbuf pool holds 2048 mbufs of 2 KiB data room with a
 * per-lcore cache of 256, made on the EAL's main lcore (EAL started with
 * no huge pages, no PCI, no shared configuration); common.c sets up both,
 * as for harness_fec.c.
 *
 * usage: harness N    (prints the frames forwarded and the drops; exits 1
 *                      when a frame was dropped or nothing was forwarded)
 */
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "base/enetc_hw.h"
#include "enetc.h"

#include "common.h"

#define RING 512
#define FRAME_LEN 60 /* a 64-byte frame as the MAC hands it on, FCS stripped */

static struct enetc_bdr rxq, txq;
static volatile uint32_t rx_cir; /* RBCIR: software's consumer index */
static volatile uint32_t tx_pir; /* TBPIR: software's producer index */
static volatile uint32_t tx_cisr; /* TBCISR: the device's consumer index */
static uint32_t dev_rx_pi; /* the device's next RX BD */

/* dev_rx_writeback writes back up to BURST posted RX BDs. */
static void __attribute__((noinline)) dev_rx_writeback(void)
{
	uint32_t ci = rx_cir;
	union enetc_rx_bd *bd = rxq.bd_base;

	for (int k = 0; k < BURST && dev_rx_pi != ci; k++) {
		union enetc_rx_bd *b = &bd[dev_rx_pi];

		b->r.inet_csum = 0;
		b->r.parse_summary = ENETC_PKT_TYPE_ETHER;
		b->r.rss_hash = 0;
		b->r.buf_len = FRAME_LEN;
		b->r.vlan_opt = 0;
		__atomic_store_n(&b->r.lstatus, (uint32_t)(1u << 30 | 1u << 31), __ATOMIC_RELEASE);
		dev_rx_pi = (dev_rx_pi + 1) % RING;
	}
}

/* dev_tx_complete marks every posted TX BD done. */
static void __attribute__((noinline)) dev_tx_complete(void)
{
	tx_cisr = tx_pir;
}

int main(int argc, char **argv)
{
	struct rte_mbuf *pkts[BURST];
	long n, done = 0, dropped = 0;
	struct rte_mempool *mp = harness_start("harness", argc, argv, &n);

	rxq.bd_base = harness_mem(RING * sizeof(union enetc_rx_bd));
	rxq.q_swbd = harness_mem(RING * sizeof(struct enetc_swbd));
	rxq.rcir = (void *)&rx_cir;
	rxq.bd_count = RING;
	rxq.crc_len = 0;
	rxq.mb_pool = mp;
	txq.bd_base = harness_mem(RING * sizeof(struct enetc_tx_bd));
	txq.q_swbd = harness_mem(RING * sizeof(struct enetc_swbd));
	txq.tcir = (void *)&tx_pir;
	txq.tcisr = (void *)&tx_cisr;
	txq.bd_count = RING;
	/* As the PMD's queue start does: post every RX BD it can. */
	if (enetc_refill_rx_ring(&rxq, enetc_bd_unused(&rxq)) != RING - 1) {
		fprintf(stderr, "harness: the first RX refill did not post %d buffers\n", RING - 1);
		return 2;
	}

	while (done < n) {
		uint16_t got, sent;

		dev_rx_writeback();
		got = enetc_recv_pkts(&rxq, pkts, BURST);
		sent = enetc_xmit_pkts(&txq, pkts, got);
		dev_tx_complete();
		if (sent < got) {
			rte_pktmbuf_free_bulk(&pkts[sent], got - sent);
			dropped += got - sent;
		}
		if (got == 0 && dev_rx_pi == rx_cir) {
			fprintf(stderr, "harness: RX stalled: no BD posted and none received\n");
			return 1;
		}
		done += sent;
	}
	return harness_end(done, dropped, n);
}
