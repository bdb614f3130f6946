/*
 * What the two harnesses of scripts/dpdk-instr (harness.c for net_enetc,
 * harness_fec.c for net_enetfec) share: the command line, the EAL, the
 * mbuf pool, zeroed ring memory and the exit status. Everything here runs
 * once per run, outside the forward loop, so it cancels out of the
 * difference between the two packet counts; the script compiles common.c
 * into each harness.
 */
#ifndef DPDKINSTR_COMMON_H
#define DPDKINSTR_COMMON_H

#include <stddef.h>

#include <rte_mempool.h>

#define BURST 32  /* frames per RX and TX burst, as gopmd's forward benchmarks */
#define POOL 2048 /* mbufs in the pool */
#define CACHE 256 /* the pool's per-lcore cache, which serves every get and put */

/*
 * harness_start reads the frame count N from the command line into *n,
 * starts the EAL (no huge pages, no PCI, no shared configuration, lcore 0
 * only) and makes the mbuf pool on lcore 0. name prefixes the harness's
 * messages. On a bad command line or a failed step it says why on stderr
 * and exits with status 2.
 */
struct rte_mempool *harness_start(const char *name, int argc, char **argv, long *n);

/*
 * harness_mem returns size bytes of zeroed memory aligned to 4 KiB for a
 * BD ring or its software state; it exits with status 2 when there is
 * none.
 */
void *harness_mem(size_t size);

/*
 * harness_end prints the frames forwarded and dropped and returns the
 * harness's exit status: 0 when n or more were forwarded and none was
 * dropped, else 1.
 */
int harness_end(long done, long dropped, long n);

#endif
