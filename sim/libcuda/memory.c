// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): the cuMemAlloc family
 * (on the current context's device, owned by that context), host and
 * managed memory (CPU memory here), and the records of everything this
 * process allocated or reserved, which the other files look addresses up
 * in.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim.h"

#define SHIM_SUBALLOC_OFFSET 0x200

struct rec *rec_list;
static uint64_t next_host_buffer_id = 1ULL << 62;

struct rec *rec_find(enum rec_kind kind, uint64_t p, uint64_t len)
{
	struct rec *r;

	for (r = rec_list; r; r = r->next) {
		if (r->kind != kind)
			continue;
		if (p >= r->ptr && p - r->ptr < r->size)
			return r->size - (p - r->ptr) >= len ? r : NULL;
	}
	return NULL;
}

void rec_add(struct rec *r)
{
	r->next = rec_list;
	rec_list = r;
}

void rec_unlink(struct rec *x)
{
	struct rec **pp;

	for (pp = &rec_list; *pp; pp = &(*pp)->next) {
		if (*pp == x) {
			*pp = x->next;
			return;
		}
	}
}

/* The CPU's page size: 4 KiB on x86, 4, 16 or 64 KiB on arm64. */
uint64_t host_page(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (uint64_t)page : 4096;
}

/* Reserve size bytes of address space aligned to align (a power of 2). */
uint64_t reserve_va(uint64_t size, uint64_t align)
{
	uint64_t base, start;
	void *p;

	if (size > UINT64_MAX - align)
		return 0;
	p = mmap(NULL, size + align, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	base = (uintptr_t)p;
	start = (base + align - 1) & ~(align - 1);
	if (start > base)
		munmap(p, start - base);
	if (base + size + align > start + size)
		munmap((void *)(uintptr_t)(start + size),
		       base + size + align - (start + size));
	return start;
}

void release_va(uint64_t base, uint64_t size)
{
	munmap((void *)(uintptr_t)base, size);
}

/*
 * Is [p, p + len) device memory?  Inside one cuMemAlloc allocation (its
 * user range, not the padding around it), or one cuMemMap mapping.
 */
bool dev_range(uint64_t p, uint64_t len)
{
	struct nvsim_query q;
	struct rec *r;

	for (r = rec_list; r; r = r->next)
		if (r->kind == REC_DEVICE && p >= r->res_base &&
		    p - r->res_base < r->res_size)
			return p >= r->ptr && p - r->ptr < r->size &&
			       len <= r->size - (p - r->ptr);
	if (!nvsim_query_va(p, &q))
		return false;
	return len <= q.size - (p - q.base);
}

/* Is p anywhere in device address space (reserved, never a CPU address)? */
bool dev_space(uint64_t p)
{
	struct nvsim_query q;
	struct rec *r;

	for (r = rec_list; r; r = r->next)
		if ((r->kind == REC_DEVICE || r->kind == REC_RESERVE) &&
		    p >= r->res_base &&
		    p - r->res_base < r->res_size)
			return true;
	return nvsim_query_va(p, &q);
}

/* Is [p, p + len) inside one managed allocation (CPU memory here)? */
bool managed_range(uint64_t p, uint64_t len)
{
	struct rec *r = rec_find(REC_MANAGED, p, len ? len : 1);

	return r != NULL;
}

/* Freeing memory waits for the copies queued on streams (stream.c), as
 * the driver's frees do. */
static CUresult free_device_rec(struct rec *r)
{
	struct nvsim_unmap u = { .va = r->res_base, .size = r->res_size };
	int err;

	streams_drain();
	err = nvsim_ioctl(NVSIM_IOC_UNMAP, &u);

	/* The callbacks of pins on the memory have run by now. */
	rec_unlink(r);
	release_va(r->res_base, r->res_size);
	free(r);
	return err ? errno_to_cu(err) : CUDA_SUCCESS;
}

static void free_host_rec(struct rec *r)
{
	streams_drain();
	rec_unlink(r);
	release_va(r->res_base, r->res_size);
	free(r);
}

/* Context teardown: free the memory the context owns. */
void free_ctx_memory(CUcontext c)
{
	struct rec *r, *next;

	for (r = rec_list; r; r = next) {
		next = r->next;
		if (r->ctx != c)
			continue;
		if (r->kind == REC_DEVICE)
			free_device_rec(r);
		else if (r->kind == REC_HOST || r->kind == REC_MANAGED)
			free_host_rec(r);
	}
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct nvsim_alloc a = { 0 };
	uint64_t off, len, align, va;
	CUcontext ctx;
	struct rec *r;
	CUresult ret;
	int err;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(&ctx);
	if (ret)
		goto out;
	ret = CUDA_ERROR_OUT_OF_MEMORY;
	if (bytesize > shim_devs[ctx->dev].info.bar_size)
		goto out;

	/* Small allocations are sub-allocated, not 64 KiB aligned (H200). */
	if (shim_alloc_offset >= 0)
		off = (uint64_t)shim_alloc_offset;
	else
		off = bytesize < SHIM_PAGE ? SHIM_SUBALLOC_OFFSET : 0;
	len = (off + bytesize + SHIM_PAGE - 1) & ~(SHIM_PAGE - 1);
	align = len >= SHIM_VMM_GRANULARITY ? SHIM_VMM_GRANULARITY : SHIM_PAGE;

	r = calloc(1, sizeof(*r));
	if (!r)
		goto out;
	va = reserve_va(len, align);
	if (!va) {
		free(r);
		goto out;
	}
	a.va = va;
	a.size = len;
	a.user_flags = UF_CUMEMALLOC | UF_RDMA_CAPABLE;
	a.device = (uint32_t)ctx->dev;
	err = nvsim_ioctl(NVSIM_IOC_ALLOC, &a);
	if (err) {
		release_va(va, len);
		free(r);
		ret = errno_to_cu(err);
		goto out;
	}
	r->kind = REC_DEVICE;
	r->res_base = va;
	r->res_size = len;
	r->ptr = va + off;
	r->size = bytesize;
	r->ctx = ctx;
	r->dev = ctx->dev;
	r->buffer_id = a.buffer_id;
	rec_add(r);
	*dptr = r->ptr;
	ret = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct rec *r;
	CUresult ret;

	CHECK_INIT();
	if (!dptr)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_DEVICE, dptr, 1);
	if (r && r->ptr == dptr) {
		ret = free_device_rec(r);
	} else {
		r = rec_find(REC_MANAGED, dptr, 1);
		if (r && r->ptr == dptr) {
			free_host_rec(r);
			ret = CUDA_SUCCESS;
		} else {
			ret = CUDA_ERROR_INVALID_VALUE;
		}
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* CPU memory recorded as kind (cuMemAllocHost, cuMemAllocManaged). */
static CUresult alloc_cpu_mem(void **pp, size_t bytesize, enum rec_kind kind)
{
	uint64_t len, va, page = host_page();
	CUcontext ctx;
	struct rec *r;
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(&ctx);
	if (ret)
		goto out;
	ret = CUDA_ERROR_OUT_OF_MEMORY;
	len = ((uint64_t)bytesize + page - 1) & ~(page - 1);
	if (len < bytesize)
		goto out;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto out;
	va = (uintptr_t)mmap(NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (va == (uintptr_t)MAP_FAILED) {
		free(r);
		goto out;
	}
	r->kind = kind;
	r->res_base = r->ptr = va;
	r->res_size = len;
	r->size = bytesize;
	r->ctx = ctx;
	r->dev = ctx->dev;
	r->buffer_id = next_host_buffer_id++;
	rec_add(r);
	*pp = (void *)(uintptr_t)va;
	ret = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	return alloc_cpu_mem(pp, bytesize, REC_HOST);
}

/* PORTABLE, DEVICEMAP and WRITECOMBINED change nothing here. */
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	if (!pp || !bytesize || (flags & ~0x7u))
		return CUDA_ERROR_INVALID_VALUE;
	return alloc_cpu_mem(pp, bytesize, REC_HOST);
}

/*
 * Managed memory: ordinary CPU memory here (the simulated GPU runs no
 * code), known to CUDA as managed, so that it can be told apart, and
 * never device memory that nvidia_p2p_get_pages would accept.
 */
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
			   unsigned int flags)
{
	void *p = NULL;
	CUresult ret;

	if (!dptr || !bytesize ||
	    (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	ret = alloc_cpu_mem(&p, bytesize, REC_MANAGED);
	if (ret == CUDA_SUCCESS)
		*dptr = (uintptr_t)p;
	return ret;
}

CUresult cuMemFreeHost(void *p)
{
	struct rec *r;
	CUresult ret = CUDA_SUCCESS;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_HOST, (uintptr_t)p, 1);
	if (!r || r->ptr != (uintptr_t)p)
		ret = CUDA_ERROR_INVALID_VALUE;
	else
		free_host_rec(r);
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

SHIM_ALIAS(cuMemAlloc, cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t));
SHIM_ALIAS(cuMemFree, cuMemFree_v2, CUresult, (CUdeviceptr));
SHIM_ALIAS(cuMemAllocHost, cuMemAllocHost_v2, CUresult, (void **, size_t));
