// SPDX-License-Identifier: MIT
/*
 * 10,000 pin/map/copy/unmap/unpin cycles per GPU (spread over the
 * kinds of current context, gpu.h) leave no file descriptor, memory or
 * mapping behind, and no CUDA context switched; pins of one allocation
 * share its import, and the last unpin releases it.
 */
#include <dirent.h>
#include <stdio.h>

#include "gpu.h"

#define CYCLES (10000 / NR_STARTS)

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

static int map_lines(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;

	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

static int cycle(gdr_t g, unsigned long addr, size_t size, unsigned int i)
{
	CUcontext before = gpu_current();
	uint64_t v = 0x0123456789abcdefULL ^ i, back = ~v;
	gdr_info_t info;
	gdr_mh_t mh;
	char *va;
	int err;

	err = gdr_pin_buffer(g, addr, size, 0, 0, &mh);
	if (err)
		return err;
	err = gdr_map(g, mh, (void **)&va, size);
	if (!err) {
		err = gdr_get_info(g, mh, &info);
		if (!err)
			err = gdr_copy_to_mapping(mh, va + (addr - info.va), &v, 8) ||
			      gdr_copy_from_mapping(mh, &back, va + (addr - info.va), 8) ||
			      back != v;
		err |= gdr_unmap(g, mh, va, size);
	}
	err |= gdr_unpin_buffer(g, mh);
	return err || gpu_current() != before;
}

static void one_case(const struct gpu_case *c)
{
	unsigned long base = 0;
	long rss0, rss1;
	int fds0, fds1, maps0, maps1, failed = 0;
	unsigned int i;

	LIB(gdrmap_mem_alloc(c->dev, 4 << 20, &base), 0);
	if (!base)
		return;
	/* Warm up, so one-time set-up is not counted as growth. */
	CHECK_RET(cycle(c->g, base, 4096, 0), 0);
	fds0 = open_fds();
	rss0 = rss_kib();
	maps0 = map_lines();
	for (i = 1; i <= CYCLES; i++)
		failed += cycle(c->g, base + (i * 4099UL) % (4 << 20) / 8 * 8,
				8, i) != 0;
	fds1 = open_fds();
	rss1 = rss_kib();
	maps1 = map_lines();
	CHECK(failed == 0, "%d of %d cycles failed or switched contexts",
	      failed, CYCLES);
	CHECK(fds1 == fds0, "open fds %d -> %d", fds0, fds1);
	CHECK(maps1 == maps0, "mappings %d -> %d", maps0, maps1);
	/* Allow for allocator noise, not for a leak per cycle. */
	CHECK(rss1 - rss0 < 2048, "RSS grew %ld KiB over %d cycles",
	      rss1 - rss0, CYCLES);
	printf("GPU %d, %s: %d cycles: fds %d -> %d, mappings %d -> %d, RSS %ld -> %ld KiB\n",
	       c->dev, gpu_start_names[c->start], CYCLES, fds0, fds1, maps0,
	       maps1, rss0, rss1);
	LIB(gdrmap_mem_free(base), 0);
}

int main(void)
{
	return gpu_run(one_case);
}
