// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): contexts made and
 * destroyed.  Each device has a primary context (retain/release counted
 * per device); cuCtxCreate contexts belong to the device they were made
 * on.  Destroying a context (or releasing a primary context to 0) frees
 * the memory it allocated and its streams.  Which contexts are live and
 * which is current: current.c.
 */
#include <stdlib.h>

#include "shim.h"

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	pthread_mutex_lock(&shim_lock);
	shim_devs[dev].primary_refs++;
	*pctx = &shim_devs[dev].primary;
	pthread_mutex_unlock(&shim_lock);
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	struct shim_dev *d;
	CUresult ret = CUDA_SUCCESS;

	CHECK_DEV(dev);
	d = &shim_devs[dev];
	pthread_mutex_lock(&shim_lock);
	if (!d->primary_refs)
		ret = CUDA_ERROR_INVALID_CONTEXT;
	else if (!--d->primary_refs) {
		/* The context is destroyed. */
		free_ctx_memory(&d->primary);
		free_ctx_streams(&d->primary);
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
				    int *active)
{
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	pthread_mutex_lock(&shim_lock);
	*flags = shim_devs[dev].primary.flags;
	*active = shim_devs[dev].primary_refs > 0;
	pthread_mutex_unlock(&shim_lock);
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct CUctx_st *c;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->dev = dev;
	c->flags = flags;
	pthread_mutex_lock(&shim_lock);
	ctx_list_add(c);
	pthread_mutex_unlock(&shim_lock);
	ctx_push_new(c);
	*pctx = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v3(CUcontext *pctx, void *params, int nparams,
			unsigned int flags, CUdevice dev)
{
	if (nparams < 0 || (nparams > 0 && !params))
		return CUDA_ERROR_INVALID_VALUE;
	if (nparams > 0)
		return CUDA_ERROR_NOT_SUPPORTED;	/* execution affinity */
	return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
			unsigned int flags, CUdevice dev)
{
	if (params && (params->execAffinityParams ||
		       params->numExecAffinityParams || params->cigParams))
		return CUDA_ERROR_NOT_SUPPORTED;
	return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	if (!ctx_list_remove(ctx)) {
		pthread_mutex_unlock(&shim_lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	free_ctx_memory(ctx);
	free_ctx_streams(ctx);
	pthread_mutex_unlock(&shim_lock);

	ctx_forget(ctx);
	free(ctx);
	return CUDA_SUCCESS;
}

SHIM_ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2,
	   CUresult, (CUdevice));
SHIM_ALIAS(cuCtxCreate, cuCtxCreate_v2, CUresult,
	   (CUcontext *, unsigned int, CUdevice));
SHIM_ALIAS(cuCtxDestroy, cuCtxDestroy_v2, CUresult, (CUcontext));
