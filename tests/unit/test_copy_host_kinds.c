// SPDX-License-Identifier: MIT
/*
 * gdrmap_copy_* per kind of host buffer (lib/paths/path_auto.c): with a model
 * of the paths in which DMA from pinned memory is fast and CUDA's own
 * staging of pageable memory slow, large copies from pinned memory end on
 * DMA and from pageable memory on the staged path, each kind measured on
 * its own; small copies never ask CUDA what the host memory is; a buffer
 * only partly registered counts as pageable; the staged path refuses
 * pinned memory, saying why; the staged path moves every byte right
 * both ways, at sizes that end mid-chunk and at odd offsets; and a DMA
 * copy asks CUDA once what its host buffer is and once about the GPU
 * memory, forced or chosen.
 */
#include <stdlib.h>

#include "copy_paths.h"
#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/path_choose.h"
#include "paths/threads.h"

#define AREA	(16UL << 20)
#define SLACK	64

/* What the model's host buffer is: set before each burst of copies. */
static int pinned_now;

static uint64_t model(int path, size_t n, int to_gpu)
{
	switch (path) {
	case GDRMAP_COPY_PATH_MAPPING:
		return to_gpu ? 100 + n / 20 : 1000 + n;
	case GDRMAP_COPY_PATH_THREADS:
		return to_gpu ? 3000 + n / 20 : 1500 + n / 4;
	case GDRMAP_COPY_PATH_STAGED:
		return 9000 + n / 35;
	default:
		return 6000 + n / (pinned_now ? 50 : 14);
	}
}

static uint64_t cost(int path, size_t n, int to_gpu, uint64_t measured)
{
	(void)measured;
	return model(path, n, to_gpu);
}

static unsigned char *pageable, *pinned, *back;

static void copies(gdr_mh_t mh, char *map, unsigned char *host, size_t n,
		   int to_gpu, int times)
{
	int k;

	for (k = 0; k < times; k++)
		if (to_gpu)
			LIB(gdrmap_copy_to_mapping(mh, map, host, n), 0);
		else
			LIB(gdrmap_copy_from_mapping(mh, host, map, n), 0);
}

/*
 * A copy the choice sends by DMA asks CUDA about the GPU memory once, as
 * a forced one does (dma_asks_once), bytes checked.
 */
static void chosen_dma_asks_once(gdr_mh_t mh, char *map, CUdeviceptr gpu,
				 int to_gpu)
{
	size_t n = 4 << 20;
	int before;

	pattern(back, n, 40u + (unsigned int)to_gpu);
	if (to_gpu) {
		memcpy(pinned, back, n);
		memset(back, POISON, n);
		CHECK(fake_gpu_rw(gpu, back, n, 1) == 0, "poison the GPU side");
	} else {
		CHECK(fake_gpu_rw(gpu, back, n, 1) == 0, "fill the GPU side");
		memset(pinned, POISON, n);
	}
	before = atomic_load(&fake_device_queries);
	copies(mh, map, pinned, n, to_gpu, 1);
	CHECK(atomic_load(&fake_device_queries) - before == 1,
	      "a chosen 4 MiB DMA %s asked CUDA about the GPU memory %d times",
	      to_gpu ? "write" : "read",
	      atomic_load(&fake_device_queries) - before);
	if (to_gpu) {
		memset(back, POISON, n);
		CHECK(fake_gpu_rw(gpu, back, n, 0) == 0, "read the GPU side");
	}
	CHECK(memcmp(back, pinned, n) == 0, "a chosen 4 MiB DMA %s: bytes wrong",
	      to_gpu ? "write" : "read");
}

/* Large copies: DMA from pinned memory, staged from pageable. */
static void choices(gdr_mh_t mh, char *map, CUdeviceptr gpu)
{
	int dir, got, staged;
	size_t n = 4 << 20;

	for (dir = 0; dir < 2; dir++) {
		/* Without helpers: the model's best of mapping and DMA. */
		staged = gdr_threads_helpers() > 0 ? GDRMAP_COPY_PATH_STAGED :
			 dir ? GDRMAP_COPY_PATH_MAPPING : GDRMAP_COPY_PATH_DMA;
		pinned_now = 1;
		copies(mh, map, pinned, n, dir, 60);
		pinned_now = 0;
		copies(mh, map, pageable, n, dir, 60);
		CHECK_RET(gdrmap_copy_path_host(mh, dir, pinned, n, &got), 0);
		CHECK(got == GDRMAP_COPY_PATH_DMA,
		      "%s 4 MiB, pinned memory: dma (%d)",
		      dir ? "write" : "read", got);
		CHECK_RET(gdrmap_copy_path_host(mh, dir, pageable, n, &got),
			  0);
		CHECK(got == staged, "%s 4 MiB, pageable memory: %d (%d)",
		      dir ? "write" : "read", staged, got);
		CHECK_RET(gdrmap_copy_path(mh, dir, n, &got), 0);
		CHECK(got == staged,
		      "gdrmap_copy_path answers for pageable memory (%d)", got);
		chosen_dma_asks_once(mh, map, gpu, dir);
	}
}

