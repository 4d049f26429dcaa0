// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): what CUDA says about a
 * pointer (cuPointerGetAttribute[s], cuMemGetAddressRange), and the one
 * attribute that can be set.
 */
#include <string.h>

#include "shim.h"

struct ptr_info {
	int type;			/* CU_MEMORYTYPE_*, 0 if unknown */
	CUcontext ctx;			/* allocating context; NULL for VMM */
	CUdevice dev;			/* the GPU it is on */
	uint64_t start, size;		/* RANGE_START_ADDR / RANGE_SIZE */
	uint64_t buffer_id;
	uint64_t p2p_token;
	uint32_t va_space;
	uint32_t user_flags;
	struct rec *rec;		/* cuMemAlloc/cuMemAllocHost record */
	bool managed;
};

static bool ptr_lookup(uint64_t p, struct ptr_info *pi)
{
	struct nvsim_query q;
	struct rec *r;

	memset(pi, 0, sizeof(*pi));
	r = rec_find(REC_DEVICE, p, 1);
	if (r && nvsim_query_va(p, &q)) {
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->ctx = r->ctx;
		pi->dev = r->dev;
		pi->start = r->ptr;
		pi->size = r->size;
		pi->buffer_id = r->buffer_id;
		pi->p2p_token = q.p2p_token;
		pi->va_space = q.va_space;
		pi->user_flags = q.user_flags;
		pi->rec = r;
		return true;
	}
	r = rec_find(REC_MANAGED, p, 1);
	if (r) {
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->managed = true;
		pi->ctx = r->ctx;
		pi->dev = r->dev;
		pi->start = r->ptr;
		pi->size = r->size;
		pi->buffer_id = r->buffer_id;
		pi->rec = r;
		return true;
	}
	r = rec_find(REC_HOST, p, 1);
	if (r) {
		pi->type = CU_MEMORYTYPE_HOST;
		pi->ctx = r->ctx;
		pi->dev = r->dev;
		pi->start = r->ptr;
		pi->size = r->size;
		pi->buffer_id = r->buffer_id;
		pi->rec = r;
		return true;
	}
	if (nvsim_query_va(p, &q) && !(q.user_flags & UF_CUMEMALLOC)) {
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->dev = (CUdevice)q.device;
		pi->start = q.base;
		pi->size = q.size;
		/* The mappable range is the reservation the mapping is in. */
		r = rec_find(REC_RESERVE, p, 1);
		if (r) {
			pi->start = r->ptr;
			pi->size = r->size;
		}
		pi->buffer_id = q.buffer_id;
		pi->p2p_token = q.p2p_token;
		pi->va_space = q.va_space;
		pi->user_flags = q.user_flags;
		return true;
	}
	return false;
}

/* The size of each attribute's value, 0 if not supported here. */
static size_t attr_size(CUpointer_attribute a)
{
	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		return sizeof(CUcontext);
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		return sizeof(unsigned int);
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		return sizeof(CUdeviceptr);
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		return sizeof(void *);
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		return sizeof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS);
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		return sizeof(unsigned long long);
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		return sizeof(size_t);
	default:
		return 0;
	}
}

static CUresult attr_get(void *data, CUpointer_attribute a, uint64_t p,
			 struct ptr_info *pi)
{
	bool dev = pi->type == CU_MEMORYTYPE_DEVICE;
	bool alloc = pi->rec != NULL;	/* cuMemAlloc or cuMemAllocHost */
	unsigned int u = 0;
	unsigned long long ull = 0;
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tok;
	void *vp;

	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		memcpy(data, &pi->ctx, sizeof(pi->ctx));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		u = (unsigned int)pi->type;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		ull = p;
		memcpy(data, &ull, sizeof(ull));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (dev && !pi->managed)
			return CUDA_ERROR_INVALID_VALUE;
		vp = (void *)(uintptr_t)p;
		memcpy(data, &vp, sizeof(vp));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		if (!dev || !alloc || pi->managed)
			return CUDA_ERROR_INVALID_VALUE;
		pi->rec->sync_memops = true;	/* a documented side effect */
		memset(&tok, 0, sizeof(tok));
		tok.p2pToken = pi->p2p_token;
		tok.vaSpaceToken = pi->va_space;
		memcpy(data, &tok, sizeof(tok));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		u = alloc ? pi->rec->sync_memops : 1;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		ull = pi->buffer_id;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		u = pi->managed;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		u = (unsigned int)pi->dev;
		break;
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		u = dev && alloc && !pi->managed;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		ull = pi->start;
		memcpy(data, &ull, sizeof(ull));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		memcpy(data, &(size_t){ pi->size }, sizeof(size_t));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		u = 1;
		break;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		ull = dev && !alloc ? (pi->user_flags & UF_HANDLE_TYPES_MASK) : 0;
		break;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		u = dev && (pi->user_flags & UF_RDMA_CAPABLE);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (attr_size(a) == sizeof(unsigned int))
		memcpy(data, &u, sizeof(u));
	else
		memcpy(data, &ull, sizeof(ull));
	return CUDA_SUCCESS;
}

/* Under any current context, or none: the pointer names its GPU. */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
			       CUdeviceptr ptr)
{
	struct ptr_info pi;
	CUresult ret;

	if (!data || !attr_size(attribute))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	if (!ptr_lookup(ptr, &pi))
		ret = CUDA_ERROR_INVALID_VALUE;	/* not CUDA memory */
	else
		ret = attr_get(data, attribute, ptr, &pi);
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuPointerGetAttributes(unsigned int count,
				CUpointer_attribute *attributes, void **data,
				CUdeviceptr ptr)
{
	struct ptr_info pi;
	CUresult ret = CUDA_SUCCESS;
	unsigned int i;
	bool known;

	if (!count || !attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++)
		if (!data[i] || !attr_size(attributes[i]))
			return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	known = ptr_lookup(ptr, &pi);
	for (i = 0; i < count; i++) {
		/* Unlike the single query: zeros for what does not apply. */
		if (!known ||
		    attr_get(data[i], attributes[i], ptr, &pi) != CUDA_SUCCESS)
			memset(data[i], 0, attr_size(attributes[i]));
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuPointerSetAttribute(const void *value,
			       CUpointer_attribute attribute, CUdeviceptr ptr)
{
	struct rec *r;
	CUresult ret = CUDA_SUCCESS;

	if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_DEVICE, ptr, 1);
	if (r)
		r->sync_memops = *(const unsigned char *)value != 0;
	else if (!dev_range(ptr, 1))
		ret = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* Only under a context of the memory's GPU (ctx_sees). */
CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
				 CUdeviceptr dptr)
{
	struct nvsim_query q;
	uint64_t base = 0, size = 0;
	CUdevice owner = -1;
	struct rec *r;
	CUresult ret;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_DEVICE, dptr, 1);
	if (!r)
		r = rec_find(REC_MANAGED, dptr, 1);
	if (r) {
		base = r->ptr;
		size = r->size;
		owner = r->dev;
	} else if (nvsim_query_va(dptr, &q) && !(q.user_flags & UF_CUMEMALLOC)) {
		base = q.base;	/* a cuMemMap'ed range */
		size = q.size;
		owner = (CUdevice)q.device;
	}
	ret = ctx_sees(owner);
	pthread_mutex_unlock(&shim_lock);
	if (ret)
		return ret;
	if (pbase)
		*pbase = base;
	if (psize)
		*psize = size;
	return CUDA_SUCCESS;
}

SHIM_ALIAS(cuMemGetAddressRange, cuMemGetAddressRange_v2, CUresult,
	   (CUdeviceptr *, size_t *, CUdeviceptr));
