// SPDX-License-Identifier: MIT
/*
 * A decided size class is watched (lib/paths/path_choose.c,
 * gdr_choose_watch): one copy in GDR_WATCH_EVERY, at random, is timed, and
 * when the choice has become slower than its rival was when chosen, the
 * class is measured again and the faster path takes over.  A choice whose
 * cost holds is never measured again; and a choice that looks slower at
 * every look is measured again at doubling intervals, a few times in
 * thousands of copies, never once per look.  Copies of 1 MiB and more,
 * too few for sampling, are each timed.  Copies below 64 KiB of a class
 * the mapping won, not by far, go inline but for those the watch times,
 * which still sees the mapping slow down.  A class measured again
 * measures its choice and the rival only, never a path that lost by far.
 * (The rival's own timing, beside the choice, is test_copy_auto_rival's;
 * here it only takes the choice back once the rival is fast again.)
 * The data of every copy, watched or not, is checked.
 *
 * The measuring copies' cost is a model (128 KiB reads: DMA 8 µs, the
 * mapping 11 µs, threads and the staged path hopeless); the watched
 * copies' cost is the model times a factor the test sets.
 */
#include <stdlib.h>

#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/path_choose.h"
#include "paths/threads.h"

#define AREA	(2UL << 20)
#define N	(128UL << 10)
#define SMALL	(16UL << 10)

static uint64_t dma_ns = 8000, map_ns = 11000;
static size_t slow_a, slow_b;	/* DMA of these sizes takes 16 µs */
static int watch_factor = 1;
/* The mapping's watched copies only, times this: a rival that, timed
 * beside the choice, does not look faster (gdr_choose_watch_rival). */
static int map_watch_factor = 1;
static int measured[GDRMAP_COPY_PATH_STAGED + 1];
static int watched;

static uint64_t model(int path, size_t n)
{
	switch (path) {
	case GDRMAP_COPY_PATH_MAPPING:
		return map_ns;
	case GDRMAP_COPY_PATH_DMA:
		return n == slow_a || n == slow_b ? 16000 : dma_ns;
	default:
		return 200000;
	}
}

static uint64_t measure_cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)to_gpu, (void)ns;
	measured[path]++;
	return model(path, n);
}

static uint64_t watch_cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)to_gpu, (void)ns;
	watched++;
	return model(path, n) * (uint64_t)watch_factor *
	       (path == GDRMAP_COPY_PATH_MAPPING ? map_watch_factor : 1);
}

/* Copies of SMALL bytes that came to the choice, [to_gpu]. */
static int seen_small[2];

static void chooser_seen(size_t n, int to_gpu)
{
	if (n == SMALL)
		seen_small[to_gpu != 0]++;
}

static int all_measured(void)
{
	int p, sum = 0;

	for (p = 1; p <= GDRMAP_COPY_PATH_STAGED; p++)
		sum += measured[p];
	return sum;
}

static unsigned char host[N];

/* times reads of N bytes, the last one's bytes checked. */
static void reads(gdr_mh_t mh, char *map, CUdeviceptr gpu, int times)
{
	checked_reads(mh, map, gpu, host, N, times);
}

static int path_now(gdr_mh_t mh)
{
	return copy_path_now(mh, 0, N);
}

/* Device 0: a steady choice, then its path slows down. */
static void drift(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	int before, w, threads, mapping;

	(void)arg;
	reads(mh, map, gpu, 40);
	CHECK(path_now(mh) == GDRMAP_COPY_PATH_DMA,
	      "DMA (8 µs) is chosen over the mapping (11 µs): %d",
	      path_now(mh));
	before = all_measured();
	w = watched;
	reads(mh, map, gpu, 800);
	CHECK(all_measured() == before,
	      "a choice whose cost holds is not measured again (%d copies were)",
	      all_measured() - before);
	/* At random, one in GDR_WATCH_EVERY: 100 of 800 +- 4 sd. */
	CHECK(watched - w >= 60 && watched - w <= 140,
	      "one copy in %d is timed: %d of 800", GDR_WATCH_EVERY,
	      watched - w);

	/* DMA now takes 16 µs: past the mapping's 11 by more than a
	 * quarter, but not twice it (not a win by far).  The mapping's
	 * watched copies look slower still, so that the watch of the
	 * choice, not the rival's timing, is what reacts. */
	dma_ns = 16000;
	map_watch_factor = 2;
	before = all_measured();
	threads = measured[GDRMAP_COPY_PATH_THREADS];
	mapping = measured[GDRMAP_COPY_PATH_MAPPING];
	reads(mh, map, gpu, 3 * GDR_WATCH_EVERY * GDR_WATCH);
	CHECK(all_measured() > before,
	      "the slower choice is measured again within %d copies",
	      3 * GDR_WATCH_EVERY * GDR_WATCH);
	CHECK(measured[GDRMAP_COPY_PATH_MAPPING] > mapping,
	      "measured again, the rival (the mapping) is measured too");
	/* Threads (200 µs) lost by far at the choice: a 128 KiB copy by
	 * them would cost the caller 25 times a DMA's. */
	CHECK(gdr_threads_helpers() == 0 || threads > 0,
	      "threads were measured at the choice (%d copies)", threads);
	CHECK(measured[GDRMAP_COPY_PATH_THREADS] == threads,
	      "measured again, threads, which lost by far, are not (%d copies)",
	      measured[GDRMAP_COPY_PATH_THREADS] - threads);
	CHECK(path_now(mh) == GDRMAP_COPY_PATH_MAPPING,
	      "the mapping takes over from DMA: %d", path_now(mh));
	/* And back: DMA fast again, the mapping, now the choice, still as
	 * fast as when chosen.  Only DMA's copies timed beside it show
	 * that DMA is faster (gdr_choose_watch_rival), with no measuring. */
	map_watch_factor = 1;
	reads(mh, map, gpu, 200);
	before = all_measured();
	dma_ns = 8000;
	reads(mh, map, gpu, 800);
	CHECK(path_now(mh) == GDRMAP_COPY_PATH_DMA,
	      "DMA, timed at 8 µs beside the mapping's 11, takes back over: %d",
	      path_now(mh));
	CHECK(all_measured() == before,
	      "taking over, it is not measured again (%d copies were)",
	      all_measured() - before);
}

