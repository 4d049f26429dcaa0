// SPDX-License-Identifier: MIT
/*
 * A decided class's rival is timed beside its choice
 * (lib/paths/path_choose.c, gdr_choose_watch_rival): some of the watched
 * copies go by the rival, and a rival found faster than the choice by
 * more than GDR_SWITCH takes its place, even where the choice itself has
 * not grown slower (which gdr_choose_watch alone would need).  A rival
 * no faster stays the rival, timed ever more rarely; one grown far
 * slower stays the rival and is timed no more.  The data of every copy,
 * by either path, is checked.
 *
 * The measuring copies' cost is a model per size (reads: DMA 8 µs, the
 * mapping 9.5, within a quarter of each other, so both measured fifteen
 * times; threads and the staged path hopeless); the watched copies' cost
 * is what each case sets for the mapping, DMA unchanged.
 */
#include <stdlib.h>

#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/path_choose.h"

#define AREA	(2UL << 20)
#define COPIES	4000

static uint64_t map_watched = 9500;	/* the mapping's cost now */
static int watched[GDRMAP_COPY_PATH_STAGED + 1];

static uint64_t measure_cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)n, (void)to_gpu, (void)ns;
	switch (path) {
	case GDRMAP_COPY_PATH_MAPPING:
		return 9500;
	case GDRMAP_COPY_PATH_DMA:
		return 8000;
	default:
		return 200000;
	}
}

static uint64_t watch_cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)n, (void)to_gpu, (void)ns;
	watched[path]++;
	return path == GDRMAP_COPY_PATH_MAPPING ? map_watched :
	       path == GDRMAP_COPY_PATH_DMA ? 8000 : 200000;
}

/*
 * Reads of n bytes until chosen (DMA over the mapping), then COPIES more
 * with the mapping's copies costing map_ns; the copies by the mapping
 * among the watched ones (the rival's turns) in *rival.
 */
static int after(gdr_mh_t mh, char *map, CUdeviceptr gpu, size_t n,
		 uint64_t map_ns, int *rival)
{
	static unsigned char host[AREA];
	int before;

	map_watched = 9500;
	checked_reads(mh, map, gpu, host, n, 40);
	CHECK(copy_path_now(mh, 0, n) == GDRMAP_COPY_PATH_DMA,
	      "%zu B: DMA (8 µs) chosen over the mapping (9.5 µs): %d", n,
	      copy_path_now(mh, 0, n));
	map_watched = map_ns;
	before = watched[GDRMAP_COPY_PATH_MAPPING];
	checked_reads(mh, map, gpu, host, n, COPIES);
	*rival = watched[GDRMAP_COPY_PATH_MAPPING] - before;
	return copy_path_now(mh, 0, n);
}

static void cases(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	int p, rival;

	(void)arg;
	/* The mapping at 6 µs: its copies at the choice were disturbed.
	 * DMA still takes what it took, so only timing the rival shows. */
	p = after(mh, map, gpu, 128UL << 10, 6000, &rival);
	CHECK(p == GDRMAP_COPY_PATH_MAPPING,
	      "128 KiB: the mapping, timed at 6 µs beside DMA's 8, takes over: %d",
	      p);
	CHECK(rival > 0, "128 KiB: the rival was timed (%d copies)", rival);

	/* The mapping at 8.5 µs, within GDR_SWITCH of DMA's 8: DMA stays,
	 * and the rival's turns thin out: 4 at each of 1 in 8, 16 and 32
	 * timed copies, then 1 in 64 (about 500 timed in 4000). */
	p = after(mh, map, gpu, 256UL << 10, 8500, &rival);
	CHECK(p == GDRMAP_COPY_PATH_DMA,
	      "256 KiB: DMA stays, the mapping (8.5 µs) not 10%% faster: %d",
	      p);
	CHECK(rival > 0 && rival * 50 < COPIES,
	      "256 KiB: the rival timed now and then, at most 1 copy in 50: %d of %d",
	      rival, COPIES);

	/* The mapping grown far slower (5x): DMA stays, and once the
	 * mapping's copies have shown it, they are timed no more. */
	p = after(mh, map, gpu, 512UL << 10, 40000, &rival);
	CHECK(p == GDRMAP_COPY_PATH_DMA,
	      "512 KiB: DMA stays, the mapping at 40 µs: %d", p);
	CHECK(rival > 0 && rival <= 8,
	      "512 KiB: the rival, lost by far, timed for one look (4 copies), not on: %d of %d",
	      rival, COPIES);
	map_watched = 9500;
}

int main(void)
{
	gdr_cuda_use_syms(&fake_syms);
	gdr_copy_auto_cost = measure_cost;
	gdr_copy_watch_cost = watch_cost;
	return run_on_mapped(AREA, cases, NULL);
}
