// SPDX-License-Identifier: MIT
/*
 * A close contest's choice is confirmed soon (lib/paths/path_choose.c,
 * decide and gdr_choose_watch_rival): its next GDR_CONFIRM_AFTER copies
 * are each timed, by the choice alone, and the GDR_CONFIRM after them by
 * the choice and its rival in turn, which make the first two looks.  On
 * an H200 the first copies of a contest caught the loser at 1.4 times
 * what it took in the table after (8 MiB pageable writes: the staged path
 * 307 µs at the choice, 218 in the table, threads chosen at 264); the
 * rival's first look came after about 256 copies of the class, and a
 * table makes 200.  And the copies just after a choice were slow by
 * whichever path (4 MiB pageable writes by the staged path: a median of
 * 164-209 µs over the first four after it, 137-154 over the next).
 *
 * - A loser measured slow at the contest and faster by far since serves
 *   the class GDR_CONFIRM_END copies after the choice.
 * - A choice whose rival is as slow as at the contest holds, and its
 *   copies are timed one in GDR_WATCH_EVERY again after the confirming
 *   ones.
 * - A rival faster at one look and slower at the next, over and over,
 *   never takes over: a switch needs two looks in a row that agree.
 * - A choice whose first 6 copies after the choice are 1.6 times as
 *   slow as the rest holds: neither the rival nor measuring again takes
 *   the class from it on those copies.
 *
 * The measuring copies' cost is a model (reads: the mapping 9.5 µs, DMA
 * 10.5, within a quarter of each other, so both are measured fifteen
 * times and the mapping wins; threads and the staged path hopeless); the
 * watched copies' cost is what each case sets.  The data of every copy
 * is checked.
 */
#include <stdlib.h>

#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/path_choose.h"

#define AREA	(1UL << 20)

/* DMA's watched copies: dma_now, or every GDR_RIVAL of them at 7 µs
 * then GDR_RIVAL at 14, over and over (flip).  The mapping's: 9.5 µs,
 * 15.2 for its first 6 from slow_from on (slow_from >= 0). */
static uint64_t dma_now = 10500;
static int flip, slow_from = -1;
static int watched[GDRMAP_COPY_PATH_STAGED + 1];

static uint64_t measure_cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)n, (void)to_gpu, (void)ns;
	switch (path) {
	case GDRMAP_COPY_PATH_MAPPING:
		return 9500;
	case GDRMAP_COPY_PATH_DMA:
		return 10500;
	default:
		return 200000;
	}
}

static uint64_t watch_cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	int k = watched[path]++;

	(void)n, (void)to_gpu, (void)ns;
	if (path == GDRMAP_COPY_PATH_MAPPING)
		return slow_from >= 0 && k >= slow_from && k < slow_from + 6 ?
		       15200 : 9500;
	if (path != GDRMAP_COPY_PATH_DMA)
		return 200000;
	if (flip)
		return k / GDR_RIVAL % 2 ? 14000 : 7000;
	return dma_now;
}

static int timed(void)
{
	int p, sum = 0;

	for (p = 1; p <= GDRMAP_COPY_PATH_STAGED; p++)
		sum += watched[p];
	return sum;
}

static unsigned char host[AREA];

/* Reads of n bytes, one at a time, until the class is decided; the
 * mapping must win it.  0 if it did. */
static int until_chosen(gdr_mh_t mh, const char *map, CUdeviceptr gpu,
			size_t n)
{
	int k;

	for (k = 0; k < 200 && copy_path_now(mh, 0, n) == GDRMAP_COPY_PATH_AUTO; k++)
		checked_reads(mh, map, gpu, host, n, 1);
	CHECK(copy_path_now(mh, 0, n) == GDRMAP_COPY_PATH_MAPPING,
	      "%zu B: the mapping (9.5 µs) wins the close contest with DMA (10.5): %d",
	      n, copy_path_now(mh, 0, n));
	return copy_path_now(mh, 0, n) != GDRMAP_COPY_PATH_MAPPING;
}

