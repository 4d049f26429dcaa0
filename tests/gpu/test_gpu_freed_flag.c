// SPDX-License-Identifier: MIT
/*
 * gdr_get_callback_flag without a module, on a real GPU: a pin of
 * cuMemAlloc memory reads 0, then 1 once cuMemFree freed it (and a pin of
 * what cuMemAlloc gives next, at the same address or not, reads 0);
 * cudaMallocAsync-style pool memory (cuMemAllocAsync) freed and allocated
 * again from the pool reads 1 on the old pin even where the pool hands the
 * same address back; VMM memory reads 1 once unmapped, and stays 1 when
 * new memory is mapped at the same address.  Under gdrdrv (persistent
 * mode) the flag never rises, as GDRCopy's: the case is skipped there.
 * On every GPU, from every kind of current context (gpu.h).
 */
#include "gpu.h"

static int flag_of(gdr_t g, gdr_mh_t mh)
{
	int flag = -1;

	LIB(gdr_get_callback_flag(g, mh, &flag), 0);
	return flag;
}

static void legacy(const struct gpu_case *c)
{
	CUdeviceptr p, q;
	gdr_mh_t mh, again;

	CU_ON(c->dev, cu.MemAlloc(&p, 1 << 20));
	LIB(gdr_pin_buffer(c->g, p, 4096, 0, 0, &mh), 0);
	CHECK(flag_of(c->g, mh) == 0, "cuMemAlloc: 0 while allocated");
	CU_ON(c->dev, cu.MemFree(p));
	CHECK(flag_of(c->g, mh) == 1, "cuMemAlloc: 1 once freed");
	CU_ON(c->dev, cu.MemAlloc(&q, 1 << 20));
	CHECK(flag_of(c->g, mh) == 1, "cuMemAlloc: still 1 after a new allocation%s",
	      q == p ? " at the same address" : "");
	LIB(gdr_pin_buffer(c->g, q, 4096, 0, 0, &again), 0);
	CHECK(flag_of(c->g, again) == 0, "a pin of the new memory: 0");
	LIB(gdr_unpin_buffer(c->g, again), 0);
	LIB(gdr_unpin_buffer(c->g, mh), 0);
	CU_ON(c->dev, cu.MemFree(q));
}

static void pool(const struct gpu_case *c)
{
	CUdeviceptr p, q;
	CUstream s;
	gdr_mh_t mh;

	if (!cu.MemAllocAsync || !cu.MemFreeAsync || !cu.StreamCreate) {
		SKIP("no cuMemAllocAsync here");
		return;
	}
	CU_ON(c->dev, cu.StreamCreate(&s, 1));
	CU_ON(c->dev, cu.MemAllocAsync(&p, 1 << 20, s));
	CU_ON(c->dev, cu.StreamSynchronize(s));
	LIB(gdr_pin_buffer(c->g, p, 4096, 0, 0, &mh), 0);
	CHECK(flag_of(c->g, mh) == 0, "pool: 0 while allocated");
	CU_ON(c->dev, cu.MemFreeAsync(p, s));
	CU_ON(c->dev, cu.StreamSynchronize(s));
	CU_ON(c->dev, cu.MemAllocAsync(&q, 1 << 20, s));
	CU_ON(c->dev, cu.StreamSynchronize(s));
	CHECK(flag_of(c->g, mh) == 1,
	      "pool: 1 once freed and allocated again (%s address)",
	      q == p ? "the same" : "another");
	if (c->start == START_NONE)
		printf("GPU %d: the pool handed %s address back\n", c->dev,
		       q == p ? "the same" : "another");
	LIB(gdr_unpin_buffer(c->g, mh), 0);
	CU_ON(c->dev, cu.MemFreeAsync(q, s));
	CU_ON(c->dev, cu.StreamSynchronize(s));
	CU_ON(c->dev, cu.StreamDestroy(s));
}

static void vmm(const struct gpu_case *c)
{
	const size_t size = 2 << 20;
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, c->dev },
	};
	CUmemAccessDesc access = {
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, c->dev },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	CUdeviceptr p = 0;
	gdr_mh_t mh, again;

	if (!cu.MemCreate || !cu.MemSetAccess) {
		SKIP("no cuMemCreate here");
		return;
	}
	CU_ON(c->dev, cu.MemCreate(&h, size, &prop, 0));
	CU_ON(c->dev, cu.MemAddressReserve(&p, size, 0, 0, 0));
	CU_ON(c->dev, cu.MemMap(p, size, 0, h, 0));
	CU_ON(c->dev, cu.MemRelease(h));
	CU_ON(c->dev, cu.MemSetAccess(p, size, &access, 1));
	LIB(gdr_pin_buffer(c->g, p, size, 0, 0, &mh), 0);
	CHECK(flag_of(c->g, mh) == 0, "VMM: 0 while mapped");
	CU_ON(c->dev, cu.MemUnmap(p, size));
	CHECK(flag_of(c->g, mh) == 1, "VMM: 1 once unmapped");
	CU_ON(c->dev, cu.MemCreate(&h, size, &prop, 0));
	CU_ON(c->dev, cu.MemMap(p, size, 0, h, 0));
	CU_ON(c->dev, cu.MemRelease(h));
	CU_ON(c->dev, cu.MemSetAccess(p, size, &access, 1));
	CHECK(flag_of(c->g, mh) == 1, "VMM: still 1 with new memory there");
	LIB(gdr_pin_buffer(c->g, p, size, 0, 0, &again), 0);
	CHECK(flag_of(c->g, again) == 0, "VMM: a new pin of it: 0");
	LIB(gdr_unpin_buffer(c->g, again), 0);
	LIB(gdr_unpin_buffer(c->g, mh), 0);
	CU_ON(c->dev, cu.MemUnmap(p, size));
	CU_ON(c->dev, cu.MemAddressFree(p, size));
}

static void one_case(const struct gpu_case *c)
{
	int backend = 0;

	gdr_get_attribute(c->g, GDRMAP_ATTR_BACKEND, &backend);
	if (backend == GDRMAP_BACKEND_GDRDRV) {
		SKIP("gdrdrv reports frees from NVIDIA's callback, in callback mode only");
		return;
	}
	legacy(c);
	pool(c);
	vmm(c);
}

int main(void)
{
	return gpu_run(one_case);
}
