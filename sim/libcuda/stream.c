// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): streams and events.  A copy
 * to the GPU on a stream reads its source as late as NVIDIA's driver may:
 * when something waits for it (the stream, an event recorded after it, a
 * copy queued after it on the stream, freeing memory, destroying the
 * stream or its context).  Every other operation is synchronous, a copy
 * from the GPU landing as early as it may.  So a caller that changes or
 * frees a buffer before the copy engine is done with it sends the wrong
 * bytes here.  (The CUDA driver API reference, "API synchronization
 * behavior" and "Stream synchronization behavior": a pinned source is
 * read whenever the copy engine gets to it, a pageable one before the
 * call returns, which nothing here relies on; the legacy default stream
 * waits for the blocking streams, not for CU_STREAM_NON_BLOCKING ones.)
 * Otherwise a stream is a context and flags, an event a context; what
 * they model is who may use them.  A stream or event belongs to the
 * context current when it was made and dies with that context; it is
 * used only while its context is current (CUDA_ERROR_INVALID_CONTEXT
 * otherwise: the stricter reading of NVIDIA's driver, which lets a thread
 * wait for an event under any context; the library must meet the stricter
 * one), and an event is recorded only on a stream of its own context
 * (cuEventRecord's documented rule).
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* A copy to the GPU, queued: its source is read when it runs. */
struct pending {
	CUdeviceptr dev;
	const void *host;
	size_t n;
	uint64_t seq;
	bool managed;			/* host-backed: a memcpy */
};

#define PENDING_MAX	64

struct CUstream_st {
	struct CUstream_st *next;
	CUcontext ctx;
	unsigned int flags;
	uint64_t seq;			/* of the last copy queued */
	int npending;
	struct pending pending[PENDING_MAX];
	CUresult late;			/* a queued copy that failed */
};

static struct CUstream_st *stream_list;

struct CUevent_st {
	struct CUevent_st *next;
	CUcontext ctx;
	CUstream stream;		/* recorded on; NULL: none or gone */
	uint64_t seq;			/* the stream's last copy then */
};

static struct CUevent_st *event_list;

/* Events recorded on s, which goes, wait for nothing more.  shim_lock
 * held. */
static void forget_stream(CUstream s)
{
	struct CUevent_st *e;

	for (e = event_list; e; e = e->next)
		if (e->stream == s)
			e->stream = NULL;
}

/* Run s's queued copies up to seq, in order.  shim_lock held. */
void stream_run(CUstream s, uint64_t seq)
{
	struct pending *q;
	CUresult ret;
	int i, k = 0;

	for (i = 0; i < s->npending; i++) {
		q = &s->pending[i];
		if (q->seq > seq) {
			s->pending[k++] = *q;
			continue;
		}
		/* Checked when queued; frees wait for it (streams_drain). */
		ret = CUDA_SUCCESS;
		if (q->managed)
			memcpy((void *)(uintptr_t)q->dev, q->host, q->n);
		else
			ret = dev_rw(q->dev, (void *)q->host, q->n, true);
		if (ret && !s->late)
			s->late = ret;
	}
	s->npending = k;
}

/* Queue a copy to the GPU on s (valid, checked).  shim_lock held. */
void stream_queue(CUstream s, CUdeviceptr dev, const void *host, size_t n,
		  bool managed)
{
	if (s->npending == PENDING_MAX)
		stream_run(s, s->pending[0].seq);
	s->pending[s->npending++] = (struct pending){ dev, host, n,
						      ++s->seq, managed };
}

/* Every stream's copies, before memory is freed or unmapped: the driver
 * waits for them.  shim_lock held. */
void streams_drain(void)
{
	struct CUstream_st *s;

	for (s = stream_list; s; s = s->next)
		stream_run(s, UINT64_MAX);
}

/* The copies of c's blocking streams, before an operation on its legacy
 * default stream.  shim_lock held. */
void streams_drain_legacy(CUcontext c)
{
	struct CUstream_st *s;

	for (s = stream_list; s; s = s->next)
		if (s->ctx == c && !(s->flags & CU_STREAM_NON_BLOCKING))
			stream_run(s, UINT64_MAX);
}

/* Wait for s's copies up to seq: the first failure among them, once.
 * shim_lock held. */
static CUresult stream_wait(CUstream s, uint64_t seq)
{
	CUresult ret;

	stream_run(s, seq);
	ret = s->late;
	s->late = CUDA_SUCCESS;
	return ret;
}

/* Every stream of the current context, each to its last copy. */
CUresult cuCtxSynchronize(void)
{
	struct CUstream_st *s;
	CUcontext ctx;
	CUresult ret, late;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(&ctx);
	for (s = ret ? NULL : stream_list; s; s = s->next) {
		if (s->ctx != ctx)
			continue;
		late = stream_wait(s, UINT64_MAX);
		if (late && !ret)
			ret = late;
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

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
		/* Its copies still run; nobody hears how they went. */
		stream_run(s, UINT64_MAX);
		forget_stream(s);
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
	if (ret == CUDA_SUCCESS && s)
		ret = stream_wait(s, UINT64_MAX);
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
	if (ret == CUDA_SUCCESS) {
		e->stream = s;
		e->seq = s ? s->seq : 0;
	}
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
	if (ret == CUDA_SUCCESS && e->stream)
		ret = stream_wait(e->stream, e->seq);
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
			forget_stream(s);
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
