// SPDX-License-Identifier: MIT
/*
 * gdrmap_copy_* on a real GPU (lib/paths/path_auto.c): memory from
 * gdrmap_mem_alloc, pinned and mapped, copied both ways at sizes from one
 * byte to 6 MiB by the best-path calls (enough copies to finish measuring
 * each size and go on with the choice) and by each forced path, at odd
 * offsets, poisoned, every byte checked against cuMemcpy, from and to
 * pageable host memory and host memory CUDA pinned (where the staged path
 * must refuse, and DMA go straight); the choice settles, per kind of host
 * buffer; DMA on mapped memory does not wait for a kernel spinning on
 * the legacy default stream; and a pin whose memory was freed is never
 * served by DMA.  On every GPU, from every kind of current context
 * (gpu.h).
 */
#include "copy_paths.h"
#include "gpu.h"
#include "kernels.h"

#define AREA	(8UL << 20)

static unsigned int seed = 2323;
static unsigned char *data, *back, *seen;
/* data and back: pageable (malloc) or pinned (cuMemAllocHost) now. */
static unsigned char *pageable[2], *pinned[2];
static int host_pinned;

/* Does path refuse n bytes from and to the host buffers now? */
static int refused(int path, size_t n)
{
	return copy_path_refused(path, n, host_pinned, !copy_one_cpu());
}

/* One write and one read of n bytes at off by path (AUTO: the best-path
 * calls), checked; returns nonzero on a failure. */
static int round_trip(const struct gpu_case *c, gdr_mh_t mh, char *map,
		      CUdeviceptr base, size_t off, size_t n, int path)
{
	long bad;
	int err;

	fill_random(data, n + 128, &seed);
	CU_ON(c->dev, cu.MemcpyHtoD(base + off - 64, data, n + 128));
	/* From pageable memory cuMemcpyHtoD may return before its DMA
	 * landed; a write through the mapping must come after it. */
	CU_ON(c->dev, cu.CtxSynchronize());
	fill_random(data + 64, n, &seed);
	err = path ? gdrmap_copy_to_mapping_via(mh, map + off, data + 64, n,
						path) :
		     gdrmap_copy_to_mapping(mh, map + off, data + 64, n);
	if (refused(path, n)) {
		CHECK(err == EOPNOTSUPP, "path %d refuses a write of %zu (%d)",
		      path, n, err);
	} else {
		CHECK(err == 0, "write %zu at +%zu by path %d: %d (%s)", n,
		      off, path, err, gdrmap_last_error());
	}
	CU_ON(c->dev, cu.MemcpyDtoH(seen, base + off - 64, n + 128));
	if (!refused(path, n)) {
		bad = first_diff(seen, data, n + 128);
		CHECK(bad < 0, "write %zu at +%zu by path %d: byte %ld of %zu wrong (poison at 0-63 and after %zu)",
		      n, off, path, bad, n + 128, n + 64);
		if (bad >= 0 || err)
			return 1;
	}
	fill_random(data, n, &seed);
	CU_ON(c->dev, cu.MemcpyHtoD(base + off, data, n));
	CU_ON(c->dev, cu.CtxSynchronize());
	memset(back, 0x5a, n + 128);
	err = path ? gdrmap_copy_from_mapping_via(mh, back + 64, map + off, n,
						  path) :
		     gdrmap_copy_from_mapping(mh, back + 64, map + off, n);
	if (refused(path, n)) {
		CHECK(err == EOPNOTSUPP, "path %d refuses a read of %zu (%d)",
		      path, n, err);
		return 0;
	}
	CHECK(err == 0, "read %zu at +%zu by path %d: %d (%s)", n, off, path,
	      err, gdrmap_last_error());
	bad = first_diff(back + 64, data, n);
	for (size_t i = 0; i < 64 && bad < 0; i++)
		if (back[i] != 0x5a || back[n + 64 + i] != 0x5a)
			bad = -2;
	CHECK(bad == -1, "read %zu at +%zu by path %d: wrong at %ld", n, off,
	      path, bad);
	return err || bad != -1;
}

