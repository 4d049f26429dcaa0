// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): dma-buf export of device
 * memory, cuMemGetHandleForAddressRange(DMA_BUF_FD), offered when nvsim
 * runs with dmabuf=1.
 */
#include <errno.h>
#include <unistd.h>

#include "shim.h"

/*
 * The GPU whose memory [p, +size) is (or -1); the call answers only under
 * one of its contexts (ctx_sees).  No context: CUDA_ERROR_INVALID_CONTEXT,
 * measured on an H100 (bench/results/h100/2026-11-23-probes/ctx-probe.txt).
 * Another GPU's context: CUDA_ERROR_NOT_FOUND, as cuMemGetAddressRange
 * answers there; INFERRED, not yet measured for this call
 * (bench/probes/cuda_ctx_probe.c prints it on a multi-GPU machine).
 */
static CUresult export_owner_ok(uint64_t p)
{
	struct nvsim_query q;
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	if (nvsim_query_va(p, &q))
		ret = ctx_sees((CUdevice)q.device);
	else
		ret = need_ctx(NULL);	/* not device memory: nvsim says so */
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr,
				       size_t size,
				       CUmemRangeHandleType handleType,
				       unsigned long long flags)
{
	struct nvsim_export_dmabuf e = { .va = dptr, .size = size };
	long page = sysconf(_SC_PAGESIZE);
	CUresult ret;
	int err;

	if (!handle || !dptr || !size ||
	    handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD ||
	    (flags & ~(unsigned long long)CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	/* nvsim's parameters: the same for every GPU. */
	if (!(nvsim_caps(0) & NVSIM_CAP_DMABUF))
		return CUDA_ERROR_NOT_SUPPORTED;
	/* Forcing the PCIe mapping type is refused, as on an x86 H200. */
	if (flags & CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE)
		return CUDA_ERROR_NOT_SUPPORTED;
	ret = export_owner_ok(dptr);
	if (ret)
		return ret;
	/* dma-bufs are made of host pages, not of 64 KiB GPU pages. */
	if (page <= 0 || dptr % (unsigned long)page || size % (unsigned long)page)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	err = nvsim_ioctl(NVSIM_IOC_EXPORT_DMABUF, &e);
	pthread_mutex_unlock(&shim_lock);
	if (err)
		return err == EOPNOTSUPP ? CUDA_ERROR_NOT_SUPPORTED :
					   errno_to_cu(err);
	*(int *)handle = e.fd;
	return CUDA_SUCCESS;
}
