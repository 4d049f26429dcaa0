// SPDX-License-Identifier: MIT
/*
 * gdrmap_copy_* (lib/paths/path_auto.c) on the fake CUDA: at every size, both
 * directions, whatever path the measuring picks, every byte arrives and
 * nothing around it changes; each forced path moves the right bytes or
 * is refused with nothing copied; the choice settles once measured; a
 * pin whose memory was freed is never served by DMA (which would reach
 * whatever is at the address now); copy-only pins copy by DMA only; and
 * threaded copies from several threads at once stay exact.
 */
#include <pthread.h>
#include <stdlib.h>

#include "copy_paths.h"
#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/threads.h"

#define AREA	(4UL << 20)	/* the part of the allocation used */
#define SLACK	64		/* poisoned bytes either side */

static unsigned char *data, *back, *gpu;

/* Check the GPU's view of [base, +AREA): the n bytes at off are
 * want, everything else POISON. */
static int gpu_is(CUdeviceptr base, size_t off, const unsigned char *want,
		  size_t n)
{
	size_t i, lo = off > SLACK ? off - SLACK : 0;
	size_t hi = off + n + SLACK < AREA ? off + n + SLACK : AREA;
	int bad = 0;

	if (fake_gpu_rw(base + lo, gpu, hi - lo, 0))
		return -1;
	for (i = lo; i < hi; i++)
		bad += gpu[i - lo] != (i >= off && i < off + n ?
				       want[i - off] : POISON);
	return bad;
}

static void poison_gpu(CUdeviceptr base)
{
	memset(gpu, POISON, AREA);
	CHECK(fake_gpu_rw(base, gpu, AREA, 1) == 0, "poison the GPU side");
}

/* Does path refuse n bytes from and to malloc memory (pageable)? */
static int refused(int path, size_t n)
{
	return copy_path_refused(path, n, 0, gdr_threads_helpers() > 0);
}

/* One write and one read of n bytes at off through path (AUTO: the
 * best-path calls), checked byte by byte; returns nonzero on a wrong
 * byte. */
static int round_trip(gdr_mh_t mh, char *map, CUdeviceptr base, size_t off,
		      size_t n, int path, unsigned int seed)
{
	int bad, err;

	poison_gpu(base);
	pattern(data, n, seed);
	err = path ? gdrmap_copy_to_mapping_via(mh, map + off, data, n, path) :
		     gdrmap_copy_to_mapping(mh, map + off, data, n);
	if (refused(path, n)) {
		CHECK(err == EOPNOTSUPP, "path %d refuses a write of %zu (%d)",
		      path, n, err);
		CHECK(gpu_is(base, off, data, 0) == 0,
		      "a refused write changed nothing");
	} else {
		CHECK(err == 0, "write %zu at %zu by path %d: %d", n, off,
		      path, err);
		bad = gpu_is(base, off, data, n);
		CHECK(bad == 0, "write %zu at %zu by path %d: %d bytes wrong",
		      n, off, path, bad);
		if (err || bad)
			return 1;
	}
	pattern(data, n, seed + 1);
	CHECK(fake_gpu_rw(base + off, data, n, 1) == 0, "write the GPU side");
	memset(back, POISON, n + 2 * SLACK);
	err = path ? gdrmap_copy_from_mapping_via(mh, back + SLACK, map + off,
						  n, path) :
		     gdrmap_copy_from_mapping(mh, back + SLACK, map + off, n);
	if (refused(path, n)) {
		CHECK(err == EOPNOTSUPP, "path %d refuses a read of %zu (%d)",
		      path, n, err);
		return 0;
	}
	CHECK(err == 0, "read %zu at %zu by path %d: %d", n, off, path, err);
	bad = memcmp(back + SLACK, data, n) != 0;
	for (size_t i = 0; i < SLACK; i++)
		bad |= back[i] != POISON || back[SLACK + n + i] != POISON;
	CHECK(!bad, "read %zu at %zu by path %d: wrong bytes", n, off, path);
	return err || bad;
}

static const size_t sizes[] = {
	1, 7, 8, 63, 64, 65, 1000, 2048, 4099, 65536 + 3, 300000, 1 << 20,
	(3 << 20) + 5,
};

