// SPDX-License-Identifier: MIT
/*
 * How gdrmap_copy_* choose (lib/paths/path_auto.c), with the cost of each
 * measuring copy replaced by a model of an H200 (a read through the
 * mapping ~1 µs a line-fill round trip plus ~1 GB/s, threads four times
 * that after a wake-up, DMA ~6 µs plus ~40 GB/s; a write through the
 * mapping ~0.1 µs plus ~20 GB/s; threaded writes and the staged path
 * never the best): each size class ends on the path the
 * model makes fastest; the small sizes stop being timed once a class
 * showed that the mapping wins them by far; the large ones go straight
 * to DMA; a hopeless path is dropped after two timed copies; and two
 * paths within a quarter of each other are measured on before choosing.
 */
#include <stdlib.h>

#include "copy_paths.h"
#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/path_choose.h"
#include "paths/threads.h"

#define AREA	(8UL << 20)

static int timed[GDRMAP_COPY_PATH_STAGED + 1];
static int timed_16k[GDRMAP_COPY_PATH_STAGED + 1];
static size_t mapping_64m_timed;

static uint64_t model(int path, size_t n, int to_gpu)
{
	switch (path) {
	case GDRMAP_COPY_PATH_MAPPING:
		return to_gpu ? 100 + n / 20 : 1000 + n;
	case GDRMAP_COPY_PATH_THREADS:
		return to_gpu ? 3000 + n / 20 : 1500 + n / 4;
	case GDRMAP_COPY_PATH_STAGED:
		return 20000 + n / 10;
	default:
		return 6000 + n / 40;
	}
}

static uint64_t cost(int path, size_t n, int to_gpu, uint64_t measured)
{
	(void)measured;
	timed[path]++;
	if (n == 16384 && !to_gpu)
		timed_16k[path]++;
	if (path == GDRMAP_COPY_PATH_MAPPING && !to_gpu && n >= (4 << 20))
		mapping_64m_timed++;
	return model(path, n, to_gpu);
}

/* The path the model makes fastest for n, of those that can serve it. */
static int best(size_t n, int to_gpu)
{
	int p, b = GDRMAP_COPY_PATH_MAPPING;

	for (p = 2; p <= GDRMAP_COPY_PATH_STAGED; p++)
		if ((p != GDRMAP_COPY_PATH_THREADS ||
		     (n >= 2048 && gdr_threads_helpers() > 0)) &&
		    (p != GDRMAP_COPY_PATH_STAGED ||
		     (n >= (256 << 10) && gdr_threads_helpers() > 0)) &&
		    model(p, n, to_gpu) < model(b, n, to_gpu))
			b = p;
	return b;
}

static unsigned char *host;

static int all_timed(void)
{
	int p, sum = 0;

	for (p = 1; p <= GDRMAP_COPY_PATH_STAGED; p++)
		sum += timed[p];
	return sum;
}

static void copies(gdr_mh_t mh, char *map, size_t n, int to_gpu, int times)
{
	int k;

	for (k = 0; k < times; k++)
		if (to_gpu)
			LIB(gdrmap_copy_to_mapping(mh, map, host, n), 0);
		else
			LIB(gdrmap_copy_from_mapping(mh, host, map, n), 0);
}

