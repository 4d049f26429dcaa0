// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): virtual memory management
 * (cuMemCreate on the GPU the properties name, address reservations,
 * cuMemMap).  Granularity 2 MiB; no shareable handle types.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "shim.h"

static bool prop_ok(const CUmemAllocationProp *prop)
{
	return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE;
}

/* The device a location names exists (after cuInit). */
static CUresult location_check(const CUmemLocation *loc)
{
	CHECK_DEV(loc->id);
	return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity,
				       const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	CUresult ret;

	if (!granularity || !prop_ok(prop) ||
	    (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	ret = location_check(&prop->location);
	if (ret)
		return ret;
	*granularity = SHIM_VMM_GRANULARITY;
	return CUDA_SUCCESS;
}

/* On the GPU prop->location names, whatever the current context. */
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct nvsim_mem_create c = { 0 };
	CUresult ret;
	int err;

	if (!handle || !prop_ok(prop) || flags || !size ||
	    size % SHIM_VMM_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	ret = location_check(&prop->location);
	if (ret)
		return ret;
	/* No shareable handles on the simulator (no fd/fabric export). */
	if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (size > shim_devs[prop->location.id].info.bar_size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c.size = size;
	c.device = (uint32_t)prop->location.id;
	c.user_flags = (uint32_t)prop->requestedHandleTypes &
		       UF_HANDLE_TYPES_MASK;
	if (prop->allocFlags.gpuDirectRDMACapable)
		c.user_flags |= UF_RDMA_CAPABLE;
	pthread_mutex_lock(&shim_lock);
	err = nvsim_ioctl(NVSIM_IOC_MEM_CREATE, &c);
	pthread_mutex_unlock(&shim_lock);
	if (err)
		return errno_to_cu(err);
	*handle = c.handle;
	return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct nvsim_mem_release r = { .handle = (uint32_t)handle };
	int err;

	CHECK_INIT();
	if (!handle || handle > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	streams_drain();
	err = nvsim_ioctl(NVSIM_IOC_MEM_RELEASE, &r);
	pthread_mutex_unlock(&shim_lock);
	return err ? errno_to_cu(err) : CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
			     CUdeviceptr addr, unsigned long long flags)
{
	uint64_t va = 0;
	struct rec *r;
	void *p;

	(void)addr;
	if (!ptr || !size || size % SHIM_VMM_GRANULARITY || flags ||
	    (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	if (alignment < SHIM_VMM_GRANULARITY)
		alignment = SHIM_VMM_GRANULARITY;
	r = calloc(1, sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* The address hint is honoured when that range is free. */
	if (addr && !(addr % alignment)) {
		p = mmap((void *)(uintptr_t)addr, size, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			 MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED && (uintptr_t)p == addr)
			va = addr;
		else if (p != MAP_FAILED)
			munmap(p, size);
	}
	if (!va)
		va = reserve_va(size, alignment);
	if (!va) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->kind = REC_RESERVE;
	r->res_base = r->ptr = va;
	r->res_size = r->size = size;
	pthread_mutex_lock(&shim_lock);
	rec_add(r);
	pthread_mutex_unlock(&shim_lock);
	*ptr = va;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct nvsim_unmap u = { .va = ptr, .size = size };
	struct rec *r;
	CUresult ret = CUDA_SUCCESS;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_RESERVE, ptr, 1);
	if (!r || r->ptr != ptr || r->size != size) {
		ret = CUDA_ERROR_INVALID_VALUE;
	} else {
		/* Whatever is still mapped there goes with it. */
		nvsim_ioctl(NVSIM_IOC_UNMAP, &u);
		rec_unlink(r);
		release_va(r->res_base, r->res_size);
		free(r);
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct nvsim_map m = { .va = ptr, .size = size, .offset = offset,
			       .handle = (uint32_t)handle };
	CUresult ret = CUDA_ERROR_INVALID_VALUE;
	int err;

	CHECK_INIT();
	if (flags || !size || size % SHIM_VMM_GRANULARITY ||
	    offset % SHIM_VMM_GRANULARITY || ptr % SHIM_VMM_GRANULARITY ||
	    !handle || handle > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	if (!rec_find(REC_RESERVE, ptr, size))
		goto out;
	err = nvsim_ioctl(NVSIM_IOC_MAP, &m);
	if (err == EEXIST)
		ret = CUDA_ERROR_ALREADY_MAPPED;
	else
		ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct nvsim_unmap u = { .va = ptr, .size = size };
	CUresult ret = CUDA_ERROR_INVALID_VALUE;
	int err;

	CHECK_INIT();
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	streams_drain();
	if (rec_find(REC_RESERVE, ptr, size)) {
		err = nvsim_ioctl(NVSIM_IOC_UNMAP, &u);	/* fires callbacks */
		ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
			const CUmemAccessDesc *desc, size_t count)
{
	struct nvsim_query q;
	uint64_t p = ptr, end = ptr + size;
	CUresult ret = CUDA_SUCCESS;
	size_t i;

	if (!desc || !count || !size || end < ptr)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		    desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		    desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			return CUDA_ERROR_INVALID_VALUE;
		ret = location_check(&desc[i].location);
		if (ret)
			return ret;
	}
	/* Access is not enforced on the simulator: check it is all mapped. */
	pthread_mutex_lock(&shim_lock);
	while (p < end) {
		if (!nvsim_query_va(p, &q) || (q.user_flags & UF_CUMEMALLOC)) {
			ret = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		p = q.base + q.size;
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* Under any current context, or none (measured on an H100). */
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
				     void *addr)
{
	struct nvsim_mem_retain r = { .va = (uintptr_t)addr };
	struct nvsim_query q;
	CUresult ret = CUDA_ERROR_INVALID_VALUE;
	int err;

	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	/* Only cuMemMap'ed memory has a generic allocation handle. */
	if (nvsim_query_va(r.va, &q) && !(q.user_flags & UF_CUMEMALLOC)) {
		err = nvsim_ioctl(NVSIM_IOC_MEM_RETAIN, &r);
		ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&shim_lock);
	if (ret == CUDA_SUCCESS)
		*handle = r.handle;
	return ret;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
					CUmemGenericAllocationHandle handle)
{
	struct nvsim_mem_info mi = { .handle = (uint32_t)handle };
	int err;

	if (!prop || !handle || handle > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	err = nvsim_ioctl(NVSIM_IOC_MEM_INFO, &mi);
	pthread_mutex_unlock(&shim_lock);
	if (err)
		return errno_to_cu(err);
	memset(prop, 0, sizeof(*prop));
	prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop->requestedHandleTypes = (int)(mi.user_flags & UF_HANDLE_TYPES_MASK);
	prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop->location.id = (int)mi.device;
	prop->allocFlags.gpuDirectRDMACapable =
		!!(mi.user_flags & UF_RDMA_CAPABLE);
	return CUDA_SUCCESS;
}

CUresult cuMemExportToShareableHandle(void *shareable,
				      CUmemGenericAllocationHandle handle,
				      CUmemAllocationHandleType type,
				      unsigned long long flags)
{
	(void)type;
	if (!shareable || !handle || flags)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	return CUDA_ERROR_NOT_SUPPORTED;
}
