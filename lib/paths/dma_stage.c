// SPDX-License-Identifier: MIT
/*
 * The staged path (dma_stage.h).
 *
 * The copy engine's copies go on one stream, in order, each followed by
 * its slot's event: a write fills a chunk of the ring (the CPUs) once the
 * event of the slot's last copy to the GPU has passed, then queues it; a
 * read queues every slot's first chunk at once, then empties each (the
 * CPUs) as its event passes and queues the slot's next chunk.  The CPUs'
 * part of each chunk is split across the caller and the helpers; when
 * they are busy with another thread's copy the caller does it alone.
 */
#include "dma_stage.h"
#include "isa/copy.h"
#include "threads.h"

/* The largest chunk: large enough that a chunk's fixed costs (a queued
 * copy, a wake-up of the helpers) stay a few percent of it.  A build may
 * set another (-DGDR_STAGE_CHUNK=bytes) to measure. */
#ifdef GDR_STAGE_CHUNK
#define CHUNK_MAX	((size_t)(GDR_STAGE_CHUNK))
#else
#define CHUNK_MAX	(4UL << 20)
#endif
#define CHUNK_MIN	(64UL << 10)

/*
 * The pinned memory the chunks go through, used as a ring: each chunk
 * takes the next piece of it (dma_stage.h, gdr_stage_place), so a read's
 * copy engine writes into lines the cores copied out several chunks ago,
 * not into the ones they have just read and still hold in their caches.
 * Measured on an H200, pageable reads: with every read reusing the same
 * pieces, the copy engine delivered at half speed whenever a read
 * followed another within 60 us (flushing the lines after the copy-out
 * cured that but cost more than it saved).  As a ring of 3 chunks of
 * 4 MiB, 4 MiB reads took 116-174 us instead of 188-235; of 6, 111-142
 * us, and 16-64 MiB reads, whose 4 MiB chunks come back to a piece every
 * 3 chunks in the smaller ring, gained too.  -DGDR_STAGE_RING=bytes to
 * measure.
 */
#ifdef GDR_STAGE_RING
#define RING		((size_t)(GDR_STAGE_RING))
#else
#define RING		((size_t)2 * GDR_STAGE_BUFS * CHUNK_MAX)
#endif
_Static_assert(RING >= GDR_STAGE_BUFS * CHUNK_MAX,
	       "a ring holds a chunk in flight in every slot");

/*
 * Chunks a copy is cut into where CHUNK_MAX allows.  The first chunk's
 * copy and the last one's CPU part overlap nothing, but every chunk costs
 * the CPUs a wake-up and a wait: measured on an H200 (pageable reads of
 * 512 KiB-16 MiB, 3, 8 and 16 chunks), 3 was the fastest at every size.
 * -DGDR_STAGE_PARTS=n to measure again.
 */
#ifdef GDR_STAGE_PARTS
#define PARTS		(GDR_STAGE_PARTS)
#else
#define PARTS		GDR_STAGE_BUFS
#endif

/*
 * The CPUs' part of a chunk, with streaming stores both ways (the
 * write-combined mapping's routine, which ends with the fence that makes
 * them visible before the chunk's copy is queued).  Into the caller's
 * memory (reads): a store that misses the cache would first read the line
 * it fills, a third of the memory traffic of a copy larger than the cache.
 * Into the ring (writes): the lines reach memory, and the copy engine
 * reads them there instead of from the cores' caches.  Measured on an
 * H200, pageable writes on the staged path: 4 MiB in 120-128 us with
 * streaming stores, 249-273 with memcpy; 16 MiB in 431-523 against
 * 708-877.
 */
static void cpu_copy(void *dst, const void *src, size_t n)
{
	gdr_part_fn fn = gdr_copy_for_type(GDR_MAPPING_TYPE_WC)->to_mapping;

	if (gdr_threads_copy(fn, dst, src, n, 0))
		fn(dst, src, n);
}

/* PARTS chunks where n allows, whole 64 KiB. */
static size_t chunk_for(size_t n)
{
	size_t c = n / PARTS;

	c = (c + CHUNK_MIN - 1) & ~(CHUNK_MIN - 1);
	if (c < CHUNK_MIN)
		c = CHUNK_MIN;
	return c > CHUNK_MAX ? CHUNK_MAX : c;
}

static CUresult stage_make(struct gdr_stage *st,
			   const struct gdr_cuda_scope *s)
{
	CUresult res;
	int b;

	res = s->call->StreamCreate(&st->stream, CU_STREAM_NON_BLOCKING);
	if (res != CUDA_SUCCESS)
		st->stream = NULL;
	for (b = 0; b < GDR_STAGE_BUFS && res == CUDA_SUCCESS; b++) {
		res = s->call->EventCreate(&st->done[b],
					   CU_EVENT_DISABLE_TIMING);
		if (res != CUDA_SUCCESS)
			st->done[b] = NULL;
	}
	if (res == CUDA_SUCCESS) {
		res = s->call->MemHostAlloc(&st->ring, RING, 0);
		if (res != CUDA_SUCCESS)
			st->ring = NULL;
	}
	st->at = 0;
	if (res != CUDA_SUCCESS)
		gdr_stage_free(st, s);
	else
		st->made = 1;
	return res;
}

