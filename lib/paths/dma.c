// SPDX-License-Identifier: MIT
/*
 * DMA on private streams (dma.h).
 *
 * Where the bytes go is decided when each copy runs, from the address:
 * CUDA tells the owning context in one query (cuPointerGetAttributes, a
 * fraction of a microsecond beside the DMA), so a pin needs no CUDA
 * object of its own and a window that covers several allocations (UCX
 * pins 64 KiB-aligned windows around small buffers) copies into
 * whichever one holds the bytes.
 *
 * One queue per context: a non-blocking stream and a pinned bounce
 * buffer.  Small copies go through the bounce buffer, which saves the
 * pageable path's staging (about 1 µs a read on an H200); larger ones
 * from memory CUDA has pinned go straight, and from pageable memory
 * through CUDA's own pipelined staging, or ours (dma_stage.c), where the
 * helper threads share the CPU's part.  Queues live as long as the
 * process; one whose context was destroyed is made again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/cuda_api.h"
#include "base/log.h"
#include "dma.h"
#include "dma_stage.h"

/* Copies up to this size go through the queue's pinned buffer. */
#define BOUNCE_SIZE	(64UL << 10)
/* Below this, copying through the bounce buffer costs less than asking
 * CUDA whether the host memory is pinned. */
#define ALWAYS_BOUNCE	(4UL << 10)

struct queue {
	struct queue *next;
	CUcontext key;		/* the memory's context; NULL: dev's primary */
	int dev;
	pthread_mutex_t lock;	/* one copy at a time: stream and bounce */
	CUstream stream;	/* NULL until made, and after its context died */
	void *bounce;
	struct gdr_stage stage;	/* the staged path's, made on first use */
};

static struct queue *queues;
static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;
/* The queue this thread used last: a thread's copies mostly go to one
 * GPU, and queues are never freed. */
static _Thread_local struct queue *last_queue;

/*
 * CUDA answers whether host memory is pinned in 0.12-0.22 us for pinned
 * memory and 0.24-0.40 for pageable on an H200: a few percent of an 8 KiB
 * DMA read (7.5 us), a tenth of a 64 KiB write through the mapping.
 * Programs copy the same buffers again and again, often taking turns
 * between two or a few (double buffering): the thread keeps its last
 * HOST_SEEN answers, the oldest replaced first.
 */
#define HOST_SEEN	4

static _Thread_local struct host_seen {
	const void *host;
	size_t n;
	unsigned int left;
	int pinned;
} host_seen[HOST_SEEN];
static _Thread_local unsigned int host_seen_next;

int gdr_host_pinned_reused(const void *host, size_t n)
{
	struct host_seen *e = NULL;
	int i;

	for (i = 0; i < HOST_SEEN && !e; i++)
		if (host_seen[i].host == host && host_seen[i].n == n)
			e = &host_seen[i];
	if (e && e->left) {
		e->left--;
		return e->pinned;
	}
	if (!e)
		e = &host_seen[host_seen_next++ % HOST_SEEN];
	e->pinned = gdr_cuda_host_pinned(host, n);
	e->host = host;
	e->n = n;
	e->left = GDR_HOST_REUSE;
	return e->pinned;
}

/* The queue for memory of context key (NULL: dev's primary). */
static struct queue *queue_of(CUcontext key, int dev)
{
	struct queue *q = last_queue;

	if (q && q->key == key && q->dev == dev)
		return q;
	pthread_mutex_lock(&queues_lock);
	for (q = queues; q; q = q->next)
		if (q->key == key && q->dev == dev)
			break;
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (q) {
			q->key = key;
			q->dev = dev;
			pthread_mutex_init(&q->lock, NULL);
			q->next = queues;
			queues = q;
		}
	}
	pthread_mutex_unlock(&queues_lock);
	last_queue = q;
	return q;
}

/* Make q's stream and bounce buffer in scope s; q->lock held. */
static CUresult queue_start(struct queue *q, const struct gdr_cuda_scope *s)
{
	CUresult res;

	res = s->call->StreamCreate(&q->stream, CU_STREAM_NON_BLOCKING);
	if (res != CUDA_SUCCESS) {
		q->stream = NULL;
		return res;
	}
	/* Without it, copies go straight from and to the caller's memory. */
	if (s->call->MemHostAlloc(&q->bounce, BOUNCE_SIZE, 0) != CUDA_SUCCESS)
		q->bounce = NULL;
	return CUDA_SUCCESS;
}

/* Results that mean the queue's context is gone (and its stream too). */
static int context_gone(CUresult res)
{
	return res == CUDA_ERROR_CONTEXT_IS_DESTROYED ||
	       res == CUDA_ERROR_INVALID_CONTEXT ||
	       res == CUDA_ERROR_INVALID_HANDLE;
}