/*
 * Copies below 64 KiB that the CPU serves never ask CUDA about the host
 * buffer (in the model: every write, reads up to 4 KiB; DMA copies ask,
 * to go straight from pinned memory, at a cost far below their own).
 */
static void small_ask_nothing(gdr_mh_t mh, char *map)
{
	static const size_t sizes[] = { 8, 100, 4096, 32768, 65535 };
	int before, i;

	for (i = 0; i < 5; i++) {
		copies(mh, map, pinned, sizes[i], 0, 40);
		copies(mh, map, pinned, sizes[i], 1, 40);
	}
	before = atomic_load(&fake_host_queries);
	for (i = 0; i < 5; i++) {
		if (sizes[i] <= 4096)
			copies(mh, map, pinned, sizes[i], 0, 10);
		copies(mh, map, pageable, sizes[i], 1, 10);
	}
	CHECK(atomic_load(&fake_host_queries) == before,
	      "decided CPU copies below 64 KiB asked CUDA %d times",
	      atomic_load(&fake_host_queries) - before);
}

/*
 * A DMA copy of 64 KiB or more asks CUDA what its host buffer is once:
 * the DMA path uses what the choice found (bounce buffer or not) instead
 * of asking again.  And whether the pinned memory is still there is
 * asked once, of the copy's own address, which the DMA then copies to:
 * each question costs about a tenth of a microsecond, which a 32 KiB DMA
 * (8 us) cannot spare twice.  Each copy's bytes checked.
 */
static void dma_asks_once(gdr_mh_t mh, char *map, CUdeviceptr gpu)
{
	static const size_t sizes[] = { 64 << 10, 65 << 10, 1 << 20 };
	unsigned char *hosts[] = { pinned, pageable };
	int i, h, before, dev_before, asked, dev_asked;

	/* A kind's first copy finds the memory's device, once. */
	for (h = 0; h < 2; h++)
		LIB(gdrmap_copy_to_mapping_via(mh, map, hosts[h], sizes[0],
					       GDRMAP_COPY_PATH_DMA),
		    0);
	for (h = 0; h < 2; h++)
		for (i = 0; i < 3; i++) {
			pattern(hosts[h], sizes[i], (unsigned int)(h * 3 + i));
			before = atomic_load(&fake_host_queries);
			dev_before = atomic_load(&fake_device_queries);
			LIB(gdrmap_copy_to_mapping_via(mh, map, hosts[h],
						       sizes[i],
						       GDRMAP_COPY_PATH_DMA),
			    0);
			asked = atomic_load(&fake_host_queries) - before;
			dev_asked = atomic_load(&fake_device_queries) -
				    dev_before;
			CHECK(asked == 1,
			      "a %zu-byte DMA write from %s memory asked CUDA about it %d times",
			      sizes[i], h ? "pageable" : "pinned", asked);
			CHECK(dev_asked == 1,
			      "a %zu-byte DMA write from %s memory asked CUDA about the GPU memory %d times",
			      sizes[i], h ? "pageable" : "pinned", dev_asked);
			memset(back, POISON, sizes[i]);
			CHECK(fake_gpu_rw(gpu, back, sizes[i], 0) == 0,
			      "read the GPU side");
			CHECK(memcmp(back, hosts[h], sizes[i]) == 0,
			      "a %zu-byte DMA write from %s memory: bytes wrong",
			      sizes[i], h ? "pageable" : "pinned");
		}
}

/* Part of a buffer registered: the copy is of pageable memory. */
static void partly_registered(gdr_mh_t mh, char *map)
{
	size_t n = 1 << 20;
	int got, err;

	CHECK(fake_host_register(pageable, n / 2) == 0, "register half");
	CHECK_RET(gdrmap_copy_path_host(mh, 1, pageable, n / 2, &got), 0);
	CHECK_RET(gdrmap_copy_path_host(mh, 1, pageable, n, &got), 0);
	err = gdrmap_copy_to_mapping_via(mh, map, pageable, n / 2,
					 GDRMAP_COPY_PATH_STAGED);
	CHECK(err == EOPNOTSUPP &&
	      strstr(gdrmap_last_error(), "pinned") != NULL,
	      "staged refuses registered memory, saying why (%d: %s)", err,
	      gdrmap_last_error());
	if (gdr_threads_helpers() > 0)
		CHECK_RET(gdrmap_copy_to_mapping_via(mh, map, pageable, n,
						     GDRMAP_COPY_PATH_STAGED),
			  0);
	fake_host_unregister(pageable);
}

