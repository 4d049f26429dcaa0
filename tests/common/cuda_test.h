/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the test programs that call the CUDA driver API on the
 * simulated GPUs (the simulator's own VM tests in sim/tests and the VM
 * cases in tests/vm/cases): giving up on a failed call, and each GPU's
 * contexts and VMM memory.
 */
#ifndef GDRMAP_TEST_CUDA_TEST_H
#define GDRMAP_TEST_CUDA_TEST_H

#include <stdlib.h>

#include "check.h"
#include "cuda_defs.h"

/* CHECK, and give up when it fails: nothing after it would mean
 * anything.  cond is evaluated once. */
#define REQUIRE(cond, ...)						\
	do {								\
		unsigned long require_failed_ = check_failed;		\
									\
		CHECK(cond, __VA_ARGS__);				\
		if (check_failed != require_failed_)			\
			exit(test_done());				\
	} while (0)

#define CU_OK(call)							\
	do {								\
		CUresult cu_ok_rc_ = (call);				\
		REQUIRE(cu_ok_rc_ == CUDA_SUCCESS, "%s: CUresult %d",	\
			#call, cu_ok_rc_);				\
	} while (0)

#define CU_IS(call, want)						\
	do {								\
		CUresult cu_is_rc_ = (call);				\
		CHECK(cu_is_rc_ == (want), "%s: CUresult %d, want %d",	\
		      #call, cu_is_rc_, (int)(want));			\
	} while (0)

/* How many GPUs CUDA sees (after cuInit). */
static inline int gpu_count(void)
{
	int n = 0;

	CU_OK(cuDeviceGetCount(&n));
	return n;
}

/* Device dev's primary context, retained once more. */
static inline CUcontext gpu_primary(int dev)
{
	CUcontext c;

	CU_OK(cuDevicePrimaryCtxRetain(&c, dev));
	return c;
}

/* The calling thread's current context (NULL: none). */
static inline CUcontext current_ctx(void)
{
	CUcontext c = NULL;

	CU_OK(cuCtxGetCurrent(&c));
	return c;
}

/* VMM memory (cuMemCreate, as NCCL allocates) of size bytes on device
 * dev, mapped read-write; size a multiple of the 2 MiB granularity. */
static inline CUdeviceptr vmm_alloc(int dev, size_t size)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
		.allocFlags = { .gpuDirectRDMACapable = 1 },
	};
	CUmemAccessDesc access = {
		.location = prop.location,
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;

	CU_OK(cuMemCreate(&h, size, &prop, 0));
	CU_OK(cuMemAddressReserve(&va, size, 0, 0, 0));
	CU_OK(cuMemMap(va, size, 0, h, 0));
	CU_OK(cuMemRelease(h));	/* the mapping holds it */
	CU_OK(cuMemSetAccess(va, size, &access, 1));
	return va;
}

static inline void vmm_free(CUdeviceptr va, size_t size)
{
	CU_OK(cuMemUnmap(va, size));
	CU_OK(cuMemAddressFree(va, size));
}

#endif /* GDRMAP_TEST_CUDA_TEST_H */