static void every_size(gdr_mh_t mh, char *map, CUdeviceptr base,
		       const char *what)
{
	size_t i, off;
	int path, k, got, got2, settled = 1;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		off = (i * 4099) % 4096;
		if (off + sizes[i] > AREA - SLACK)
			off = 0;
		/* Enough copies to go through the measuring and beyond. */
		for (k = 0; k < 48; k++)
			if (round_trip(mh, map, base, off, sizes[i], 0,
				       (unsigned int)(i * 100 + k)))
				break;
		for (path = 1; path <= GDRMAP_COPY_PATH_STAGED; path++)
			round_trip(mh, map, base, off, sizes[i], path,
				   (unsigned int)(i * 100 + 50 + path));
		/* Settled, or measuring again and settling (COPY_SETTLE). */
		for (k = 0; k <= COPY_SETTLE; k++) {
			CHECK_RET(gdrmap_copy_path(mh, 0, sizes[i], &got), 0);
			CHECK_RET(gdrmap_copy_path(mh, 1, sizes[i], &got2), 0);
			if ((got && got2) || k == COPY_SETTLE)
				break;
			if (round_trip(mh, map, base, off, sizes[i], 0,
				       (unsigned int)(i * 100 + k)))
				break;
		}
		settled &= got >= GDRMAP_COPY_PATH_MAPPING &&
			   got <= GDRMAP_COPY_PATH_STAGED &&
			   !refused(got, sizes[i]) &&
			   got2 >= GDRMAP_COPY_PATH_MAPPING &&
			   got2 <= GDRMAP_COPY_PATH_STAGED &&
			   !refused(got2, sizes[i]);
	}
	CHECK(settled, "%s: every size has a path once measured", what);
}

/* Pin and map [p, +AREA) of a fresh allocation. */
static char *pin_map(gdr_t g, CUdeviceptr p, gdr_mh_t *mh, void **va)
{
	gdr_info_t info;

	*va = NULL;
	LIB(gdr_pin_buffer(g, p, AREA, 0, 0, mh), 0);
	LIB(gdr_map(g, *mh, va, AREA), 0);
	LIB(gdr_get_info(g, *mh, &info), 0);
	return *va ? (char *)*va + (p - info.va) : NULL;
}

struct reader {
	gdr_mh_t mh;
	char *map;
	CUdeviceptr base;
	size_t off;
	int bad;
};

static void *read_many(void *arg)
{
	struct reader *rd = arg;
	unsigned char *want = malloc(65536), *got = malloc(65536);
	int k;

	if (!want || !got) {
		rd->bad = 1;
		goto out;
	}
	if (fake_gpu_rw(rd->base + rd->off, want, 65536, 0)) {
		rd->bad = 1;
		goto out;
	}
	for (k = 0; k < 200; k++) {
		memset(got, POISON, 65536);
		if (gdrmap_copy_from_mapping_via(rd->mh, got,
						 rd->map + rd->off, 65536,
						 k % 2 && gdr_threads_helpers() ?
						 GDRMAP_COPY_PATH_THREADS :
						 GDRMAP_COPY_PATH_AUTO) ||
		    memcmp(got, want, 65536))
			rd->bad++;
	}
out:
	free(want);
	free(got);
	return NULL;
}

/* Four threads reading at once: the helpers serve one of them at a time,
 * the others read by themselves; every read exact. */