static void every_size(const struct gpu_case *c, gdr_mh_t mh, char *map,
		       CUdeviceptr base)
{
	static const size_t sizes[] = { 1, 8, 100, 1024, 4099, 16384, 65536 + 5,
					300000, (1 << 20) + 7, 6 << 20 };
	size_t i, off;
	int k, path, got[2], bad;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		off = 64 + (i * 4099) % 4096;
		for (k = 0, bad = 0; k < 48 && !bad; k++)
			bad = round_trip(c, mh, map, base, off, sizes[i], 0);
		for (path = 1; path <= GDRMAP_COPY_PATH_STAGED; path++)
			round_trip(c, mh, map, base, off, sizes[i], path);
		/* Settled, or measuring again and settling (COPY_SETTLE). */
		for (k = 0; k <= COPY_SETTLE; k++) {
			LIB(gdrmap_copy_path_host(mh, 0, back, sizes[i],
						  &got[0]), 0);
			LIB(gdrmap_copy_path_host(mh, 1, data, sizes[i],
						  &got[1]), 0);
			if ((got[0] && got[1]) || k == COPY_SETTLE || bad)
				break;
			bad = round_trip(c, mh, map, base, off, sizes[i], 0);
		}
		CHECK(got[0] >= 1 && got[0] <= GDRMAP_COPY_PATH_STAGED &&
		      got[1] >= 1 && got[1] <= GDRMAP_COPY_PATH_STAGED &&
		      !refused(got[0], sizes[i]) && !refused(got[1], sizes[i]),
		      "%zu bytes, %s host memory: settled on read %d, write %d",
		      sizes[i], host_pinned ? "pinned" : "pageable", got[0],
		      got[1]);
		if (c->dev == 0 && c->start == START_PRIMARY)
			fprintf(stderr, "GPU 0, %zu bytes, %s host memory: read by %d, write by %d\n",
				sizes[i], host_pinned ? "pinned" : "pageable",
				got[0], got[1]);
	}
}

/* A kernel on the legacy default stream counts until the CPU writes the
 * stop flag by DMA: the DMA path does not wait for it. */
static void spinning_kernel(const struct gpu_case *c, gdr_mh_t mh,
			    char *map, CUdeviceptr base)
{
	CUdeviceptr dcounter = base, dstop = base + 4096;
	void *args[2] = { &dcounter, &dstop };
	uint64_t a = 0, b = 0;
	uint32_t stop = 1;
	CUmodule mod;
	CUfunction fn;

	CU_ON(c->dev, cu.MemsetD32(base, 0, 2048));
	CU_ON(c->dev, cu.ModuleLoadData(&mod, test_kernels_ptx));
	CU_ON(c->dev, cu.ModuleGetFunction(&fn, mod, "count_until_stop"));
	CU_ON(c->dev, cu.LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, args,
				      NULL));
	LIB(gdrmap_copy_from_mapping_via(mh, &a, map, 8, GDRMAP_COPY_PATH_DMA),
	    0);
	LIB(gdrmap_copy_from_mapping_via(mh, &b, map, 8, GDRMAP_COPY_PATH_DMA),
	    0);
	CHECK(b >= a, "the counter read by DMA went backwards");
	LIB(gdrmap_copy_to_mapping_via(mh, map + 4096, &stop, sizeof(stop),
				       GDRMAP_COPY_PATH_DMA), 0);
	CU_ON(c->dev, cu.CtxSynchronize());
	CU_ON(c->dev, cu.ModuleUnload(mod));
}