/* One copy on q; q->lock held. */
static CUresult queue_copy(struct queue *q, uint64_t gpu, void *host,
			   size_t n, int to_gpu, int may_bounce, int staged)
{
	struct gdr_cuda_scope s;
	int bounce;
	CUresult res;

	res = gdr_cuda_enter_ctx(q->key, q->dev, &s);
	if (res != CUDA_SUCCESS)
		return res;
	if (!q->stream)
		res = queue_start(q, &s);
	bounce = may_bounce && q->bounce && n <= BOUNCE_SIZE;
	if (res == CUDA_SUCCESS && staged) {
		res = gdr_stage_copy(&q->stage, &s, gpu, host, n, to_gpu);
		/* No pinned memory for the buffers: CUDA's staging instead. */
		if (res == CUDA_ERROR_OUT_OF_MEMORY && !q->stage.made)
			staged = 0;
		else
			goto done;
	}
	if (res == CUDA_SUCCESS && to_gpu) {
		if (bounce)
			memcpy(q->bounce, host, n);
		res = s.call->MemcpyHtoDAsync(gpu, bounce ? q->bounce : host, n,
					      q->stream);
	} else if (res == CUDA_SUCCESS) {
		res = s.call->MemcpyDtoHAsync(bounce ? q->bounce : host, gpu, n,
					      q->stream);
	}
	if (res == CUDA_SUCCESS)
		res = s.call->StreamSynchronize(q->stream);
	if (res == CUDA_SUCCESS && !to_gpu && bounce)
		memcpy(host, q->bounce, n);
done:
	if (context_gone(res)) {
		/* Its context was destroyed, and a new one may have its
		 * handle: the next copy makes a new stream (what is left of
		 * the old one is freed if anything is). */
		if (q->stream)
			s.call->StreamDestroy(q->stream);
		if (q->bounce)
			s.call->MemFreeHost(q->bounce);
		gdr_stage_free(&q->stage, &s);
		q->stream = NULL;
		q->bounce = NULL;
	}
	gdr_cuda_leave(&s);
	return res;
}

static int dma(uint64_t gpu, void *host, size_t n, int to_gpu, int staged,
	       int host_pinned, const struct gdr_cuda_ptr *at,
	       const char *caller)
{
	struct gdr_cuda_ptr p;
	struct queue *q;
	CUresult res;
	char err[160];
	int tries, may_bounce;

	if (!at) {
		gdr_cuda_pointer(gpu, &p);
		at = &p;
	}
	if (at->dev < 0 || at->managed) {
		gdr_err("%s: there is no GPU memory at 0x%llx (freed since it was pinned?): a copy by DMA goes to and from the memory at the address when the copy runs, so keep it allocated while it is pinned",
			caller, (unsigned long long)gpu);
		return EINVAL;
	}
	q = queue_of(at->ctx, at->dev);
	if (!q) {
		gdr_err("%s: out of memory", caller);
		return ENOMEM;
	}
	if (host_pinned < 0 && n > ALWAYS_BOUNCE && n <= BOUNCE_SIZE)
		host_pinned = gdr_host_pinned_reused(host, n);
	may_bounce = n <= ALWAYS_BOUNCE ||
		     (n <= BOUNCE_SIZE && !host_pinned);
	pthread_mutex_lock(&q->lock);
	for (tries = 0; tries < 2; tries++) {
		res = queue_copy(q, gpu, host, n, to_gpu, may_bounce,
				 staged);
		if (!context_gone(res))
			break;
	}
	pthread_mutex_unlock(&q->lock);
	if (res == CUDA_SUCCESS)
		return 0;
	gdr_err("%s: copying %zu bytes %s 0x%llx on CUDA device %d failed: %s",
		caller, n, to_gpu ? "to" : "from", (unsigned long long)gpu,
		at->dev, gdr_cuda_error(gdr_cuda_get(NULL, 0), res, err,
					sizeof(err)));
	return res == CUDA_ERROR_INVALID_VALUE ? EINVAL : EIO;
}

int gdr_dma(uint64_t gpu, void *host, size_t n, int to_gpu, int host_pinned,
	    const struct gdr_cuda_ptr *at, const char *caller)
{
	return dma(gpu, host, n, to_gpu, 0, host_pinned, at, caller);
}

int gdr_dma_staged(uint64_t gpu, void *host, size_t n, int to_gpu,
		   const struct gdr_cuda_ptr *at, const char *caller)
{
	return dma(gpu, host, n, to_gpu, 1, -1, at, caller);
}
