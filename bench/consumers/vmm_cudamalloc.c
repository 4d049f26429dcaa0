// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD library for the UCX part of the consumer suite: the CUDA
 * allocations of the program it is loaded into (cudaMalloc, and
 * cuMemAlloc called through the dynamic linker, as UCX's cuda_copy
 * allocator calls it for ucx_perftest's UCP buffers) are served by
 * gdrmap_mem_alloc (cuMemCreate with the POSIX fd handle type,
 * GPUDirect RDMA capable), the memory gdrmap's module-free backend maps
 * for the CPU.  Run under it, ucx_perftest measures the same transfers
 * on memory that gdr_copy reaches through a real mapping, as an
 * application that allocates so (PyTorch with expandable segments,
 * NCCL) would see.  It says on stderr how many allocations it served.
 *
 * Everything else, frees of NULL and of pointers it did not hand out
 * included, goes to CUDA.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gdrapi.h"

#define MAX_ALLOCS 4096

typedef int cuda_error_t;	/* cudaError_t: 0 is cudaSuccess */
#define CUDA_ERROR_MEMORY_ALLOCATION 2

static unsigned long allocs[MAX_ALLOCS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

cuda_error_t cudaMalloc(void **p, size_t size);
cuda_error_t cudaFree(void *p);
int cuMemAlloc_v2(unsigned long long *p, size_t size);
int cuMemFree_v2(unsigned long long p);

static int served;

__attribute__((destructor)) static void report(void)
{
	fprintf(stderr, "vmm_cudamalloc: %d allocations served by gdrmap_mem_alloc\n",
		served);
}

/* The real sym: the next definition, or libcuda's (which the CUDA
 * runtime dlopens, out of RTLD_NEXT's reach). */
static void *next(const char *sym)
{
	void *fn = dlsym(RTLD_NEXT, sym), *cuda;

	if (!fn && !strncmp(sym, "cu", 2) && strncmp(sym, "cuda", 4)) {
		cuda = dlopen("libcuda.so.1", RTLD_NOW);
		fn = cuda ? dlsym(cuda, sym) : NULL;
	}
	if (!fn)
		fprintf(stderr, "vmm_cudamalloc: no %s after this library\n", sym);
	return fn;
}

/* An allocation of size bytes on dev; 0 if it failed. */
static unsigned long alloc(int dev, size_t size)
{
	unsigned long d = 0;
	int i;

	if (gdrmap_mem_alloc(dev, size ? size : 1, &d)) {
		fprintf(stderr, "vmm_cudamalloc: gdrmap_mem_alloc(%d, %zu): %s\n",
			dev, size, gdrmap_last_error());
		return 0;
	}
	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_ALLOCS && allocs[i]; i++)
		;
	if (i < MAX_ALLOCS) {
		allocs[i] = d;
		served++;
	}
	pthread_mutex_unlock(&lock);
	if (i == MAX_ALLOCS) {
		gdrmap_mem_free(d);
		return 0;
	}
	return d;
}

/* Whether p is one of ours; forgotten if so. */
static int forget(unsigned long p)
{
	int i, found = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; p && i < MAX_ALLOCS && !found; i++) {
		if (allocs[i] == p) {
			allocs[i] = 0;
			found = 1;
		}
	}
	pthread_mutex_unlock(&lock);
	return found;
}

cuda_error_t cudaMalloc(void **p, size_t size)
{
	cuda_error_t (*get_device)(int *) = next("cudaGetDevice");
	int dev = 0;

	if (!p || !get_device || get_device(&dev))
		return CUDA_ERROR_MEMORY_ALLOCATION;
	*p = (void *)alloc(dev, size);
	return *p ? 0 : CUDA_ERROR_MEMORY_ALLOCATION;
}

cuda_error_t cudaFree(void *p)
{
	cuda_error_t (*real_free)(void *);

	if (forget((unsigned long)p))
		return gdrmap_mem_free((unsigned long)p) ? 1 : 0;
	real_free = next("cudaFree");
	return real_free ? real_free(p) : 1;
}

/* The driver API: the device of the current context. */
int cuMemAlloc_v2(unsigned long long *p, size_t size)
{
	int (*ctx_device)(int *) = next("cuCtxGetDevice");
	int dev = 0;

	if (!p || !ctx_device || ctx_device(&dev))
		return 201;	/* CUDA_ERROR_INVALID_CONTEXT */
	*p = alloc(dev, size);
	return *p ? 0 : 2;	/* CUDA_ERROR_OUT_OF_MEMORY */
}

int cuMemFree_v2(unsigned long long p)
{
	int (*real_free)(unsigned long long);

	if (forget(p))
		return gdrmap_mem_free(p) ? 1 : 0;
	real_free = next("cuMemFree_v2");
	return real_free ? real_free(p) : 1;
}