void gdr_stage_free(struct gdr_stage *st, const struct gdr_cuda_scope *s)
{
	int b;

	for (b = 0; b < GDR_STAGE_BUFS; b++) {
		if (st->done[b])
			s->call->EventDestroy(st->done[b]);
		st->done[b] = NULL;
		st->slot[b] = NULL;
	}
	if (st->ring)
		s->call->MemFreeHost(st->ring);
	st->ring = NULL;
	if (st->stream)
		s->call->StreamDestroy(st->stream);
	st->stream = NULL;
	st->made = 0;
}

/* Wait for the stream, keeping the first failure. */
static CUresult drain(struct gdr_stage *st, const struct gdr_cuda_scope *s,
		      CUresult res)
{
	CUresult r = s->call->StreamSynchronize(st->stream);

	return res == CUDA_SUCCESS ? r : res;
}

/* Slot b's next chunk of len bytes: the ring's next piece. */
static char *place(struct gdr_stage *st, int b, size_t len)
{
	st->slot[b] = (char *)st->ring + gdr_stage_place(&st->at, RING, len);
	return st->slot[b];
}

/* Queue slot b's copy of len bytes and mark its end. */
static CUresult queue(struct gdr_stage *st, const struct gdr_cuda_scope *s,
		      int b, uint64_t gpu, size_t len, int to_gpu)
{
	CUresult res = to_gpu ?
		s->call->MemcpyHtoDAsync(gpu, st->slot[b], len, st->stream) :
		s->call->MemcpyDtoHAsync(st->slot[b], gpu, len, st->stream);

	if (res == CUDA_SUCCESS)
		res = s->call->EventRecord(st->done[b], st->stream);
	return res;
}

static CUresult stage_write(struct gdr_stage *st,
			    const struct gdr_cuda_scope *s, uint64_t gpu,
			    const char *host, size_t n)
{
	size_t chunk = chunk_for(n), off, len;
	CUresult res = CUDA_SUCCESS;
	int c, b;

	gdr_stage_start(&st->at, chunk);
	for (c = 0, off = 0; off < n && res == CUDA_SUCCESS;
	     c++, off += len) {
		b = c % GDR_STAGE_BUFS;
		len = n - off < chunk ? n - off : chunk;
		if (c >= GDR_STAGE_BUFS) {
			res = s->call->EventSynchronize(st->done[b]);
			if (res != CUDA_SUCCESS)
				break;
		}
		cpu_copy(place(st, b, len), host + off, len);
		res = queue(st, s, b, gpu + off, len, 1);
	}
	return drain(st, s, res);
}

static CUresult stage_read(struct gdr_stage *st,
			   const struct gdr_cuda_scope *s, uint64_t gpu,
			   char *host, size_t n)
{
	size_t chunk = chunk_for(n), off, len, ahead, len_ahead;
	CUresult res = CUDA_SUCCESS;
	int c, b;

	/* The first chunk of every slot, queued at once. */
	gdr_stage_start(&st->at, chunk);
	for (c = 0, off = 0; c < GDR_STAGE_BUFS && off < n; c++, off += len) {
		len = n - off < chunk ? n - off : chunk;
		place(st, c, len);
		res = queue(st, s, c, gpu + off, len, 0);
		if (res != CUDA_SUCCESS)
			return drain(st, s, res);
	}
	for (c = 0, off = 0; off < n; c++, off += len) {
		b = c % GDR_STAGE_BUFS;
		len = n - off < chunk ? n - off : chunk;
		res = s->call->EventSynchronize(st->done[b]);
		if (res != CUDA_SUCCESS)
			break;
		cpu_copy(host + off, st->slot[b], len);
		ahead = off + (size_t)GDR_STAGE_BUFS * chunk;
		if (ahead < n) {
			len_ahead = n - ahead < chunk ? n - ahead : chunk;
			place(st, b, len_ahead);
			res = queue(st, s, b, gpu + ahead, len_ahead, 0);
			if (res != CUDA_SUCCESS)
				break;
		}
	}
	return drain(st, s, res);
}

CUresult gdr_stage_copy(struct gdr_stage *st, const struct gdr_cuda_scope *s,
			uint64_t gpu, void *host, size_t n, int to_gpu)
{
	CUresult res;

	if (!st->made) {
		res = stage_make(st, s);
		if (res != CUDA_SUCCESS)
			return res;
	}
	return to_gpu ? stage_write(st, s, gpu, host, n) :
			stage_read(st, s, gpu, host, n);
}