static void choices(gdr_mh_t mh, char *map)
{
	static const size_t sizes[] = { 8, 1024, 4096, 16384, 65536,
					1 << 20, 4 << 20 };
	size_t i;
	int dir, got, before;

	for (dir = 0; dir < 2; dir++)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			copies(mh, map, sizes[i], dir, 60);
			CHECK_RET(gdrmap_copy_path(mh, dir, sizes[i], &got), 0);
			CHECK(got == best(sizes[i], dir),
			      "%s %zu: path %d, the model's best is %d",
			      dir ? "write" : "read", sizes[i], got,
			      best(sizes[i], dir));
		}
	/* 16 KiB reads: threads (5.6 µs) and DMA (6.4 µs) are close, so
	 * both are measured on to 15 copies; the mapping is not. */
	CHECK(!gdr_threads_helpers() ||
	      (timed_16k[2] == 16 && timed_16k[3] == 16 && timed_16k[1] <= 6),
	      "a close contest measures both on: mapping %d, threads %d, dma %d",
	      timed_16k[1], timed_16k[2], timed_16k[3]);
	/* 8 bytes then 1 KiB: the mapping won by far, so everything below
	 * 2 KiB is now a mapping copy with no clock read. */
	before = all_timed();
	copies(mh, map, 100, 0, 10);
	copies(mh, map, 300, 1, 10);
	CHECK(all_timed() == before,
	      "small copies below a decided class are not timed (%d)",
	      all_timed() - before);
	CHECK_RET(gdrmap_copy_path(mh, 0, 100, &got), 0);
	CHECK(got == GDRMAP_COPY_PATH_MAPPING, "100 B read: mapping (%d)", got);
	{
		uint64_t st;
		struct gdr_region *r = gdr_region_peek(mh, &st);

		/* ... and take the inline path, the region's own threshold. */
		CHECK(r && atomic_load(&r->small_below[0]) > 100 &&
		      atomic_load(&r->small_below[1]) > 300,
		      "the small copies' threshold reached the region (%zu, %zu)",
		      r ? atomic_load(&r->small_below[0]) : 0,
		      r ? atomic_load(&r->small_below[1]) : 0);
	}
	/* 1 MiB went to DMA by far: 2 MiB is DMA without measuring. */
	before = all_timed();
	copies(mh, map, 2 << 20, 0, 3);
	CHECK(all_timed() == before,
	      "sizes above a class DMA won by far are not measured (%d)",
	      all_timed() - before);
	CHECK_RET(gdrmap_copy_path(mh, 0, 3 << 20, &got), 0);
	CHECK(got == GDRMAP_COPY_PATH_DMA, "3 MiB read: dma (%d)", got);
	CHECK(mapping_64m_timed == 0,
	      "no 4 MiB read through the mapping was measured (%zu)",
	      mapping_64m_timed);
}

/* A class measured alone: the mapping is dropped once two of its timed
 * copies were far slower than another path's, so it runs three times
 * at most (the untimed first and two timed). */
static void dropped(gdr_mh_t mh, char *map)
{
	int before = timed[1];

	copies(mh, map, (4 << 20) + 1, 0, 20);
	CHECK(timed[1] - before <= 3,
	      "a hopeless path runs three times at most (%d)",
	      timed[1] - before);
}

int main(int argc, char **argv)
{
	CUdeviceptr p;
	gdr_info_t info;
	char *map;
	gdr_mh_t mh;
	void *va = NULL;
	gdr_t g;
	int got;

	(void)argc, (void)argv;
	host = malloc(AREA);
	if (!host)
		return 1;
	memset(host, POISON, AREA);
	gdr_cuda_use_syms(&fake_syms);
	gdr_copy_auto_cost = cost;
	gdr_copy_watch_cost = no_drift;
	g = open_dmabuf();
	if (!g)
		return test_done();
	/* Two pins of two devices: each device is measured apart. */
	p = vmm_alloc(0, AREA, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	LIB(gdr_pin_buffer(g, p, AREA, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, &va, AREA), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	map = (char *)va + (p - info.va);
	CHECK_RET(gdrmap_copy_path(mh, 0, 8192, &got), 0);
	CHECK(got == GDRMAP_COPY_PATH_AUTO, "unmeasured: auto (%d)", got);
	if (va) {
		choices(mh, map);
		LIB(gdr_unmap(g, mh, va, AREA), 0);
	}
	LIB(gdr_unpin_buffer(g, mh), 0);

	p = vmm_alloc(1, AREA, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	LIB(gdr_pin_buffer(g, p, AREA, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, &va, AREA), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	map = (char *)va + (p - info.va);
	CHECK_RET(gdrmap_copy_path(mh, 0, 8, &got), 0);
	CHECK(got == GDRMAP_COPY_PATH_AUTO, "another device starts unmeasured (%d)",
	      got);
	dropped(mh, map);
	LIB(gdr_unmap(g, mh, va, AREA), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
	/* A device of its own: 8-byte writes only, then the threshold
	 * their decision set must reach the region (the inline path). */
	p = vmm_alloc(2, AREA, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	LIB(gdr_pin_buffer(g, p, AREA, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, &va, AREA), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	if (va) {
		uint64_t st;
		struct gdr_region *r = gdr_region_peek(mh, &st);

		copies(mh, (char *)va + (p - info.va), 8, 1, 40);
		CHECK(r && atomic_load(&r->small_below[1]) > 8,
		      "8-byte writes, once decided, take the inline path (%zu)",
		      r ? atomic_load(&r->small_below[1]) : 0);
		LIB(gdr_unmap(g, mh, va, AREA), 0);
	}
	LIB(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}