/* Every byte by the staged path, both ways, checked against the GPU. */
static void staged_bytes(gdr_mh_t mh, char *map, CUdeviceptr base)
{
	static const size_t sizes[] = {
		256 << 10, (256 << 10) + 3, (1 << 20) + 5, (5 << 20) + 7,
		(13 << 20) + 4093,
	};
	static const size_t offs[] = { 0, 3, 4096 + 61 };
	size_t i, k, o;
	int bad, copies_before;

	if (!gdr_threads_helpers()) {
		CHECK_RET(gdrmap_copy_to_mapping_via(mh, map, pageable, 1 << 20,
						     GDRMAP_COPY_PATH_STAGED),
			  EOPNOTSUPP);
		return;
	}
	for (i = 0; i < 5; i++)
		for (k = 0; k < 3; k++) {
			size_t n = sizes[i], off = offs[k];

			if (off + n + SLACK > AREA)
				continue;
			pattern(pageable, n, (unsigned int)(i * 7 + k));
			memset(back, POISON, n + off + SLACK);
			CHECK(fake_gpu_rw(base, back, n + off + SLACK, 1) == 0,
			      "poison the GPU side");
			copies_before = atomic_load(&fake_dma_copies);
			LIB(gdrmap_copy_to_mapping_via(mh, map + off, pageable,
						       n,
						       GDRMAP_COPY_PATH_STAGED),
			    0);
			CHECK(atomic_load(&fake_dma_copies) - copies_before >=
			      (n > (1 << 20) ? 3 : 1),
			      "%zu bytes staged in chunks: %d DMA copies", n,
			      atomic_load(&fake_dma_copies) - copies_before);
			CHECK(fake_gpu_rw(base, back, n + off + SLACK, 0) == 0,
			      "read the GPU side");
			bad = memcmp(back + off, pageable, n) != 0;
			for (o = 0; o < SLACK && o < off; o++)
				bad |= back[o] != POISON;
			for (o = 0; o < SLACK; o++)
				bad |= back[off + n + o] != POISON;
			CHECK(!bad, "staged write of %zu at +%zu", n, off);

			pattern(pageable, n, (unsigned int)(i * 7 + k + 100));
			CHECK(fake_gpu_rw(base + off, pageable, n, 1) == 0,
			      "write the GPU side");
			memset(back, POISON, n + 2 * SLACK);
			LIB(gdrmap_copy_from_mapping_via(
				    mh, back + SLACK, map + off, n,
				    GDRMAP_COPY_PATH_STAGED), 0);
			bad = memcmp(back + SLACK, pageable, n) != 0;
			for (o = 0; o < SLACK; o++)
				bad |= back[o] != POISON ||
				       back[SLACK + n + o] != POISON;
			CHECK(!bad, "staged read of %zu at +%zu", n, off);
		}
}

int main(void)
{
	CUdeviceptr p;
	gdr_info_t info;
	char *map;
	gdr_mh_t mh;
	void *va = NULL, *pin = NULL;
	gdr_t g;

	pageable = malloc(AREA);
	back = malloc(AREA + 2 * SLACK);
	if (!pageable || !back)
		return 1;
	memset(pageable, POISON, AREA);
	gdr_cuda_use_syms(&fake_syms);
	fake_enter_start(START_OWN_PRIMARY, 0);
	CHECK_RET(fake_syms.mem.MemHostAlloc(&pin, AREA, 0), CUDA_SUCCESS);
	pinned = pin;
	if (!pinned)
		return test_done();
	memset(pinned, POISON, AREA);
	g = open_dmabuf();
	if (!g)
		return test_done();
	p = vmm_alloc(0, AREA, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	LIB(gdr_pin_buffer(g, p, AREA, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, &va, AREA), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	map = (char *)va + (p - info.va);
	if (va) {
		/* The bytes first, with the clock's word on each path. */
		staged_bytes(mh, map, p);
		dma_asks_once(mh, map, p);
		partly_registered(mh, map);
		gdr_copy_auto_cost = cost;
		gdr_copy_watch_cost = no_drift;
		choices(mh, map, p);
		small_ask_nothing(mh, map);
		LIB(gdr_unmap(g, mh, va, AREA), 0);
	}
	LIB(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_close(g), 0);
	fake_syms.mem.MemFreeHost(pin);
	return owner_done();
}