static void concurrent_reads(gdr_mh_t mh, char *map, CUdeviceptr base)
{
	struct reader rd[4];
	pthread_t t[4];
	int i, bad = 0;

	pattern(data, AREA, 77);
	CHECK(fake_gpu_rw(base, data, AREA, 1) == 0, "fill the GPU side");
	for (i = 0; i < 4; i++) {
		rd[i] = (struct reader){ mh, map, base, (size_t)i * 70001, 0 };
		pthread_create(&t[i], NULL, read_many, &rd[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		bad += rd[i].bad;
	}
	CHECK(bad == 0, "%d of 800 concurrent reads wrong", bad);
}

/* Legacy memory freed under a mapped (dmabuf) pin: DMA would reach the
 * address, no longer the pinned memory; so the dma path is refused and
 * the best-path calls keep using the mapping, which still holds it. */
static void freed_under_pin(gdr_t g)
{
	CUdeviceptr p = legacy_alloc(0, AREA), q = 0;
	gdr_mh_t mh;
	void *va;
	char *map = pin_map(g, p, &mh, &va);
	int dma_before, got, k;

	if (!map)
		return;
	pattern(data, 4096, 5);
	LIB(gdrmap_copy_to_mapping(mh, map, data, 4096), 0);
	fake_ctx_create(0, 2);
	CHECK(fake_MemFree(p) == CUDA_SUCCESS, "free under the pin");
	/* New memory, likely at the same address. */
	CHECK(fake_MemAlloc(&q, AREA) == CUDA_SUCCESS, "allocate again");
	fake_cur = NULL;
	poison_gpu(q);
	CHECK_RET(gdrmap_copy_from_mapping_via(mh, back, map, 4096,
					       GDRMAP_COPY_PATH_DMA),
		  EOPNOTSUPP);
	dma_before = atomic_load(&fake_dma_copies);
	for (k = 0; k < 30; k++) {
		pattern(data, 4096, 6 + k);
		LIB(gdrmap_copy_to_mapping(mh, map, data, 4096), 0);
		memset(back, POISON, 4096);
		LIB(gdrmap_copy_from_mapping(mh, back, map, 4096), 0);
		if (memcmp(back, data, 4096))
			break;
	}
	CHECK(k == 30, "the freed pin's memory still round-trips");
	CHECK(atomic_load(&fake_dma_copies) == dma_before,
	      "no DMA for a freed pin (%d)",
	      atomic_load(&fake_dma_copies) - dma_before);
	CHECK(gpu_is(q, 0, data, 0) == 0,
	      "the new memory at the address was not touched");
	CHECK_RET(gdrmap_copy_path(mh, 1, 1 << 20, &got), 0);
	CHECK(got != GDRMAP_COPY_PATH_DMA, "no DMA reported for a freed pin");
	LIB(gdr_unmap(g, mh, va, AREA), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
	fake_ctx_create(0, 2);
	fake_MemFree(q);
	fake_cur = NULL;
}

/* cuMemAlloc memory under vulkan is pinned copy-only: DMA serves it,
 * the mapping paths are refused. */
static void copy_only(gdr_t g)
{
	CUdeviceptr p = legacy_alloc(2, AREA);
	gdr_mh_t mh;
	void *va;
	char *map = pin_map(g, p, &mh, &va);
	int got, dma_before = atomic_load(&fake_dma_copies);

	if (!map)
		return;
	round_trip(mh, map, p, 100, 5000, 0, 9);
	round_trip(mh, map, p, 100, 5000, GDRMAP_COPY_PATH_DMA, 10);
	CHECK(atomic_load(&fake_dma_copies) - dma_before == 4,
	      "copy-only: 4 copies by DMA (%d)",
	      atomic_load(&fake_dma_copies) - dma_before);
	CHECK_RET(gdrmap_copy_to_mapping_via(mh, map, data, 8,
					     GDRMAP_COPY_PATH_MAPPING),
		  EOPNOTSUPP);
	CHECK_RET(gdrmap_copy_from_mapping_via(mh, back, map, 4096,
					       GDRMAP_COPY_PATH_THREADS),
		  EOPNOTSUPP);
	CHECK_RET(gdrmap_copy_path(mh, 0, 8, &got), 0);
	CHECK(got == GDRMAP_COPY_PATH_DMA, "copy-only reports dma (%d)", got);
	LIB(gdr_unmap(g, mh, va, AREA), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
}

static void bad_input(gdr_mh_t mh, char *map)
{
	gdr_mh_t none = { 0 };
	int got = -1;

	CHECK_RET(gdrmap_copy_to_mapping(mh, map, data, 0), 0);
	CHECK_RET(gdrmap_copy_to_mapping(none, map, data, 8), EINVAL);
	CHECK_RET(gdrmap_copy_from_mapping(mh, NULL, map, 8), EINVAL);
	CHECK_RET(gdrmap_copy_from_mapping(mh, back, map - 1, 8), EINVAL);
	CHECK_RET(gdrmap_copy_to_mapping(mh, map + AREA - 4, data, 8), EINVAL);
	CHECK_RET(gdrmap_copy_to_mapping_via(mh, map, data, 8, 5), EINVAL);
	CHECK_RET(gdrmap_copy_to_mapping_via(mh, map, data, 8, -1), EINVAL);
	CHECK(strstr(gdrmap_last_error(), "GDRMAP_COPY_PATH_") != NULL,
	      "a bad path is named: %s", gdrmap_last_error());
	CHECK_RET(gdrmap_copy_path(none, 0, 8, &got), EINVAL);
	CHECK_RET(gdrmap_copy_path(mh, 0, 8, NULL), EINVAL);
}

int main(void)
{
	CUdeviceptr p;
	char why[512], *map;
	gdr_mh_t mh;
	void *va;
	gdr_t g;
	int err = 0;

	data = malloc(AREA);
	back = malloc(AREA + 2 * SLACK);
	gpu = malloc(AREA);
	if (!data || !back || !gpu)
		return 1;
	gdr_cuda_use_syms(&fake_syms);
	g = open_dmabuf();
	if (g) {
		p = vmm_alloc(1, AREA, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
		map = pin_map(g, p, &mh, &va);
		if (map) {
			bad_input(mh, map);
			every_size(mh, map, p, "dmabuf, VMM");
			concurrent_reads(mh, map, p);
			LIB(gdr_unmap(g, mh, va, AREA), 0);
			LIB(gdr_unpin_buffer(g, mh), 0);
		}
		freed_under_pin(g);
		CHECK_RET(gdr_close(g), 0);
	}
	g = gdr_open_backend(&gdr_backend_vulkan, why, sizeof(why), &err);
	CHECK(g != NULL, "vulkan opens: %s", why);
	if (g) {
		copy_only(g);
		CHECK_RET(gdr_close(g), 0);
	}
	return owner_done();
}
