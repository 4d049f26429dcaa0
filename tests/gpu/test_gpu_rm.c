// SPDX-License-Identifier: MIT
/*
 * The rm backend on a real GPU: every kind of CUDA memory mapped for the
 * CPU, not copy-only, with every byte checked both ways against what the
 * GPU holds.
 *  - cuMemAlloc memory, 64 MiB whole and an 8-byte allocation's page;
 *  - the 64 KiB window UCX pins around a small cuMemAlloc buffer, which
 *    spans other allocations and free space of the object CUDA
 *    suballocates it from: the neighbours show through the mapping;
 *  - cuMemCreate memory with no shareable handle type;
 *  - a window across two cuMemCreate allocations mapped side by side:
 *    one contiguous mapping of two RM objects;
 *  - memory freed under a pin: the mapping still works, the callback
 *    flag says so, the unpin succeeds.
 * On every GPU, from every kind of current context (gpu.h).  Skips where
 * gdr_open chose another backend.
 */
#include <stdio.h>

#include "gpu.h"

#define BIG	(64UL << 20)
#define VMM	(2UL << 20)
#define WIN	(64UL << 10)

static unsigned int seed = 2811;

/* Pin and map [addr, +size) with the default flags: the mapping of addr,
 * or NULL.  Checks that the pin is mapped, not copy-only. */
