// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): which contexts are live,
 * and the calling thread's current one, with a stack for push/pop.  The
 * contexts are made and destroyed in context.c, which frees what they
 * own; the calls that need a current context ask here (need_ctx).
 *
 * Also here, in one place: under which current context a query about
 * some GPU's memory answers (ctx_sees).
 */
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

/* A new cuCtxCreate context is live.  shim_lock held. */
void ctx_list_add(struct CUctx_st *c)
{
	c->next = ctx_list;
	ctx_list = c;
}

/* Takes c off the live contexts; false if it is none.  shim_lock held. */
bool ctx_list_remove(CUcontext c)
{
	struct CUctx_st **pp;

	for (pp = &ctx_list; *pp && *pp != c; pp = &(*pp)->next)
		;
	if (!c || !*pp)
		return false;
	*pp = c->next;
	return true;
}

/* A new context becomes current (pushed) for this thread. */
void ctx_push_new(CUcontext c)
{
	if (cur_ctx && ctx_stack_len < CTX_STACK_DEPTH)
		ctx_stack[ctx_stack_len++] = cur_ctx;
	cur_ctx = c;
}

/*
 * A destroyed context goes off this thread's stack (other threads see it
 * as destroyed); if it was current, the one below it is.
 */
void ctx_forget(CUcontext c)
{
	unsigned int i, j;

	for (i = j = 0; i < ctx_stack_len; i++)
		if (ctx_stack[i] != c)
			ctx_stack[j++] = ctx_stack[i];
	ctx_stack_len = j;
	if (cur_ctx == c)
		cur_ctx = ctx_stack_len ? ctx_stack[--ctx_stack_len] : NULL;
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

SHIM_ALIAS(cuCtxPushCurrent, cuCtxPushCurrent_v2, CUresult, (CUcontext));
SHIM_ALIAS(cuCtxPopCurrent, cuCtxPopCurrent_v2, CUresult, (CUcontext *));
