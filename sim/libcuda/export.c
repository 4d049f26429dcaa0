// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): dma-buf export of device
 * memory, cuMemGetHandleForAddressRange(DMA_BUF_FD), offered when nvsim
 * runs with dmabuf=1.
 */
#include <errno.h>

#include "shim.h"

/*
 * The export needs a current context but not the owner's: with none,
 * CUDA_ERROR_INVALID_CONTEXT (H100,
 * bench/results/h100/2026-11-23-probes/ctx-probe.txt); under another
 * GPU's context it succeeds, for legacy and VMM memory alike, unlike
 * cuMemGetAddressRange (two H200s,
 * bench/results/h200x2/2026-11-23-consumers/probes/ctx-probe.txt).
 */
/*
 * One dma-buf covers one allocation: of cuMemAlloc memory, the host pages
 * that hold it, never the rest of the 64 KiB page it was sub-allocated
 * from (whatever the driver allows there, refusing is the stricter side).
 * cuMemMap ranges nvsim checks itself.  shim_lock held.
 */
static bool legacy_range_ok(uint64_t dptr, uint64_t size, uint64_t page)
{
	struct rec *r;

	for (r = rec_list; r; r = r->next) {
		if (r->kind != REC_DEVICE || dptr + size <= r->res_base ||
		    dptr >= r->res_base + r->res_size)
			continue;
		return dptr >= (r->ptr & ~(page - 1)) &&
		       dptr + size <= ((r->ptr + r->size + page - 1) &
				       ~(page - 1));
	}
	return true;
}

CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr,
				       size_t size,
				       CUmemRangeHandleType handleType,
				       unsigned long long flags)
{
	struct nvsim_export_dmabuf e = { .va = dptr, .size = size };
	uint64_t page = host_page();
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
	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(NULL);
	pthread_mutex_unlock(&shim_lock);
	if (ret)
		return ret;
	/* dma-bufs are made of host pages, not of 64 KiB GPU pages. */
	if (dptr % page || size % page)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	if (!legacy_range_ok(dptr, size, page)) {
		pthread_mutex_unlock(&shim_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	err = nvsim_ioctl(NVSIM_IOC_EXPORT_DMABUF, &e);
	pthread_mutex_unlock(&shim_lock);
	if (err)
		return err == EOPNOTSUPP ? CUDA_ERROR_NOT_SUPPORTED :
					   errno_to_cu(err);
	*(int *)handle = e.fd;
	return CUDA_SUCCESS;
}
