// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): streams and events.  Every
 * operation here is synchronous, so a stream is only a context and flags,
 * and an event only a context; what they model is who may use them.  A
 * stream or event belongs to the context current when it was made and dies
 * with that context; it is used only while its context is current
 * (CUDA_ERROR_INVALID_CONTEXT otherwise: the stricter reading of NVIDIA's
 * driver, which lets a thread wait for an event under any context; the
 * library must meet the stricter one), and an event is recorded only on a
 * stream of its own context (cuEventRecord's documented rule).
 */
#include <stdlib.h>

#include "shim.h"

struct CUstream_st {
	struct CUstream_st *next;
	CUcontext ctx;
	unsigned int flags;
};

static struct CUstream_st *stream_list;

struct CUevent_st {
	struct CUevent_st *next;
	CUcontext ctx;
};

static struct CUevent_st *event_list;

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

CUresult cuEventCreate(CUevent *pevent, unsigned int flags)
{
	struct CUevent_st *e;
	CUcontext ctx;
	CUresult ret;

	/* CU_EVENT_BLOCKING_SYNC 1, DISABLE_TIMING 2, INTERPROCESS 4 */
	if (!pevent || (flags & ~7u))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(&ctx);
	e = ret ? NULL : calloc(1, sizeof(*e));
	if (!ret && !e)
		ret = CUDA_ERROR_OUT_OF_MEMORY;
	if (e) {
		e->ctx = ctx;
		e->next = event_list;
		event_list = e;
		*pevent = e;
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* Whether e may be used now.  shim_lock held. */
static CUresult event_use(CUevent e, CUcontext *ctx)
{
	struct CUevent_st *p;
	CUresult ret = need_ctx(ctx);

	if (ret)
		return ret;
	for (p = event_list; p && p != e; p = p->next)
		;
	if (!p)
		return CUDA_ERROR_INVALID_HANDLE;
	return p->ctx == *ctx ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuEventDestroy_v2(CUevent e)
{
	struct CUevent_st **pp;
	CUcontext ctx;
	CUresult ret;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ret = event_use(e, &ctx);
	if (ret == CUDA_SUCCESS) {
		for (pp = &event_list; *pp != e; pp = &(*pp)->next)
			;
		*pp = e->next;
		free(e);
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuEventRecord(CUevent e, CUstream s)
{
	CUcontext ctx, sctx;
	CUresult ret;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ret = event_use(e, &ctx);
	if (ret == CUDA_SUCCESS)
		ret = stream_use(s, &sctx);
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuEventSynchronize(CUevent e)
{
	CUcontext ctx;
	CUresult ret;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ret = event_use(e, &ctx);
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* Context teardown: its streams and events go with it.  shim_lock held. */
void free_ctx_streams(CUcontext c)
{
	struct CUstream_st **pp = &stream_list, *s;
	struct CUevent_st **ep = &event_list, *e;

	while ((s = *pp)) {
		if (s->ctx == c) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
	while ((e = *ep)) {
		if (e->ctx == c) {
			*ep = e->next;
			free(e);
		} else {
			ep = &e->next;
		}
	}
}

SHIM_ALIAS(cuStreamDestroy, cuStreamDestroy_v2, CUresult, (CUstream));
SHIM_ALIAS(cuEventDestroy, cuEventDestroy_v2, CUresult, (CUevent));
