// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): copies and memsets.  They
 * need a current context, any one: with unified addressing a pointer says
 * which GPU's memory it is, and a device-to-device copy may go from one
 * GPU to another.  Ranges must lie inside one allocation's user range or
 * one cuMemMap mapping.  Everything is synchronous but a copy to the GPU
 * on a stream, which reads its source only when something waits for it
 * (stream.c): the driver's latest moment, the harsher side.
 */
#include <string.h>

#include "shim.h"

/*
 * A synchronous operation runs on the legacy default stream, which first
 * waits for the work queued on the context's blocking streams (not on its
 * non-blocking ones).  shim_lock held.
 */
static CUresult legacy_begin(void)
{
	CUcontext ctx;
	CUresult ret = need_ctx(&ctx);

	if (!ret)
		streams_drain_legacy(ctx);
	return ret;
}

static CUresult do_memset(CUdeviceptr dst, uint32_t value, size_t n,
			  uint32_t elem)
{
	struct nvsim_memset m = { .va = dst, .count = n, .value = value,
				  .elem_size = elem };
	CUresult ret;
	int err;

	pthread_mutex_lock(&shim_lock);
	ret = legacy_begin();
	if (ret)
		goto out;
	ret = CUDA_ERROR_INVALID_VALUE;
	if (n > UINT64_MAX / elem || dst % elem)
		goto out;
	if (managed_range(dst, n * elem)) {
		uint8_t v8 = (uint8_t)value;
		uint16_t v16 = (uint16_t)value;
		const void *v = elem == 1 ? (const void *)&v8 :
				elem == 2 ? (const void *)&v16 : &value;

		for (size_t i = 0; i < n; i++)
			memcpy((char *)(uintptr_t)dst + i * elem, v, elem);
		ret = CUDA_SUCCESS;
		goto out;
	}
	if (!dev_range(dst, n ? n * elem : 1))
		goto out;
	err = nvsim_ioctl(NVSIM_IOC_MEMSET, &m);
	ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
	return do_memset(dst, uc, n, 1);
}

CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short us, size_t n)
{
	return do_memset(dst, us, n, 2);
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
	return do_memset(dst, ui, n, 4);
}

/* Whether n bytes at dev may be copied to or from the host. */
static bool copyable(CUdeviceptr dev, const void *host, size_t n)
{
	return !n || (host && (managed_range(dev, n) || dev_range(dev, n)));
}

/* Host <-> device copy of n bytes: dev is the GPU side, host the CPU's.
 * shim_lock held. */
static CUresult host_dev_copy_locked(CUdeviceptr dev, void *host,
				     size_t n, bool to_dev)
{
	if (!copyable(dev, host, n))
		return CUDA_ERROR_INVALID_VALUE;
	if (!n)
		return CUDA_SUCCESS;
	if (managed_range(dev, n)) {
		if (to_dev)
			memcpy((void *)(uintptr_t)dev, host, n);
		else
			memcpy(host, (void *)(uintptr_t)dev, n);
		return CUDA_SUCCESS;
	}
	return dev_rw(dev, host, n, to_dev);
}

