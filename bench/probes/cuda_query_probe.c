// SPDX-License-Identifier: MIT
/*
 * What each CUDA question a DMA copy of gdrmap_copy_* may ask costs,
 * beside the copy itself: cuPointerGetAttributes on GPU memory (the five
 * attributes the library asked, and the seven it asks now, with the
 * allocation's range), on pinned and on pageable host memory (the host
 * buffer's kind), cuPointerGetAttribute of the buffer ID alone,
 * cuCtxGetCurrent, and a 32 KiB cuMemcpyDtoHAsync + cuStreamSynchronize
 * from pinned memory; "empty" is the clock's own cost, in every figure.
 * The seven attributes and the buffer ID alone are also asked of memory
 * made by cuMemCreate and mapped with cuMemMap (what gdrmap_mem_alloc
 * gives, and the copy tables time), names ending in _vmm.
 * Interleaved round by round; p50 and minimum, in microseconds.
 *
 * Build: cc -O2 -o cuda_query_probe cuda_query_probe.c \
 *            -I/usr/local/cuda/include -lcuda
 * usage: cuda_query_probe [ROUNDS]
 */
#include <stdlib.h>
#include <string.h>

#include "probe.h"

#define MAXR	100000

enum { DEV5, DEV7, HOST_PINNED, HOST_PAGEABLE, CTX_GET, DTOH, BUF_ID, EMPTY,
       DEV7_VMM, BUF_ID_VMM, NMETHODS };
static const char *const names[NMETHODS] = {
	"dev5attr", "dev7attr", "host4attr_pinned", "host4attr_pageable",
	"ctxget", "dtoh32K+sync", "bufid1attr", "empty", "dev7attr_vmm",
	"bufid1attr_vmm",
};

/* 2 MiB of GPU 0's memory by cuMemCreate, mapped read-write. */
static CUdeviceptr vmm_alloc(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAccessDesc access = {
		.location = prop.location,
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle mem;
	CUdeviceptr va;
	size_t len = 2 << 20;

	MUST(cuMemCreate(&mem, len, &prop, 0));
	MUST(cuMemAddressReserve(&va, len, 0, 0, 0));
	MUST(cuMemMap(va, len, 0, mem, 0));
	MUST(cuMemSetAccess(va, len, &access, 1));
	return va;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000;
	CUpointer_attribute da[] = {
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_IS_MANAGED,
		CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		CU_POINTER_ATTRIBUTE_CONTEXT,
		CU_POINTER_ATTRIBUTE_BUFFER_ID,
		CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	};
	CUpointer_attribute ha[] = {
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_IS_MANAGED,
		CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	};
	unsigned int type, managed;
	unsigned long long id;
	int drv, dev, i;
	CUdeviceptr d, v, start;
	CUcontext ctx, cur;
	CUstream st;
	size_t size;
	void *dd[] = { &type, &managed, &dev, &ctx, &id, &start, &size };
	void *hd[] = { &type, &managed, &start, &size };
	char name[128];
	double *t, a;
	void *h, *pg;

	if (rounds < 1 || rounds > MAXR) {
		fprintf(stderr, "ROUNDS: 1 to %d\n", MAXR);
		return 2;
	}
	t = calloc((size_t)NMETHODS * rounds, sizeof(*t));
	pg = aligned_alloc(4096, 1 << 20);
	if (!t || !pg)
		return 1;
	memset(pg, 1, 1 << 20);
	probe_cuda_start(name, sizeof(name), &drv);
	MUST(cuMemAlloc(&d, 1 << 20));
	v = vmm_alloc();
	MUST(cuMemAllocHost(&h, 1 << 20));
	MUST(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	for (i = 0; i < 100; i++) {
		MUST(cuMemcpyDtoHAsync(h, d, 32768, st));
		MUST(cuStreamSynchronize(st));
	}
	for (i = 0; i < rounds; i++) {
		a = now_us();
		MUST(cuPointerGetAttributes(5, da, dd, d));
		t[DEV5 * rounds + i] = now_us() - a;
		a = now_us();
		MUST(cuPointerGetAttributes(7, da, dd, d));
		t[DEV7 * rounds + i] = now_us() - a;
		a = now_us();
		MUST(cuPointerGetAttributes(4, ha, hd, (CUdeviceptr)h));
		t[HOST_PINNED * rounds + i] = now_us() - a;
		a = now_us();
		/* Pageable memory: CUDA answers with empty values. */
		cuPointerGetAttributes(4, ha, hd, (CUdeviceptr)pg);
		t[HOST_PAGEABLE * rounds + i] = now_us() - a;
		a = now_us();
		MUST(cuCtxGetCurrent(&cur));
		t[CTX_GET * rounds + i] = now_us() - a;
		a = now_us();
		MUST(cuMemcpyDtoHAsync(h, d, 32768, st));
		MUST(cuStreamSynchronize(st));
		t[DTOH * rounds + i] = now_us() - a;
		a = now_us();
		MUST(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					   d));
		t[BUF_ID * rounds + i] = now_us() - a;
		a = now_us();
		t[EMPTY * rounds + i] = now_us() - a;
		a = now_us();
		MUST(cuPointerGetAttributes(7, da, dd, v));
		t[DEV7_VMM * rounds + i] = now_us() - a;
		a = now_us();
		MUST(cuPointerGetAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID,
					   v));
		t[BUF_ID_VMM * rounds + i] = now_us() - a;
	}
	printf("# %s, CUDA driver %d, %d rounds, p50 us (min)\n", name, drv,
	       rounds);
	probe_print(t, rounds, NMETHODS, names, 3);
	return 0;
}
