/*
 * The set-up and ending the harnesses of scripts/dpdk-instr share; see
 * common.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "common.h"

static const char *harness_name = "harness";

struct rte_mempool *harness_start(const char *name, int argc, char **argv, long *n)
{
	/* One lcore and no huge pages, PCI bus, shared configuration or telemetry. */
	char *eal[] = {"dpdk-instr", "--no-huge", "--no-pci", "--no-shconf", "--no-telemetry",
		       "-l", "0", "-m", "64", "--log-level=error", NULL};
	struct rte_mempool *mp;

	harness_name = name;
	if (argc != 2 || (*n = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: %s N (frames to forward, > 0)\n", argv[0]);
		exit(2);
	}
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "%s: rte_eal_init: %s\n", name, rte_strerror(rte_errno));
		exit(2);
	}
	if (rte_lcore_id() != 0) {
		fprintf(stderr, "%s: not on lcore 0: the mempool's per-lcore cache would be off\n", name);
		exit(2);
	}
	mp = rte_pktmbuf_pool_create("fwd", POOL, CACHE, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL) {
		fprintf(stderr, "%s: rte_pktmbuf_pool_create: %s\n", name, rte_strerror(rte_errno));
		exit(2);
	}
	return mp;
}

void *harness_mem(size_t size)
{
	void *p = aligned_alloc(4096, size);

	if (p == NULL) {
		fprintf(stderr, "%s: cannot allocate %zu bytes for a ring\n", harness_name, size);
		exit(2);
	}
	memset(p, 0, size);
	return p;
}

int harness_end(long done, long dropped, long n)
{
	printf("forwarded %ld dropped %ld\n", done, dropped);
	return dropped != 0 || done < n;
}
