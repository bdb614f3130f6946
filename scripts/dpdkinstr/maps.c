/*
 * Linked into the arm64 harnesses by scripts/dpdk-instr: at exit, when
 * the environment names a file in DPDK_INSTR_MAPS, copies the process's
 * memory map (/proc/self/maps, which qemu-user shows in guest addresses)
 * there, so the counting plugin's block addresses can be mapped to the
 * shared objects and their symbols. It runs once per run, so its cost
 * cancels out of the difference between the two packet counts.
 */
#include <stdio.h>
#include <stdlib.h>

static void __attribute__((destructor)) dump_maps(void)
{
	const char *path = getenv("DPDK_INSTR_MAPS");
	char buf[4096];
	size_t n;
	FILE *in, *out;

	if (path == NULL || *path == '\0')
		return;
	in = fopen("/proc/self/maps", "r");
	if (in == NULL) {
		perror("/proc/self/maps");
		return;
	}
	out = fopen(path, "w");
	if (out == NULL) {
		perror(path);
		fclose(in);
		return;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	if (fclose(out) != 0)
		perror(path);
}
