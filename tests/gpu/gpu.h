/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests that need a real GPU: CUDA loaded at run time by
 * the tree's loader (common/cuda_load.h: they build without the CUDA
 * toolkit, and skip where there is no GPU),
 * and a runner that repeats a test's case on every GPU of the machine,
 * each from every kind of current context an application may have when
 * it calls the library: none, the owning GPU's primary context, a context
 * the application created on it (cuCtxCreate), another GPU's primary
 * context (skipped where there is one GPU).  After every library call the
 * thread's current context must be exactly what it was.
 *
 * The tests' own CUDA calls (copies to check what the GPU sees, kernels)
 * run in the owner's primary context, pushed and popped around each
 * (CU_ON), so they never depend on what the case made current.
 */
#ifndef GDRMAP_TEST_GPU_H
#define GDRMAP_TEST_GPU_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"
#include "cuda_funcs.h"
#include "cuda_load.h"
#include "gdrapi.h"
#include "check.h"
#include "crash_report.h"

#define GPU_CUDA_FUNCS(X)						\
	CUDA_FN(X, Init)						\
	CUDA_FN(X, DeviceGet)						\
	CUDA_FN(X, DeviceGetCount)					\
	CUDA_FN(X, DevicePrimaryCtxRetain)				\
	CUDA_FN(X, CtxSetCurrent)					\
	CUDA_FN(X, CtxGetCurrent)					\
	CUDA_FN(X, CtxPushCurrent)					\
	CUDA_FN(X, CtxPopCurrent)					\
	CUDA_FN(X, CtxDestroy)						\
	CUDA_FN(X, MemAlloc)						\
	CUDA_FN(X, MemFree)						\
	CUDA_FN(X, MemcpyHtoD)						\
	CUDA_FN(X, MemcpyDtoH)						\
	CUDA_FN(X, MemsetD32)						\
	CUDA_FN(X, CtxSynchronize)

/* Kernels: optional (the simulated GPU's libcuda runs none). */
#define GPU_CUDA_KERNEL_FUNCS(X)					\
	CUDA_FN(X, ModuleLoadData)					\
	CUDA_FN(X, ModuleUnload)					\
	CUDA_FN(X, ModuleGetFunction)					\
	CUDA_FN(X, LaunchKernel)					\
	CUDA_FN(X, StreamCreate)					\
	CUDA_FN(X, StreamDestroy)					\
	CUDA_FN(X, StreamSynchronize)

/* VMM, asynchronous copies and pools: optional as well. */
#define GPU_CUDA_VMM_FUNCS(X)						\
	CUDA_FN(X, MemCreate)						\
	CUDA_FN(X, MemRelease)						\
	CUDA_FN(X, MemAddressReserve)					\
	CUDA_FN(X, MemAddressFree)					\
	CUDA_FN(X, MemMap)						\
	CUDA_FN(X, MemUnmap)						\
	CUDA_FN(X, MemSetAccess)					\
	CUDA_FN(X, MemcpyHtoDAsync)					\
	CUDA_FN(X, MemcpyDtoHAsync)					\
	CUDA_FN(X, MemAllocHost)					\
	CUDA_FN(X, MemFreeHost)

#define GPU_MAX 16

static struct {
#define GPU_FIELD(field, sym) __typeof__(&sym) field;
	GPU_CUDA_FUNCS(GPU_FIELD)
	GPU_CUDA_KERNEL_FUNCS(GPU_FIELD)
	GPU_CUDA_VMM_FUNCS(GPU_FIELD)
#undef GPU_FIELD
	/* Stream-ordered pools (CUDA 11.2+), when the driver has them. */
	CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
	/* cuCtxCreate: _v4 (CUDA 13), else _v2 */
	__typeof__(&cuCtxCreate_v4) CtxCreate4;
	__typeof__(&cuCtxCreate_v2) CtxCreate2;
	int ndev;
	CUcontext primary[GPU_MAX];
	CUcontext user[GPU_MAX];	/* created by the test on each GPU */
} cu;