static CUresult host_dev_copy(CUdeviceptr dev, void *host, size_t n,
			      bool to_dev)
{
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = legacy_begin();
	if (!ret)
		ret = host_dev_copy_locked(dev, host, n, to_dev);
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/*
 * An asynchronous copy, done at once: on a stream usable now, and, the
 * stricter side of the driver, for device memory only from the context
 * that allocated it (cuMemAlloc) or from one of its GPU (cuMemMap).
 */
static CUresult async_copy(CUdeviceptr dev, void *host, size_t n,
			   CUstream stream, bool to_dev)
{
	struct nvsim_query q;
	struct rec *r;
	CUcontext ctx;
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = stream_use(stream, &ctx);
	if (!ret) {
		r = rec_find(REC_DEVICE, dev, n ? n : 1);
		if (r && r->ctx != ctx)
			ret = CUDA_ERROR_INVALID_VALUE;
		else if (!r && nvsim_query_va(dev, &q) &&
			 (CUdevice)q.device != ctx->dev)
			ret = CUDA_ERROR_INVALID_VALUE;
		else if (!copyable(dev, host, n))
			ret = CUDA_ERROR_INVALID_VALUE;
	}
	if (!ret && stream && to_dev && n) {
		stream_queue(stream, dev, host, n, managed_range(dev, n));
	} else if (!ret) {
		/* After the copies queued on the stream before it. */
		if (stream)
			stream_run(stream, UINT64_MAX);
		else
			streams_drain_legacy(ctx);
		ret = host_dev_copy_locked(dev, host, n, to_dev);
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
			      CUstream stream)
{
	return async_copy(dst, (void *)src, n, stream, true);
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
			      CUstream stream)
{
	return async_copy(src, dst, n, stream, false);
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	return host_dev_copy(dst, (void *)src, n, true);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	return host_dev_copy(src, dst, n, false);
}

/* Device to device, on one GPU or from one to another. */
static CUresult dev_copy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	struct nvsim_copy c = { .dst = dst, .src = src, .size = n };
	int err = nvsim_ioctl(NVSIM_IOC_COPY, &c);

	return err ? errno_to_cu(err) : CUDA_SUCCESS;
}

/* Unified addressing: either side may be host or device memory. */
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	bool ddev, sdev;
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = legacy_begin();
	if (ret || !n)
		goto out;
	ret = CUDA_ERROR_INVALID_VALUE;
	if (!dst || !src)
		goto out;
	ddev = dev_range(dst, n);
	sdev = dev_range(src, n);
	/* Device address space outside an allocation is invalid. */
	if ((!ddev && dev_space(dst)) || (!sdev && dev_space(src)))
		goto out;
	if (ddev && sdev) {
		ret = dev_copy(dst, src, n);
	} else if (ddev) {
		ret = dev_rw(dst, (void *)(uintptr_t)src, n, true);
	} else if (sdev) {
		ret = dev_rw(src, (void *)(uintptr_t)dst, n, false);
	} else {
		memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
		ret = CUDA_SUCCESS;
	}
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = legacy_begin();
	if (!ret && n)
		ret = dev_range(dst, n) && dev_range(src, n) ?
		      dev_copy(dst, src, n) : CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

SHIM_ALIAS(cuMemsetD8, cuMemsetD8_v2, CUresult,
	   (CUdeviceptr, unsigned char, size_t));
SHIM_ALIAS(cuMemsetD16, cuMemsetD16_v2, CUresult,
	   (CUdeviceptr, unsigned short, size_t));
SHIM_ALIAS(cuMemsetD32, cuMemsetD32_v2, CUresult,
	   (CUdeviceptr, unsigned int, size_t));
SHIM_ALIAS(cuMemcpyHtoD, cuMemcpyHtoD_v2, CUresult,
	   (CUdeviceptr, const void *, size_t));
SHIM_ALIAS(cuMemcpyDtoH, cuMemcpyDtoH_v2, CUresult,
	   (void *, CUdeviceptr, size_t));
SHIM_ALIAS(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, CUresult,
	   (CUdeviceptr, const void *, size_t, CUstream));
SHIM_ALIAS(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, CUresult,
	   (void *, CUdeviceptr, size_t, CUstream));
SHIM_ALIAS(cuMemcpyDtoD, cuMemcpyDtoD_v2, CUresult,
	   (CUdeviceptr, CUdeviceptr, size_t));
/* Per-thread-stream variants: there are no streams here. */
SHIM_ALIAS(cuMemsetD8_v2_ptds, cuMemsetD8_v2, CUresult,
	   (CUdeviceptr, unsigned char, size_t));
SHIM_ALIAS(cuMemsetD16_v2_ptds, cuMemsetD16_v2, CUresult,
	   (CUdeviceptr, unsigned short, size_t));
SHIM_ALIAS(cuMemsetD32_v2_ptds, cuMemsetD32_v2, CUresult,
	   (CUdeviceptr, unsigned int, size_t));
SHIM_ALIAS(cuMemcpy_ptds, cuMemcpy, CUresult,
	   (CUdeviceptr, CUdeviceptr, size_t));
SHIM_ALIAS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2, CUresult,
	   (CUdeviceptr, const void *, size_t));
SHIM_ALIAS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2, CUresult,
	   (void *, CUdeviceptr, size_t));
SHIM_ALIAS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2, CUresult,
	   (CUdeviceptr, CUdeviceptr, size_t));
