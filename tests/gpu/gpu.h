/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests that need a real GPU: CUDA loaded with dlopen (so
 * they build without the CUDA toolkit, and skip where there is no GPU),
 * a GPU memory allocation every backend can pin, and checks on data moved
 * through a mapping, compared with what cuMemcpy sees.
 */
#ifndef GDRMAP_TEST_GPU_H
#define GDRMAP_TEST_GPU_H

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"
#include "gdrapi.h"
#include "check.h"

#define GPU_CUDA_FUNCS(X)						\
	X(Init, cuInit)							\
	X(DeviceGet, cuDeviceGet)					\
	X(DeviceGetCount, cuDeviceGetCount)				\
	X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)		\
	X(CtxSetCurrent, cuCtxSetCurrent)				\
	X(MemAlloc, cuMemAlloc_v2)					\
	X(MemFree, cuMemFree_v2)					\
	X(MemcpyHtoD, cuMemcpyHtoD_v2)					\
	X(MemcpyDtoH, cuMemcpyDtoH_v2)					\
	X(MemsetD32, cuMemsetD32_v2)					\
	X(ModuleLoadData, cuModuleLoadData)				\
	X(ModuleGetFunction, cuModuleGetFunction)			\
	X(LaunchKernel, cuLaunchKernel)					\
	X(StreamCreate, cuStreamCreate)					\
	X(StreamSynchronize, cuStreamSynchronize)			\
	X(CtxSynchronize, cuCtxSynchronize)

static struct {
#define GPU_FIELD(field, sym) __typeof__(&sym) field;
	GPU_CUDA_FUNCS(GPU_FIELD)
#undef GPU_FIELD
} cu;

/* Check a CUDA call; failures count and print. */
#define CU_OK(call)							\
	do {								\
		CUresult cu_res_ = (call);				\
		CHECK(cu_res_ == CUDA_SUCCESS, "%s: CUDA error %d",	\
		      #call, cu_res_);					\
	} while (0)

/*
 * Load CUDA and make device 0's primary context current.  Returns 0, or
 * 77 (skip) if this machine has no usable GPU.
 */
static inline int gpu_setup(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW);
	CUcontext ctx;
	CUdevice dev;
	int n = 0;

	if (!lib) {
		SKIP("no libcuda.so.1: this test needs an NVIDIA GPU");
		return 77;
	}
#define GPU_LOAD(field, sym)						\
	*(void **)&cu.field = dlsym(lib, #sym);				\
	if (!cu.field) {						\
		SKIP("libcuda.so.1 lacks %s", #sym);			\
		return 77;						\
	}
	GPU_CUDA_FUNCS(GPU_LOAD)
#undef GPU_LOAD
	if (cu.Init(0) != CUDA_SUCCESS || cu.DeviceGetCount(&n) ||
	    n < 1 || cu.DeviceGet(&dev, 0) ||
	    cu.DevicePrimaryCtxRetain(&ctx, dev) || cu.CtxSetCurrent(ctx)) {
		SKIP("no usable CUDA device");
		return 77;
	}
	return 0;
}

/* Fill with random bytes, never all zero. */
static inline void fill_random(void *p, size_t n, unsigned int *seed)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(rand_r(seed) >> 7) | 1;
}

/* The first differing offset, or -1. */
static inline long first_diff(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t i;

	for (i = 0; i < n; i++)
		if (x[i] != y[i])
			return (long)i;
	return -1;
}

/* gdr_open, reporting which backend it chose. */
static inline gdr_t gpu_gdr_open(void)
{
	static const char *const names[] = { "?", "gdrdrv", "dmabuf",
					     "vulkan" };
	gdr_t g = gdr_open();
	int b = 0;

	CHECK(g != NULL, "gdr_open on a GPU machine: %s", gdrmap_last_error());
	if (g && !gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &b))
		fprintf(stderr, "backend: %s\n", b > 0 && b < 4 ? names[b] : "?");
	return g;
}

#endif /* GDRMAP_TEST_GPU_H */
