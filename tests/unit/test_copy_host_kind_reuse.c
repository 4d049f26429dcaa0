// SPDX-License-Identifier: MIT
/*
 * A thread's question whether its host buffer is pinned is answered by
 * CUDA once in GDR_HOST_REUSE (64) copies of the same buffer and size,
 * not at each (lib/paths/dma.c, gdr_host_pinned_reused): CUDA takes
 * 0.12-0.40 µs to answer on an H200, a tenth of a 64 KiB write through
 * the mapping.  Both the chosen path's question (from 64 KiB) and the DMA
 * path's own (bounce buffer or not, 4-64 KiB) reuse it, for a few
 * buffers at once (double buffering); another buffer or size asks; a
 * buffer registered since is seen pinned within 64 copies, and its
 * copies then take the pinned memory's path; a copy by a path named asks
 * afresh, so the staged path refuses a buffer registered a copy ago.
 * Every copy's bytes reach the GPU, checked.
 *
 * The chosen path's cost is a model of 128 KiB writes: the mapping
 * 10 µs, DMA 5 µs from registered memory and 30 from pageable, threads
 * and the staged path hopeless.
 */
#include <stdlib.h>

#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/path_choose.h"

#define AREA	(1UL << 20)
#define N	(64UL << 10)

static unsigned char *buf, *back;
static int registered;

static uint64_t cost(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)n, (void)to_gpu, (void)ns;
	switch (path) {
	case GDRMAP_COPY_PATH_MAPPING:
		return 10000;
	case GDRMAP_COPY_PATH_DMA:
		return registered ? 5000 : 30000;
	default:
		return 200000;
	}
}

/* times writes of n bytes from host (by path; 0: the chosen one); the
 * host queries they made. */
static int writes(gdr_mh_t mh, char *map, CUdeviceptr gpu,
		  unsigned char *host, size_t n, int times, int path)
{
	static unsigned int seed = 7;
	int k, before = atomic_load(&fake_host_queries);

	pattern(host, n, ++seed);
	for (k = 0; k < times; k++)
		LIB(path ? gdrmap_copy_to_mapping_via(mh, map, host, n, path) :
			   gdrmap_copy_to_mapping(mh, map, host, n), 0);
	memset(back, POISON, n);
	CHECK(fake_gpu_rw(gpu, back, n, 0) == 0, "read the GPU side");
	CHECK(memcmp(back, host, n) == 0, "%d writes of %zu B: bytes wrong",
	      times, n);
	return atomic_load(&fake_host_queries) - before;
}

/* Writes of N bytes from two buffers in turn (double buffering), times
 * each, checked; the host queries they made. */
static int alternate(gdr_mh_t mh, char *map, CUdeviceptr gpu, int times)
{
	unsigned char *two[2] = { buf, buf + AREA / 2 };
	int k, before = atomic_load(&fake_host_queries);

	for (k = 0; k < 2 * times; k++) {
		pattern(two[k & 1], N, (unsigned int)k);
		LIB(gdrmap_copy_to_mapping(mh, map, two[k & 1], N), 0);
		memset(back, POISON, N);
		CHECK(fake_gpu_rw(gpu, back, N, 0) == 0, "read the GPU side");
		CHECK(memcmp(back, two[k & 1], N) == 0,
		      "write %d from buffer %d: bytes wrong", k, k & 1);
	}
	return atomic_load(&fake_host_queries) - before;
}

static void reuse(gdr_mh_t mh, char *map, CUdeviceptr gpu, void *arg)
{
	int asked, err, dma;

	(void)arg;
	writes(mh, map, gpu, buf, N, 100, 0);	/* the choice made */
	asked = writes(mh, map, gpu, buf, N, 640, 0);
	CHECK(asked >= 10 && asked <= 12,
	      "640 writes of 64 KiB from one pageable buffer asked CUDA %d times, not once in 64",
	      asked);
	asked = writes(mh, map, gpu, buf + 4096, N, 64, 0);
	CHECK(asked >= 1 && asked <= 2,
	      "another buffer asks again (%d times in 64)", asked);
	asked = writes(mh, map, gpu, buf, 2 * N, 100, 0);
	CHECK(asked >= 2 && asked <= 3,
	      "another size asks again (%d times in 100)", asked);
	asked = alternate(mh, map, gpu, 320);
	CHECK(asked >= 10 && asked <= 14,
	      "two buffers taking turns, 640 writes: asked CUDA %d times, not once in 64 each",
	      asked);
	CHECK(writes(mh, map, gpu, buf, N / 4, 640, GDRMAP_COPY_PATH_DMA) <=
	      12, "640 DMA writes of 16 KiB: the bounce buffer's question asked at most 12 times");

	/* Registered now: the staged path, which pinned memory does not
	 * need, refuses it at once. */
	CHECK(fake_host_register(buf, AREA) == 0, "register the buffer");
	registered = 1;
	err = gdrmap_copy_to_mapping_via(mh, map, buf, 2 * N,
					 GDRMAP_COPY_PATH_STAGED);
	CHECK(err == EOPNOTSUPP,
	      "the staged path refuses the buffer registered since (%d: %s)",
	      err, gdrmap_last_error());
	/* The chosen path sees it pinned within 64 copies and measures the
	 * pinned memory's paths: DMA (5 µs) then serves. */
	writes(mh, map, gpu, buf, 2 * N, 100, 0);
	dma = atomic_load(&fake_dma_copies);
	asked = writes(mh, map, gpu, buf, 2 * N, 128, 0);
	CHECK(atomic_load(&fake_dma_copies) - dma == 128,
	      "registered since: 128 KiB writes go by DMA (%d of 128)",
	      atomic_load(&fake_dma_copies) - dma);
	CHECK(asked >= 2 && asked <= 3,
	      "and the pinned answer serves 64 copies too (%d asked in 128)",
	      asked);
	fake_host_unregister(buf);
	registered = 0;
}

int main(int argc, char **argv)
{
	gdr_t g;

	(void)argc, (void)argv;
	buf = malloc(AREA);
	back = malloc(AREA);
	if (!buf || !back)
		return 1;
	gdr_cuda_use_syms(&fake_syms);
	gdr_copy_auto_cost = cost;
	g = open_dmabuf();
	if (!g)
		return test_done();
	on_mapped(g, 0, AREA, reuse, NULL);
	CHECK_RET(gdr_close(g), 0);
	free(buf);
	free(back);
	return owner_done();
}