/* Device 1: the choice looks three times slower at every look. */
static void backoff(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	int rounds, copies = 4000;

	(void)arg;
	watch_factor = 3;
	measured[GDRMAP_COPY_PATH_MAPPING] = 0;
	reads(mh, map, gpu, copies);
	/* Each measuring round runs the mapping 1 + GDR_TRIALS times. */
	rounds = measured[GDRMAP_COPY_PATH_MAPPING] / (1 + GDR_TRIALS);
	CHECK(rounds >= 3 && rounds <= 1 + GDR_REOPEN_MAX,
	      "measured %d times in %d copies: again and again, at doubling intervals",
	      rounds, copies);
	CHECK(all_measured() * 10 < copies,
	      "measuring copies stay under a tenth of all (%d of %d)",
	      all_measured(), copies);
	CHECK(path_now(mh) == GDRMAP_COPY_PATH_DMA ||
	      path_now(mh) == GDRMAP_COPY_PATH_AUTO,
	      "the measurements still choose DMA: %d", path_now(mh));
	watch_factor = 1;
}

/*
 * A thread whose reads alternate between two sizes has both classes
 * watched, not only the one that sampling in step with the alternation
 * would land on: DMA slows for the one size, which changes path, then
 * for the other too, which changes path as well.
 */
static void alternate(gdr_mh_t mh, char *map, size_t a, size_t b)
{
	static unsigned char buf[AREA];
	int k, round, want_a, want_b;

	dma_ns = 8000;
	for (round = 0; round < 3; round++) {
		slow_a = round >= 1 ? a : 0;
		slow_b = round >= 2 ? b : 0;
		for (k = 0; k < 500; k++) {
			LIB(gdrmap_copy_from_mapping(mh, buf, map, a), 0);
			LIB(gdrmap_copy_from_mapping(mh, buf, map, b), 0);
		}
		want_a = slow_a ? GDRMAP_COPY_PATH_MAPPING : GDRMAP_COPY_PATH_DMA;
		want_b = slow_b ? GDRMAP_COPY_PATH_MAPPING : GDRMAP_COPY_PATH_DMA;
		CHECK(copy_path_now(mh, 0, a) == want_a && copy_path_now(mh, 0, b) == want_b,
		      "alternating %zu and %zu B, round %d: paths %d and %d, want %d and %d",
		      a, b, round, copy_path_now(mh, 0, a), copy_path_now(mh, 0, b), want_a,
		      want_b);
	}
	slow_a = slow_b = 0;
}

/*
 * Device 2 again: every 2 MiB copy of a watched class is timed, so DMA
 * grown slower is measured again within two looks (2 * GDR_WATCH
 * copies: a look falls every GDR_WATCH, over the last GDR_WATCH), not
 * GDR_WATCH_EVERY times as many.
 */
static void large(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	static unsigned char big[AREA];
	int before, w;

	(void)arg;
	dma_ns = 8000;
	checked_reads(mh, map, gpu, big, AREA, 40);
	CHECK(copy_path_now(mh, 0, AREA) == GDRMAP_COPY_PATH_DMA,
	      "2 MiB: DMA is chosen: %d", copy_path_now(mh, 0, AREA));
	w = watched;
	checked_reads(mh, map, gpu, big, AREA, 16);
	CHECK(watched - w == 16, "every 2 MiB copy is timed: %d of 16",
	      watched - w);
	dma_ns = 16000;
	before = all_measured();
	checked_reads(mh, map, gpu, big, AREA, 2 * GDR_WATCH);
	CHECK(all_measured() > before ||
	      copy_path_now(mh, 0, AREA) == GDRMAP_COPY_PATH_MAPPING,
	      "2 MiB DMA grown slower is measured again, or the mapping timed beside it takes over, within %d copies",
	      2 * GDR_WATCH);
	dma_ns = 8000;
}

