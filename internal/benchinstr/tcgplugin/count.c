/*
 * count.c: a QEMU TCG plugin that counts the guest instructions a
 * qemu-user run executes, per translated block, for scripts/bench-instr.
 *
 * Each time QEMU translates a block of guest code, the plugin gives the
 * block a counter and asks QEMU to add one to it, inline in the
 * translated code, whenever the block is entered. When the guest exits,
 * it writes one line per translation that ran:
 *
 *	<start address, hex> <instructions in the block> <times entered>
 *
 * so a block's instructions are executed count times each. A block that
 * QEMU translates again (a second translation of the same address) has a
 * line of its own; the reader adds them up. internal/benchinstr maps the
 * addresses to the functions of the test binary.
 *
 * Plugin argument: out=PATH, the file to write (required).
 *
 * Debian does not package QEMU's plugin header, so the few declarations
 * this file uses are written out below from the public plugin API
 * (QEMU's docs/devel/tcg-plugins.rst and include/qemu/qemu-plugin.h, API
 * version 1 as QEMU 7.2 implements it). The API is a C ABI that QEMU
 * checks by the version number the plugin exports.
 *
 * The inline add is not atomic: two guest threads running the same block
 * at the same moment could lose a count. The benchmarks run their loop on
 * one goroutine with GOMAXPROCS=1, so their blocks run on one thread.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

/* The plugin API, version 1. */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	/* more fields follow that this plugin does not read */
} qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;

/*
 * One translated block. Blocks are allocated in chunks and never freed
 * (QEMU may still run a block's code until the guest exits), so a
 * counter's address stays valid for the translated code that adds to it.
 */
struct block {
	uint64_t count; /* first: the inline add's target */
	uint64_t vaddr;
	uint64_t insns;
};

enum { chunkBlocks = 4096 };

struct chunk {
	struct chunk *next;
	size_t used;
	struct block b[chunkBlocks];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct chunk *chunks;
static char *outPath;

static struct block *newBlock(void)
{
	struct block *b;
	pthread_mutex_lock(&mu);
	if (chunks == NULL || chunks->used == chunkBlocks) {
		struct chunk *c = calloc(1, sizeof *c);
		if (c == NULL) {
			pthread_mutex_unlock(&mu);
			fprintf(stderr, "count plugin: out of memory\n");
			abort();
		}
		c->next = chunks;
		chunks = c;
	}
	b = &chunks->b[chunks->used++];
	pthread_mutex_unlock(&mu);
	return b;
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = newBlock();
	(void)id;
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->count, 1);
}

static void atExit(qemu_plugin_id_t id, void *userdata)
{
	FILE *f;
	struct chunk *c;
	(void)id;
	(void)userdata;
	f = fopen(outPath, "w");
	if (f == NULL) {
		perror(outPath);
		return;
	}
	pthread_mutex_lock(&mu);
	for (c = chunks; c != NULL; c = c->next) {
		for (size_t i = 0; i < c->used; i++) {
			struct block *b = &c->b[i];
			if (b->count != 0) {
				fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", b->vaddr, b->insns, b->count);
			}
		}
	}
	pthread_mutex_unlock(&mu);
	fprintf(f, "end\n");
	if (fclose(f) != 0) {
		perror(outPath);
	}
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	if (info->system_emulation) {
		fprintf(stderr, "count plugin: for qemu-user (linux-user) only\n");
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0 && argv[i][4] != '\0') {
			outPath = argv[i] + 4;
		} else {
			fprintf(stderr, "count plugin: unknown argument %s (want out=PATH)\n", argv[i]);
			return 1;
		}
	}
	if (outPath == NULL) {
		fprintf(stderr, "count plugin: no out=PATH argument\n");
		return 1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, atExit, NULL);
	return 0;
}