/* Check a CUDA call; failures count and print. */
#define CU_OK(call)							\
	do {								\
		CUresult cu_res_ = (call);				\
		CHECK(cu_res_ == CUDA_SUCCESS, "%s: CUDA error %d",	\
		      #call, cu_res_);					\
	} while (0)

/* A CUDA call of the test's own, in GPU dev's primary context. */
#define CU_ON(dev, call)						\
	do {								\
		CUcontext cu_on_popped_;				\
		CU_OK(cu.CtxPushCurrent(cu.primary[dev]));		\
		CU_OK(call);						\
		CU_OK(cu.CtxPopCurrent(&cu_on_popped_));		\
	} while (0)

static inline CUcontext gpu_current(void)
{
	CUcontext c = NULL;

	cu.CtxGetCurrent(&c);
	return c;
}

/* A library call that must return want and leave the current context
 * as it found it. */
#define LIB(expr, want)							\
	do {								\
		CUcontext lib_before_ = gpu_current();			\
		CHECK_RET(expr, want);					\
		CHECK(gpu_current() == lib_before_,			\
		      "%s changed the current CUDA context", #expr);	\
	} while (0)

/*
 * Load CUDA, retain every GPU's primary context and create a context of
 * the test's own on each; leaves no context current.  Returns 0, or 77
 * (skip) if this machine has no usable GPU.
 */
static inline int gpu_setup(void)
{
#define GPU_SYM(field, sym) CUDA_SYM(sym, &cu.field),
#define GPU_SYM_OPT(field, sym) CUDA_SYM_OPT(sym, &cu.field),
	const struct cuda_sym syms[] = {
		GPU_CUDA_FUNCS(GPU_SYM)
		GPU_CUDA_KERNEL_FUNCS(GPU_SYM_OPT)
		GPU_CUDA_VMM_FUNCS(GPU_SYM_OPT)
		CUDA_SYM_OPT(cuMemAllocAsync, &cu.MemAllocAsync),
		CUDA_SYM_OPT(cuMemFreeAsync, &cu.MemFreeAsync),
		CUDA_SYM_OPT(cuCtxCreate_v4, &cu.CtxCreate4),
		CUDA_SYM_OPT(cuCtxCreate_v2, &cu.CtxCreate2),
	};
#undef GPU_SYM
#undef GPU_SYM_OPT
	const char *what;
	CUcontext popped;
	CUdevice dev;
	int i;

	crash_report_install();
	switch (cuda_load_syms(syms, sizeof(syms) / sizeof(syms[0]), &what)) {
	case CUDA_LOADED:
		break;
	case CUDA_NO_LIBRARY:
		SKIP("no libcuda.so.1: this test needs an NVIDIA GPU");
		return 77;
	default:
		SKIP("libcuda.so.1 lacks %s", what);
		return 77;
	}
	if (cu.Init(0) != CUDA_SUCCESS || cu.DeviceGetCount(&cu.ndev) ||
	    cu.ndev < 1) {
		SKIP("no usable CUDA device");
		return 77;
	}
	if (cu.ndev > GPU_MAX)
		cu.ndev = GPU_MAX;
	for (i = 0; i < cu.ndev; i++) {
		CUresult res = cu.DeviceGet(&dev, i);

		if (res == CUDA_SUCCESS)
			res = cu.DevicePrimaryCtxRetain(&cu.primary[i], dev);
		/* cuCtxCreate makes the new context current. */
		if (res == CUDA_SUCCESS)
			res = cu.CtxCreate4 ?
			      cu.CtxCreate4(&cu.user[i], NULL, 0, dev) :
			      cu.CtxCreate2 ? cu.CtxCreate2(&cu.user[i], 0, dev) :
			      CUDA_ERROR_NOT_SUPPORTED;
		if (res == CUDA_SUCCESS)
			res = cu.CtxPopCurrent(&popped);
		if (res != CUDA_SUCCESS) {
			SKIP("GPU %d: no CUDA contexts (error %d)", i, res);
			return 77;
		}
	}
	cu.CtxSetCurrent(NULL);
	fprintf(stderr, "%d GPU%s\n", cu.ndev, cu.ndev > 1 ? "s" : "");
	return 0;
}

/* How many GPUs CUDA sees, before anything is set up; 0 without CUDA. */
static inline int gpu_count(void)
{
	__typeof__(&cuDeviceGetCount) count;
	__typeof__(&cuInit) init;
	const struct cuda_sym syms[] = {
		CUDA_SYM(cuInit, &init),
		CUDA_SYM(cuDeviceGetCount, &count),
	};
	int n = 0;

	if (cuda_load_syms(syms, 2, NULL) == CUDA_LOADED && !init(0))
		count(&n);
	return n;
}

/* Whether this libcuda can run the tests' kernels. */
static inline int gpu_has_kernels(void)
{
	int ok = 1;

#define GPU_HAS(field, sym) ok = ok && cu.field;
	GPU_CUDA_KERNEL_FUNCS(GPU_HAS)
#undef GPU_HAS
	return ok;
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

/*
 * gdrmap_open, reporting which backend it chose: the tests cover every
 * backend the machine has, the vulkan one included, which gdr_open leaves
 * out (test_gpu_open_rule).
 */
static inline gdr_t gpu_gdr_open(void)
{
	static const char *const names[] = { "?", "gdrdrv", "dmabuf",
					     "vulkan", "rm" };
	gdr_t g = gdrmap_open();
	int b = 0;

	CHECK(g != NULL, "gdrmap_open on a GPU machine: %s",
	      gdrmap_last_error());
	if (g && !gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &b))
		fprintf(stderr, "backend: %s\n", b > 0 && b < 5 ? names[b] : "?");
	return g;
}

/* The contexts a case starts from. */
enum gpu_start { START_NONE, START_PRIMARY, START_USER, START_OTHER,
		 NR_STARTS };

static const char *const gpu_start_names[NR_STARTS] = {
	"no current context", "its primary context",
	"a context the test created on it", "another GPU's primary context",
};

struct gpu_case {
	gdr_t g;
	int dev;		/* the GPU whose memory the case uses */
	enum gpu_start start;
	CUcontext ctx;		/* current while the case runs */
};

/* The context start means for memory of dev; NULL for none. */
static inline CUcontext gpu_start_ctx(enum gpu_start start, int dev)
{
	switch (start) {
	case START_PRIMARY:
		return cu.primary[dev];
	case START_USER:
		return cu.user[dev];
	case START_OTHER:
		return cu.primary[(dev + 1) % cu.ndev];
	default:
		return NULL;
	}
}

/*
 * The whole test: set up, then fn on every GPU from every start (as the
 * calling thread's current context), then test_done()'s exit status.
 */
static inline int gpu_run(void (*fn)(const struct gpu_case *c))
{
	struct gpu_case c;
	int dev, st;

	if (gpu_setup())
		return test_done();
	c.g = gpu_gdr_open();
	if (!c.g)
		return test_done();
	for (dev = 0; dev < cu.ndev; dev++) {
		for (st = 0; st < NR_STARTS; st++) {
			if (st == START_OTHER && cu.ndev < 2) {
				SKIP("GPU %d from another GPU's context: this machine has one GPU",
				     dev);
				continue;
			}
			c.dev = dev;
			c.start = st;
			c.ctx = gpu_start_ctx(st, dev);
			fprintf(stderr, "== GPU %d, from %s\n", dev,
				gpu_start_names[st]);
			CU_OK(cu.CtxSetCurrent(c.ctx));
			fn(&c);
			CHECK(gpu_current() == c.ctx,
			      "GPU %d from %s: the case ended in another context",
			      dev, gpu_start_names[st]);
			cu.CtxSetCurrent(NULL);
		}
	}
	CHECK_RET(gdr_close(c.g), 0);
	return test_done();
}

#endif /* GDRMAP_TEST_GPU_H */