/* times copies of SMALL bytes in direction to_gpu, the bytes checked. */
static void small_copies(gdr_mh_t mh, char *map, CUdeviceptr gpu,
			 int to_gpu, int times)
{
	static unsigned char buf[SMALL], back[SMALL];
	static unsigned int seed = 100;
	int k;

	if (!to_gpu) {
		checked_reads(mh, map, gpu, buf, SMALL, times);
		return;
	}
	pattern(buf, SMALL, ++seed);
	memset(back, POISON, SMALL);
	CHECK(fake_gpu_rw(gpu, back, SMALL, 1) == 0, "poison the GPU side");
	for (k = 0; k < times; k++)
		LIB(gdrmap_copy_to_mapping(mh, map, buf, SMALL), 0);
	memset(back, POISON, SMALL);
	CHECK(fake_gpu_rw(gpu, back, SMALL, 0) == 0, "read the GPU side");
	CHECK(memcmp(back, buf, SMALL) == 0, "%d writes of %lu B: bytes wrong",
	      times, SMALL);
}

/*
 * Device 1 again: 16 KiB copies, the mapping (11 µs) chosen over DMA (13
 * µs) but not by far, both ways.  Only the copies the watch times come to
 * the choice; the rest go straight to the mapping (the choice costs about
 * 0.1 us a copy).
 * The watch still sees the mapping grow slower, DMA takes over, and then
 * every copy comes to the choice again.
 */
static void small_mapping(gdr_mh_t mh, char *map, CUdeviceptr gpu,
			  void *arg)
{
	int dir, w, seen;
	const char *way;

	(void)arg;
	dma_ns = 13000;
	for (dir = 0; dir < 2; dir++) {
		way = dir ? "writes" : "reads";
		map_ns = 11000;
		/* A close contest: measured, then confirmed, every
		 * confirming copy timed. */
		small_copies(mh, map, gpu, dir, 40 + GDR_CONFIRM_END);
		CHECK(copy_path_now(mh, dir, SMALL) == GDRMAP_COPY_PATH_MAPPING,
		      "16 KiB %s: the mapping is chosen over DMA: %d", way,
		      copy_path_now(mh, dir, SMALL));
		w = watched;
		seen = seen_small[dir];
		small_copies(mh, map, gpu, dir, 800);
		/* One in GDR_WATCH_EVERY, at random: 100 of 800 +- 4 sd. */
		CHECK(seen_small[dir] - seen >= 60 &&
		      seen_small[dir] - seen <= 140,
		      "16 KiB %s by the mapping: %d of 800 came to the choice, not about one in %d",
		      way, seen_small[dir] - seen, GDR_WATCH_EVERY);
		CHECK(watched - w == seen_small[dir] - seen,
		      "16 KiB %s: each of them timed by the watch (%d of %d)",
		      way, watched - w, seen_small[dir] - seen);
		map_ns = 20000;
		small_copies(mh, map, gpu, dir, 3 * GDR_WATCH_EVERY * GDR_WATCH);
		CHECK(copy_path_now(mh, dir, SMALL) == GDRMAP_COPY_PATH_DMA,
		      "16 KiB %s: DMA takes over from the mapping grown slower: %d",
		      way, copy_path_now(mh, dir, SMALL));
		seen = seen_small[dir];
		small_copies(mh, map, gpu, dir, 100);
		CHECK(seen_small[dir] - seen == 100,
		      "16 KiB %s by DMA: every copy comes to the choice (%d of 100)",
		      way, seen_small[dir] - seen);
	}
	map_ns = 11000;
	dma_ns = 8000;
}

/* Device 2: alternating pairs. */
static void alternating(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	(void)gpu, (void)arg;
	alternate(mh, map, N, 2 * N);
	alternate(mh, map, 8 * N, 4 * N);
}

int main(int argc, char **argv)
{
	gdr_t g;

	(void)argc, (void)argv;
	gdr_cuda_use_syms(&fake_syms);
	gdr_copy_auto_cost = measure_cost;
	gdr_copy_watch_cost = watch_cost;
	gdr_copy_chooser_seen = chooser_seen;
	g = open_dmabuf();
	if (!g)
		return test_done();
	on_mapped(g, 0, AREA, drift, NULL);
	on_mapped(g, 1, AREA, backoff, NULL);
	on_mapped(g, 1, AREA, small_mapping, NULL);
	on_mapped(g, 2, AREA, alternating, NULL);
	on_mapped(g, 2, AREA, large, NULL);
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}
