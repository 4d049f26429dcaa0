// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): contexts.  Each device has
 * a primary context (retain/release counted per device); cuCtxCreate
 * contexts belong to the device they were made on.  The current context
 * is per thread, with a stack for push/pop.  Destroying a context (or
 * releasing a primary context to 0) frees the memory it allocated.
 *
 * Also here, in one place: under which current context a query about
 * some GPU's memory answers (ctx_sees).
 */
#include <stdlib.h>

#include "shim.h"

#define CTX_STACK_DEPTH 32

static struct CUctx_st *ctx_list;	/* cuCtxCreate contexts */

static _Thread_local CUcontext cur_ctx;
static _Thread_local CUcontext ctx_stack[CTX_STACK_DEPTH];
static _Thread_local unsigned int ctx_stack_len;

/* Is c a live context?  Called with shim_lock held. */
static bool ctx_valid(CUcontext c)
{
	struct CUctx_st *p;
	int i;

	if (!c)
		return false;
	for (i = 0; i < shim_ndevs; i++)
		if (c == &shim_devs[i].primary)
			return shim_devs[i].primary_refs > 0;
	for (p = ctx_list; p; p = p->next)
		if (p == c)
			return true;
	return false;
}

/* The calling thread's context, or an error for calls that need one. */
CUresult need_ctx(CUcontext *out)
{
	if (!shim_initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!cur_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!ctx_valid(cur_ctx))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	if (out)
		*out = cur_ctx;
	return CUDA_SUCCESS;
}

/*
 * May a query about memory of GPU owner (-1: memory CUDA does not know)
 * answer under the calling thread's current context?  As NVIDIA's driver
 * answers cuMemGetAddressRange: no context, CUDA_ERROR_INVALID_CONTEXT
 * (measured on an H100, bench/results/h100/2026-11-23-probes/ctx-probe.txt);
 * a context of another GPU, CUDA_ERROR_NOT_FOUND (measured on two H200s,
 * bench/results/h200x2/2026-11-23-consumers/probes/ctx-probe.txt); any
 * context of the owner, primary or created, yes.  cuPointerGetAttribute
 * and cuMemRetainAllocationHandle answer under any context and do not ask.
 * Called with shim_lock held.
 */
CUresult ctx_sees(CUdevice owner)
{
	CUcontext c;
	CUresult ret = need_ctx(&c);

	if (ret == CUDA_SUCCESS && c->dev != owner)
		ret = CUDA_ERROR_NOT_FOUND;
	return ret;
}

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
	c->next = ctx_list;
	ctx_list = c;
	pthread_mutex_unlock(&shim_lock);
	/* The new context becomes current (pushed) for this thread. */
	if (cur_ctx && ctx_stack_len < CTX_STACK_DEPTH)
		ctx_stack[ctx_stack_len++] = cur_ctx;
	cur_ctx = c;
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
	struct CUctx_st **pp;
	unsigned int i, j;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	for (pp = &ctx_list; *pp && *pp != ctx; pp = &(*pp)->next)
		;
	if (!ctx || !*pp) {
		pthread_mutex_unlock(&shim_lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	*pp = ctx->next;
	free_ctx_memory(ctx);
	free_ctx_streams(ctx);
	pthread_mutex_unlock(&shim_lock);

	/* Off this thread's stack; other threads see it as destroyed. */
	for (i = j = 0; i < ctx_stack_len; i++)
		if (ctx_stack[i] != ctx)
			ctx_stack[j++] = ctx_stack[i];
	ctx_stack_len = j;
	if (cur_ctx == ctx)
		cur_ctx = ctx_stack_len ? ctx_stack[--ctx_stack_len] : NULL;
	free(ctx);
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	bool ok;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ok = !ctx || ctx_valid(ctx);
	pthread_mutex_unlock(&shim_lock);
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	cur_ctx = ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	*pctx = cur_ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	bool ok;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ok = ctx_valid(ctx);
	pthread_mutex_unlock(&shim_lock);
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (cur_ctx) {
		if (ctx_stack_len == CTX_STACK_DEPTH)
			return CUDA_ERROR_OUT_OF_MEMORY;
		ctx_stack[ctx_stack_len++] = cur_ctx;
	}
	cur_ctx = ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	CHECK_INIT();
	if (!cur_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = cur_ctx;
	cur_ctx = ctx_stack_len ? ctx_stack[--ctx_stack_len] : NULL;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *dev)
{
	CUcontext c;
	CUresult ret;

	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(&c);
	pthread_mutex_unlock(&shim_lock);
	if (ret == CUDA_SUCCESS)
		*dev = c->dev;
	return ret;
}

CUresult cuCtxSynchronize(void)
{
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(NULL);	/* every operation here is synchronous */
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

SHIM_ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2,
	   CUresult, (CUdevice));
SHIM_ALIAS(cuCtxCreate, cuCtxCreate_v2, CUresult,
	   (CUcontext *, unsigned int, CUdevice));
SHIM_ALIAS(cuCtxDestroy, cuCtxDestroy_v2, CUresult, (CUcontext));
SHIM_ALIAS(cuCtxPushCurrent, cuCtxPushCurrent_v2, CUresult, (CUcontext));
SHIM_ALIAS(cuCtxPopCurrent, cuCtxPopCurrent_v2, CUresult, (CUcontext *));