static void cases(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	size_t n = 128UL << 10;
	int dma, all, k;

	(void)arg;
	/* DMA was slow at the contest; it takes 7 µs now. */
	if (until_chosen(mh, map, gpu, n))
		return;
	dma_now = 7000;
	dma = watched[GDRMAP_COPY_PATH_DMA];
	all = timed();
	checked_reads(mh, map, gpu, host, n, GDR_CONFIRM_AFTER);
	CHECK(timed() - all == GDR_CONFIRM_AFTER &&
	      watched[GDRMAP_COPY_PATH_DMA] == dma,
	      "128 KiB: the %d copies after the choice are each timed, none by the rival: %d timed, %d by DMA",
	      GDR_CONFIRM_AFTER, timed() - all,
	      watched[GDRMAP_COPY_PATH_DMA] - dma);
	checked_reads(mh, map, gpu, host, n, GDR_CONFIRM);
	CHECK(timed() - all == GDR_CONFIRM_END,
	      "128 KiB: each confirming copy is timed: %d of %d",
	      timed() - all, GDR_CONFIRM_END);
	CHECK(watched[GDRMAP_COPY_PATH_DMA] - dma == GDR_CONFIRM / 2,
	      "128 KiB: every other one of the last %d by the rival: %d",
	      GDR_CONFIRM, watched[GDRMAP_COPY_PATH_DMA] - dma);
	CHECK(copy_path_now(mh, 0, n) == GDRMAP_COPY_PATH_DMA,
	      "128 KiB: DMA, 7 µs beside the mapping's 9.5, serves the class %d copies after the choice: %d",
	      GDR_CONFIRM_END, copy_path_now(mh, 0, n));

	/* DMA as slow as at the contest: the mapping holds, and the
	 * confirming over, one copy in GDR_WATCH_EVERY is timed. */
	n = 256UL << 10;
	dma_now = 10500;
	if (until_chosen(mh, map, gpu, n))
		return;
	checked_reads(mh, map, gpu, host, n, GDR_CONFIRM_END);
	all = timed();
	checked_reads(mh, map, gpu, host, n, 800);
	CHECK(copy_path_now(mh, 0, n) == GDRMAP_COPY_PATH_MAPPING,
	      "256 KiB: the mapping holds, DMA as slow as at the contest: %d",
	      copy_path_now(mh, 0, n));
	/* At random, one in GDR_WATCH_EVERY: 100 of 800 +- 4 sd. */
	CHECK(timed() - all >= 60 && timed() - all <= 140,
	      "256 KiB: confirmed, one copy in %d is timed again: %d of 800",
	      GDR_WATCH_EVERY, timed() - all);

	/* DMA at 7 µs for one look, 14 at the next, over and over. */
	n = 512UL << 10;
	if (until_chosen(mh, map, gpu, n))
		return;
	flip = 1;
	watched[GDRMAP_COPY_PATH_DMA] = 0;
	checked_reads(mh, map, gpu, host, n, 4000);
	CHECK(copy_path_now(mh, 0, n) == GDRMAP_COPY_PATH_MAPPING,
	      "512 KiB: the mapping holds against DMA fast at every other look (%d of its copies timed): %d",
	      watched[GDRMAP_COPY_PATH_DMA], copy_path_now(mh, 0, n));
	CHECK(watched[GDRMAP_COPY_PATH_DMA] >= 4 * GDR_RIVAL,
	      "512 KiB: DMA was looked at four times or more: %d copies",
	      watched[GDRMAP_COPY_PATH_DMA]);
	flip = 0;

	/* The mapping slow for its first 6 copies after the choice. */
	n = 1UL << 20;
	dma_now = 10500;
	if (until_chosen(mh, map, gpu, n))
		return;
	slow_from = watched[GDRMAP_COPY_PATH_MAPPING];
	for (k = 0; k < 400; k++) {
		checked_reads(mh, map, gpu, host, n, 1);
		if (copy_path_now(mh, 0, n) != GDRMAP_COPY_PATH_MAPPING)
			break;
	}
	CHECK(k == 400,
	      "1 MiB: the mapping, slow for 6 copies after the choice and 9.5 µs after, holds against DMA's 10.5: path %d after %d copies",
	      copy_path_now(mh, 0, n), k + 1);
	slow_from = -1;
}

int main(void)
{
	gdr_cuda_use_syms(&fake_syms);
	gdr_copy_auto_cost = measure_cost;
	gdr_copy_watch_cost = watch_cost;
	return run_on_mapped(AREA, cases, NULL);
}