static char *pin_map(gdr_t g, CUdeviceptr addr, size_t size, gdr_mh_t *mh,
		     char **base, size_t *len, CUdeviceptr *win)
{
	gdr_info_t info;

	*base = NULL;
	memset(&info, 0, sizeof(info));
	LIB(gdr_pin_buffer(g, addr, size, 0, 0, mh), 0);
	LIB(gdr_get_info(g, *mh, &info), 0);
	CHECK(info.va <= addr && info.va + info.mapped_size >= addr + size,
	      "the window [0x%llx, +%llu) holds the range",
	      (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size);
	*len = info.mapped_size;
	*win = info.va;
	LIB(gdr_map(g, *mh, (void **)base, *len), 0);
	LIB(gdr_get_info(g, *mh, &info), 0);
	CHECK(info.mapping_type == GDR_MAPPING_TYPE_WC && info.mapped,
	      "[0x%llx, +%zu) is mapped write-combined, not copy-only (type %d)",
	      (unsigned long long)addr, size, info.mapping_type);
	return *base ? *base + (addr - info.va) : NULL;
}

static void unmap_unpin(gdr_t g, gdr_mh_t mh, char *base, size_t len)
{
	if (base)
		LIB(gdr_unmap(g, mh, base, len), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
}

/* Both ways over [p, +n) through m: the CPU writes, the GPU reads; the
 * GPU writes, the CPU reads; every byte, from poisoned buffers. */
static void both_ways(int dev, gdr_mh_t mh, char *m, CUdeviceptr p, size_t n,
		      const char *what)
{
	unsigned char *a = malloc(n), *b = malloc(n);
	long d;

	if (!a || !b || !m) {
		CHECK(0, "%s: no buffers or no mapping", what);
		free(a);
		free(b);
		return;
	}
	fill_random(a, n, &seed);
	memset(b, 0xa5, n);
	LIB(gdr_copy_to_mapping(mh, m, a, n), 0);
	CU_ON(dev, cu.MemcpyDtoH(b, p, n));
	d = first_diff(a, b, n);
	CHECK(d < 0, "%s: the GPU sees what the CPU wrote (first difference at %ld)",
	      what, d);
	fill_random(a, n, &seed);
	memset(b, 0x5a, n);
	CU_ON(dev, cu.MemcpyHtoD(p, a, n));
	/* From pageable memory the copy may return before its DMA lands. */
	CU_ON(dev, cu.CtxSynchronize());
	LIB(gdr_copy_from_mapping(mh, b, m, n), 0);
	d = first_diff(a, b, n);
	CHECK(d < 0, "%s: the CPU reads what the GPU holds (first difference at %ld)",
	      what, d);
	free(a);
	free(b);
}

static void legacy_big(const struct gpu_case *c)
{
	CUdeviceptr p, w;
	gdr_mh_t mh;
	char *base, *m;
	size_t len;

	CU_ON(c->dev, cu.MemAlloc(&p, BIG));
	m = pin_map(c->g, p, BIG, &mh, &base, &len, &w);
	both_ways(c->dev, mh, m, p, BIG, "cuMemAlloc 64 MiB");
	unmap_unpin(c->g, mh, base, len);
	CU_ON(c->dev, cu.MemFree(p));
}

/* The window UCX pins around small buffers. */
static void ucx_window(const struct gpu_case *c)
{
	CUdeviceptr small[24], w, q, start;
	uint64_t v = 0x0123456789abcdefULL ^ (uint64_t)c->dev, back = 0;
	gdr_mh_t mh;
	char *base, *m;
	size_t len;
	int i, k = 12;

	for (i = 0; i < 24; i++)
		CU_ON(c->dev, cu.MemAlloc(&small[i], 8));
	start = small[k] & ~(WIN - 1);
	m = pin_map(c->g, start, WIN, &mh, &base, &len, &w);
	if (m) {
		/* The buffer itself, through the window. */
		m = base + (small[k] - w);
		both_ways(c->dev, mh, m, small[k], 8, "an 8-byte cuMemAlloc");
		/* Its neighbours in the same window show through too. */
		for (i = 0; i < 24; i++) {
			q = small[i];
			if (q < w || q + 8 > w + len)
				continue;
			v += 0x1111;
			CU_ON(c->dev, cu.MemcpyHtoD(q, &v, 8));
			CU_ON(c->dev, cu.CtxSynchronize());
			LIB(gdr_copy_from_mapping(mh, &back, base + (q - w), 8),
			    0);
			CHECK(back == v, "neighbour %d at +0x%llx of the window reads through it",
			      i, (unsigned long long)(q - w));
		}
	}
	unmap_unpin(c->g, mh, base, len);
	for (i = 0; i < 24; i++)
		CU_ON(c->dev, cu.MemFree(small[i]));
}

/* n handles of VMM bytes each, side by side from p (reserved n * VMM). */
static CUdeviceptr vmm_map(int dev, int n)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
	CUmemAccessDesc access = {
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	CUdeviceptr p = 0;
	int i;

	CU_ON(dev, cu.MemAddressReserve(&p, n * VMM, 0, 0, 0));
	for (i = 0; i < n; i++) {
		CU_ON(dev, cu.MemCreate(&h, VMM, &prop, 0));
		CU_ON(dev, cu.MemMap(p + i * VMM, VMM, 0, h, 0));
		CU_ON(dev, cu.MemRelease(h));
	}
	CU_ON(dev, cu.MemSetAccess(p, n * VMM, &access, 1));
	return p;
}

static void vmm_unmap(int dev, CUdeviceptr p, int n)
{
	CU_ON(dev, cu.MemUnmap(p, n * VMM));
	CU_ON(dev, cu.MemAddressFree(p, n * VMM));
}

static void vmm_cases(const struct gpu_case *c)
{
	CUdeviceptr p, w;
	gdr_mh_t mh;
	char *base, *m;
	size_t len;

	if (!cu.MemCreate || !cu.MemAddressReserve) {
		SKIP("this libcuda has no VMM calls");
		return;
	}
	p = vmm_map(c->dev, 1);
	m = pin_map(c->g, p, VMM, &mh, &base, &len, &w);
	both_ways(c->dev, mh, m, p, VMM, "cuMemCreate, no shareable handle");
	unmap_unpin(c->g, mh, base, len);
	vmm_unmap(c->dev, p, 1);

	/* 64 KiB each side of the seam between two allocations. */
	p = vmm_map(c->dev, 2);
	m = pin_map(c->g, p + VMM - WIN, 2 * WIN, &mh, &base, &len, &w);
	both_ways(c->dev, mh, m, p + VMM - WIN, 2 * WIN,
		  "a window across two cuMemCreate allocations");
	unmap_unpin(c->g, mh, base, len);
	vmm_unmap(c->dev, p, 2);
}

static void freed_under_pin(const struct gpu_case *c)
{
	uint64_t v = 0x600dcafe00000000ULL | (uint64_t)c->dev, back = 0;
	CUdeviceptr p, w;
	gdr_mh_t mh;
	char *base, *m;
	size_t len;
	int flag = -1;

	CU_ON(c->dev, cu.MemAlloc(&p, 1 << 20));
	m = pin_map(c->g, p, 1 << 20, &mh, &base, &len, &w);
	LIB(gdr_get_callback_flag(c->g, mh, &flag), 0);
	CHECK(flag == 0, "the flag is clear while the memory lives");
	if (m)
		LIB(gdr_copy_to_mapping(mh, m, &v, 8), 0);
	CU_ON(c->dev, cu.MemFree(p));
	if (m)
		LIB(gdr_copy_from_mapping(mh, &back, m, 8), 0);
	CHECK(!m || back == v, "the mapping still reads what was written before the free");
	LIB(gdr_get_callback_flag(c->g, mh, &flag), 0);
	CHECK(flag == 1, "the flag says the memory was freed");
	unmap_unpin(c->g, mh, base, len);
}

static void one_case(const struct gpu_case *c)
{
	int backend = 0;

	gdr_get_attribute(c->g, GDRMAP_ATTR_BACKEND, &backend);
	if (backend != GDRMAP_BACKEND_RM) {
		SKIP("these cases are for the rm backend (this is %d)",
		     backend);
		return;
	}
	legacy_big(c);
	ucx_window(c);
	vmm_cases(c);
	freed_under_pin(c);
}

int main(void)
{
	return gpu_run(one_case);
}
