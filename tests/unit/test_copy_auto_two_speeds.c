// SPDX-License-Identifier: MIT
/*
 * A path whose copies come at two speeds (lib/paths/path_choose.c,
 * close_contest): an H100's copy engine wrote 1 MiB in 28 µs or in 51,
 * about half each, where threads took 31 every time.  Its first quartile
 * was the fast speed and won, and the copies' median was 1.6 times the
 * threads'.  Such a path must win only where its typical copy is the
 * fastest: a DMA fast two copies in five loses to a steady mapping a
 * little slower than its fast copies; fast three in five, it wins.  Once
 * chosen, the choice holds.  The data of every copy is checked.
 *
 * The copies' cost is a model (128 KiB reads: the mapping 31 µs, DMA 28
 * or 51 µs in a fixed pattern, threads and the staged path hopeless).
 */
#include <stdlib.h>
#include <string.h>

#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/path_choose.h"

#define AREA	(1UL << 20)
#define N	(128UL << 10)

static int fast_in_five;	/* DMA copies at 28 µs, of every five */
static const char *order;	/* or in this order, over and over: 'f' fast */
static unsigned int dma_copies;

static int dma_fast(void)
{
	unsigned int k = dma_copies++;

	return order ? order[k % strlen(order)] == 'f' :
		       k % 5 < (unsigned int)fast_in_five;
}

static uint64_t cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)n, (void)to_gpu, (void)ns;
	switch (path) {
	case GDRMAP_COPY_PATH_MAPPING:
		return 31000;
	case GDRMAP_COPY_PATH_DMA:
		return dma_fast() ? 28000 : 51000;
	default:
		return 200000;
	}
}

static unsigned char host[N];

/* times reads of N bytes, the last one's bytes checked. */
static void reads(gdr_mh_t mh, char *map, CUdeviceptr gpu, int times)
{
	checked_reads(mh, map, gpu, host, N, times);
}

static int path_now(gdr_mh_t mh)
{
	int got = -1;

	CHECK_RET(gdrmap_copy_path(mh, 0, N, &got), 0);
	return got;
}

/* On a device of its own (a tune of its own): DMA fast *arg copies in
 * five; the class must choose want_for[*arg]. */
static const int want_for[5] = {
	[2] = GDRMAP_COPY_PATH_MAPPING, [3] = GDRMAP_COPY_PATH_DMA,
};

static void two_speeds(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	int fast = *(const int *)arg, want = want_for[fast];

	fast_in_five = fast;
	dma_copies = 0;
	reads(mh, map, gpu, 60);
	CHECK(path_now(mh) == want,
	      "DMA fast %d copies in 5 (28 or 51 µs), the mapping 31 µs: path %d, want %d",
	      fast, path_now(mh), want);
	reads(mh, map, gpu, 800);
	CHECK(path_now(mh) == want,
	      "DMA fast %d in 5: the choice holds over 800 copies (path %d)",
	      fast, path_now(mh));
}

/*
 * Device 2: DMA fast six copies in ten, in runs (ffffffssss).  Fifteen
 * copies in a row hold eight fast ones or more, so DMA is chosen; eight
 * in a row from half the places in the run hold four, and a slow median.
 * A look at the choice's median alone would give the class to the
 * mapping at about every other look; its fast copies (first quartile)
 * keep it.
 */
static void runs(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	static int three = 3;

	(void)arg;
	order = "ffffffssss";
	two_speeds(mh, map, gpu, &three);
	order = NULL;
}

int main(int argc, char **argv)
{
	static int two = 2, three = 3;
	gdr_t g;

	(void)argc, (void)argv;
	gdr_cuda_use_syms(&fake_syms);
	gdr_copy_auto_cost = cost;
	gdr_copy_watch_cost = cost;
	g = open_dmabuf();
	if (!g)
		return test_done();
	on_mapped(g, 0, AREA, two_speeds, &two);
	on_mapped(g, 1, AREA, two_speeds, &three);
	on_mapped(g, 2, AREA, runs, NULL);
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}
