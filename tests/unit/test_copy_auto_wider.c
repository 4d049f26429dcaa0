// SPDX-License-Identifier: MIT
/*
 * A class that DMA wins by far decides every larger size (the dma_from
 * shortcut, lib/paths/path_choose.c) only where no larger size has a
 * path this class had not: from pageable memory the staged path serves
 * copies from 256 KiB, so DMA winning 64 KiB reads by far must not keep
 * it from being measured at 1 MiB, where it is three times faster.  On
 * an H200, 64 KiB pageable reads went to DMA at 16 µs, threads 29, the
 * mapping 97; 64 MiB reads then went to DMA at 5.0 ms where the staged
 * path took 1.6.  Where the larger sizes have no new path (pinned
 * memory: nothing is staged), the shortcut still holds.  Every byte read
 * is checked.
 *
 * The copies' cost is a model: reads by the mapping 1000 + n ns, threads
 * hopeless, DMA 6000 + n / 14 (CUDA's staging) or + n / 50 (pinned), the
 * staged path 3000 + n / 40.
 */
#include <stdlib.h>

#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/path_choose.h"
#include "paths/threads.h"

#define AREA	(2UL << 20)

static int pinned_now;
static int measured_at_1m[GDRMAP_COPY_PATH_STAGED + 1];

static uint64_t cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)to_gpu, (void)ns;
	if (n == (1UL << 20))
		measured_at_1m[path]++;
	switch (path) {
	case GDRMAP_COPY_PATH_MAPPING:
		return 1000 + n;
	case GDRMAP_COPY_PATH_STAGED:
		return 3000 + n / 40;
	case GDRMAP_COPY_PATH_DMA:
		return 6000 + n / (pinned_now ? 50 : 14);
	default:
		return 2000000;
	}
}

static int path_host(gdr_mh_t mh, const void *host, size_t n)
{
	int got = -1;

	CHECK_RET(gdrmap_copy_path_host(mh, 0, host, n, &got), 0);
	return got;
}

static void reads(gdr_mh_t mh, char *map, CUdeviceptr gpu,
		  unsigned char *host)
{
	size_t n;

	for (n = 64UL << 10; n <= (1UL << 20); n <<= 1)
		checked_reads(mh, map, gpu, host, n, 60);
}

static void pageable(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	unsigned char *host = malloc(AREA);

	(void)arg;
	CHECK(host != NULL, "%lu bytes of host memory", AREA);
	if (!host)
		return;
	pinned_now = 0;
	reads(mh, map, gpu, host);
	CHECK(path_host(mh, host, 64UL << 10) == GDRMAP_COPY_PATH_DMA,
	      "pageable 64 KiB reads: DMA (10.7 µs, the mapping 67): %d",
	      path_host(mh, host, 64UL << 10));
	CHECK(measured_at_1m[GDRMAP_COPY_PATH_STAGED] > 0,
	      "pageable 1 MiB reads: the staged path, which smaller copies could not take, is measured (%d copies)",
	      measured_at_1m[GDRMAP_COPY_PATH_STAGED]);
	CHECK(path_host(mh, host, 1UL << 20) == GDRMAP_COPY_PATH_STAGED,
	      "pageable 1 MiB reads: the staged path (29 µs, DMA 81): %d",
	      path_host(mh, host, 1UL << 20));
	free(host);
}

static void pinned(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	unsigned char *host = NULL;

	(void)arg;
	fake_enter_start(START_OWN_PRIMARY, 1);
	CHECK(fake_syms.mem.MemHostAlloc((void **)&host, AREA, 0) ==
	      CUDA_SUCCESS, "%lu bytes of pinned memory", AREA);
	if (!host) {
		fake_leave_start(START_OWN_PRIMARY, 1);
		return;
	}
	pinned_now = 1;
	measured_at_1m[GDRMAP_COPY_PATH_DMA] = 0;
	reads(mh, map, gpu, host);
	CHECK(path_host(mh, host, 1UL << 20) == GDRMAP_COPY_PATH_DMA,
	      "pinned 1 MiB reads: DMA: %d", path_host(mh, host, 1UL << 20));
	CHECK(measured_at_1m[GDRMAP_COPY_PATH_DMA] == 0,
	      "pinned 1 MiB reads: decided by the class DMA won by far, not measured (%d copies)",
	      measured_at_1m[GDRMAP_COPY_PATH_DMA]);
	fake_syms.mem.MemFreeHost(host);
	fake_leave_start(START_OWN_PRIMARY, 1);
}

int main(int argc, char **argv)
{
	gdr_t g;

	(void)argc, (void)argv;
	gdr_cuda_use_syms(&fake_syms);
	gdr_copy_auto_cost = cost;
	g = open_dmabuf();
	if (!g)
		return test_done();
	if (gdr_threads_helpers() <= 0) {
		SKIP("no helper threads here (one CPU): no staged path");
		CHECK_RET(gdr_close(g), 0);
		return test_done();
	}
	on_mapped(g, 0, AREA, pageable, NULL);
	on_mapped(g, 1, AREA, pinned, NULL);
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}
