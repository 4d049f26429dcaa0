// SPDX-License-Identifier: MIT
/*
 * LD_PRELOAD library for the UCX part of the consumer suite: cudaMalloc
 * and cudaFree of the program it is loaded into are served by
 * gdrmap_mem_alloc (cuMemCreate with the POSIX fd handle type,
 * GPUDirect RDMA capable), the memory gdrmap's module-free backend maps
 * for the CPU.  ucx_perftest allocates its CUDA buffers with cudaMalloc;
 * run under this library, it measures the same transfers on memory that
 * gdr_copy reaches through a real mapping, as an application that
 * allocates so (PyTorch with expandable segments, NCCL) would see.
 *
 * Everything else, cudaFree(NULL) and pointers it did not hand out
 * included, goes to the CUDA runtime.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "gdrapi.h"

#define MAX_ALLOCS 4096

typedef int cuda_error_t;	/* cudaError_t: 0 is cudaSuccess */
#define CUDA_ERROR_MEMORY_ALLOCATION 2

static unsigned long allocs[MAX_ALLOCS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

cuda_error_t cudaMalloc(void **p, size_t size);
cuda_error_t cudaFree(void *p);

static void *next(const char *sym)
{
	void *fn = dlsym(RTLD_NEXT, sym);

	if (!fn)
		fprintf(stderr, "vmm_cudamalloc: no %s after this library\n", sym);
	return fn;
}

cuda_error_t cudaMalloc(void **p, size_t size)
{
	cuda_error_t (*get_device)(int *) = next("cudaGetDevice");
	unsigned long d = 0;
	int dev = 0, i;

	if (!p || !get_device || get_device(&dev))
		return CUDA_ERROR_MEMORY_ALLOCATION;
	if (gdrmap_mem_alloc(dev, size ? size : 1, &d)) {
		fprintf(stderr, "vmm_cudamalloc: gdrmap_mem_alloc(%d, %zu): %s\n",
			dev, size, gdrmap_last_error());
		return CUDA_ERROR_MEMORY_ALLOCATION;
	}
	pthread_mutex_lock(&lock);
	for (i = 0; i < MAX_ALLOCS && allocs[i]; i++)
		;
	if (i < MAX_ALLOCS)
		allocs[i] = d;
	pthread_mutex_unlock(&lock);
	if (i == MAX_ALLOCS) {
		gdrmap_mem_free(d);
		return CUDA_ERROR_MEMORY_ALLOCATION;
	}
	*p = (void *)d;
	return 0;
}

cuda_error_t cudaFree(void *p)
{
	cuda_error_t (*real_free)(void *);
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; p && i < MAX_ALLOCS; i++) {
		if (allocs[i] == (unsigned long)p) {
			allocs[i] = 0;
			break;
		}
	}
	pthread_mutex_unlock(&lock);
	if (p && i < MAX_ALLOCS)
		return gdrmap_mem_free((unsigned long)p) ? 1 : 0;
	real_free = next("cudaFree");
	return real_free ? real_free(p) : 1;
}