/* cuMemAlloc memory freed under a pin: no DMA to what is there now. */
static void freed(const struct gpu_case *c)
{
	CUdeviceptr p, q;
	gdr_mh_t mh;
	char *va = NULL;
	uint64_t v = 0x1122334455667788ULL, w = 0;
	gdr_info_t info;
	int got, backend = 0;

	gdr_get_attribute(c->g, GDRMAP_ATTR_BACKEND, &backend);
	CU_ON(c->dev, cu.MemAlloc(&p, 1 << 20));
	LIB(gdr_pin_buffer(c->g, p, 4096, 0, 0, &mh), 0);
	LIB(gdr_map(c->g, mh, (void **)&va, 4096), 0);
	LIB(gdr_get_info(c->g, mh, &info), 0);
	if (!va || info.mapping_type == GDR_MAPPING_TYPE_NONE ||
	    backend == GDRMAP_BACKEND_GDRDRV) {
		/* Copy-only (vulkan), or gdrdrv which invalidates: nothing
		 * of this case applies. */
		if (va)
			LIB(gdr_unmap(c->g, mh, va, 4096), 0);
		LIB(gdr_unpin_buffer(c->g, mh), 0);
		CU_ON(c->dev, cu.MemFree(p));
		return;
	}
	CU_ON(c->dev, cu.MemFree(p));
	CU_ON(c->dev, cu.MemAlloc(&q, 1 << 20));
	CU_ON(c->dev, cu.MemsetD32(q, 0xa5a5a5a5, 1024));
	CU_ON(c->dev, cu.CtxSynchronize());
	CHECK_RET(gdrmap_copy_to_mapping_via(mh, va + (p - info.va), &v, 8,
					     GDRMAP_COPY_PATH_DMA),
		  EOPNOTSUPP);
	LIB(gdrmap_copy_to_mapping(mh, va + (p - info.va), &v, 8), 0);
	LIB(gdrmap_copy_path(mh, 1, 1 << 20, &got), 0);
	CHECK(got != GDRMAP_COPY_PATH_DMA, "no DMA for a freed pin");
	CU_ON(c->dev, cu.MemcpyDtoH(&w, q, 8));
	CHECK(w == 0xa5a5a5a5a5a5a5a5ULL, "the new allocation was not touched");
	LIB(gdr_unmap(c->g, mh, va, 4096), 0);
	LIB(gdr_unpin_buffer(c->g, mh), 0);
	CU_ON(c->dev, cu.MemFree(q));
}

static void one_case(const struct gpu_case *c)
{
	unsigned long base;
	gdr_info_t info;
	gdr_mh_t mh;
	char *va = NULL, *map;

	LIB(gdrmap_mem_alloc(c->dev, AREA, &base), 0);
	LIB(gdr_pin_buffer(c->g, base, AREA, 0, 0, &mh), 0);
	LIB(gdr_map(c->g, mh, (void **)&va, AREA), 0);
	LIB(gdr_get_info(c->g, mh, &info), 0);
	if (va) {
		map = va + (base - info.va);
		for (host_pinned = 0; host_pinned < 2; host_pinned++) {
			data = host_pinned ? pinned[0] : pageable[0];
			back = host_pinned ? pinned[1] : pageable[1];
			if (data && back)
				every_size(c, mh, map, base);
		}
		host_pinned = 0;
		data = pageable[0];
		back = pageable[1];
		if (gpu_has_kernels())
			spinning_kernel(c, mh, map, base);
		LIB(gdr_unmap(c->g, mh, va, AREA), 0);
	}
	LIB(gdr_unpin_buffer(c->g, mh), 0);
	LIB(gdrmap_mem_free(base), 0);
	freed(c);
}

/* The pinned host buffers, in gpu_run's first case (CUDA is loaded). */
static void first_case(const struct gpu_case *c)
{
	void *p;
	int i;

	for (i = 0; i < 2 && !pinned[1]; i++) {
		CU_ON(c->dev, cu.MemAllocHost(&p, AREA + 256));
		pinned[i] = p;
	}
	one_case(c);
}

int main(void)
{
	pageable[0] = data = malloc(AREA + 256);
	pageable[1] = back = malloc(AREA + 256);
	seen = malloc(AREA + 256);
	if (!data || !back || !seen)
		return 1;
	return gpu_run(first_case);
}
