// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): streams.  Every operation
 * here is synchronous, so a stream is only a context and flags; what it
 * models is who may use it.  A stream belongs to the context current when
 * it was made and dies with that context; work is queued on it only while
 * its context is current (CUDA_ERROR_INVALID_CONTEXT otherwise: the
 * stricter reading of NVIDIA's driver, which the library must meet).
 */
#include <stdlib.h>

#include "shim.h"

struct CUstream_st {
	struct CUstream_st *next;
	CUcontext ctx;
	unsigned int flags;
};

static struct CUstream_st *stream_list;

CUresult cuStreamCreate(CUstream *pstream, unsigned int flags)
{
	struct CUstream_st *s;
	CUcontext ctx;
	CUresult ret;

	if (!pstream || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(&ctx);
	s = ret ? NULL : calloc(1, sizeof(*s));
	if (!ret && !s)
		ret = CUDA_ERROR_OUT_OF_MEMORY;
	if (s) {
		s->ctx = ctx;
		s->flags = flags;
		s->next = stream_list;
		stream_list = s;
		*pstream = s;
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/*
 * The context work on s runs in (NULL: the legacy default stream, the
 * current context's), if s may be used now.  shim_lock held.
 */
CUresult stream_use(CUstream s, CUcontext *ctx)
{
	struct CUstream_st *p;
	CUresult ret = need_ctx(ctx);

	if (ret || !s)
		return ret;
	for (p = stream_list; p && p != s; p = p->next)
		;
	if (!p)
		return CUDA_ERROR_INVALID_HANDLE;
	if (p->ctx != *ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	return CUDA_SUCCESS;
}

CUresult cuStreamDestroy_v2(CUstream s)
{
	struct CUstream_st **pp;
	CUcontext ctx;
	CUresult ret;

	CHECK_INIT();
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&shim_lock);
	ret = stream_use(s, &ctx);
	if (ret == CUDA_SUCCESS) {
		for (pp = &stream_list; *pp != s; pp = &(*pp)->next)
			;
		*pp = s->next;
		free(s);
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuStreamSynchronize(CUstream s)
{
	CUcontext ctx;
	CUresult ret;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ret = stream_use(s, &ctx);
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* Context teardown: its streams go with it.  shim_lock held. */
void free_ctx_streams(CUcontext c)
{
	struct CUstream_st **pp = &stream_list, *s;

	while ((s = *pp)) {
		if (s->ctx == c) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

SHIM_ALIAS(cuStreamDestroy, cuStreamDestroy_v2, CUresult, (CUstream));
