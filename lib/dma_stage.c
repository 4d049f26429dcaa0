// SPDX-License-Identifier: MIT
/*
 * The staged path (dma_stage.h).
 *
 * Each buffer has its own stream, so that waiting for a buffer is waiting
 * for its stream: a write fills buffer b (the CPUs) once the copy engine
 * has emptied it, then queues its copy to the GPU; a read queues every
 * buffer's copy from the GPU at once, then empties each (the CPUs) as its
 * stream finishes and queues the next chunk into it.  The CPUs' part of
 * each chunk is split across the caller and the helpers; when they are
 * busy with another thread's copy the caller does it alone.
 */
#include <string.h>

#include "copy/copy.h"
#include "copy_threads.h"
#include "dma_stage.h"

/* The largest chunk: large enough that a chunk's fixed costs (a queued
 * copy, a wake-up of the helpers) stay a few percent of it.  A build may
 * set another (-DGDR_STAGE_CHUNK=bytes) to measure. */
#ifdef GDR_STAGE_CHUNK
#define CHUNK_MAX	((size_t)(GDR_STAGE_CHUNK))
#else
#define CHUNK_MAX	(4UL << 20)
#endif
#define CHUNK_MIN	(64UL << 10)

static void part_memcpy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

/*
 * The CPUs' part of a chunk.  Into the caller's memory (reads) with
 * streaming stores, the write-combined mapping's routine: a store that
 * misses the cache would first read the line it fills, a third of the
 * memory traffic of a copy larger than the cache, and the copy engine
 * fills the next buffer meanwhile.
 */
static void cpu_copy(void *dst, const void *src, size_t n, int to_gpu)
{
	gdr_part_fn fn = part_memcpy;

#ifndef GDR_STAGE_PLAIN
	if (!to_gpu)
		fn = gdr_copy_for_type(GDR_MAPPING_TYPE_WC)->to_mapping;
#endif
	if (gdr_threads_copy(fn, dst, src, n, 0))
		fn(dst, src, n);
}

/* At least GDR_STAGE_BUFS chunks where n allows, whole 64 KiB. */
static size_t chunk_for(size_t n)
{
	size_t c = n / GDR_STAGE_BUFS;

	c = (c + CHUNK_MIN - 1) & ~(CHUNK_MIN - 1);
	if (c < CHUNK_MIN)
		c = CHUNK_MIN;
	return c > CHUNK_MAX ? CHUNK_MAX : c;
}

static CUresult stage_make(struct gdr_stage *st,
			   const struct gdr_cuda_scope *s)
{
	CUresult res = CUDA_SUCCESS;
	int b;

	for (b = 0; b < GDR_STAGE_BUFS && res == CUDA_SUCCESS; b++) {
		res = s->call->StreamCreate(&st->stream[b],
					    CU_STREAM_NON_BLOCKING);
		if (res != CUDA_SUCCESS) {
			st->stream[b] = NULL;
			break;
		}
		res = s->call->MemHostAlloc(&st->buf[b], CHUNK_MAX, 0);
		if (res != CUDA_SUCCESS)
			st->buf[b] = NULL;
	}
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
		if (st->stream[b])
			s->call->StreamDestroy(st->stream[b]);
		if (st->buf[b])
			s->call->MemFreeHost(st->buf[b]);
		st->stream[b] = NULL;
		st->buf[b] = NULL;
	}
	st->made = 0;
}

/* Wait for every stream, keeping the first failure. */
static CUresult drain(struct gdr_stage *st, const struct gdr_cuda_scope *s,
		      CUresult res)
{
	CUresult r;
	int b;

	for (b = 0; b < GDR_STAGE_BUFS; b++) {
		r = s->call->StreamSynchronize(st->stream[b]);
		if (res == CUDA_SUCCESS)
			res = r;
	}
	return res;
}

static CUresult stage_write(struct gdr_stage *st,
			    const struct gdr_cuda_scope *s, uint64_t gpu,
			    const char *host, size_t n)
{
	size_t chunk = chunk_for(n), off, len;
	CUresult res = CUDA_SUCCESS;
	int c, b;

	for (c = 0, off = 0; off < n && res == CUDA_SUCCESS;
	     c++, off += len) {
		b = c % GDR_STAGE_BUFS;
		len = n - off < chunk ? n - off : chunk;
		if (c >= GDR_STAGE_BUFS) {
			res = s->call->StreamSynchronize(st->stream[b]);
			if (res != CUDA_SUCCESS)
				break;
		}
		cpu_copy(st->buf[b], host + off, len, 1);
		res = s->call->MemcpyHtoDAsync(gpu + off, st->buf[b], len,
					       st->stream[b]);
	}
	return drain(st, s, res);
}

static CUresult stage_read(struct gdr_stage *st,
			   const struct gdr_cuda_scope *s, uint64_t gpu,
			   char *host, size_t n)
{
	size_t chunk = chunk_for(n), off, len;
	CUresult res = CUDA_SUCCESS;
	int c, b;

	/* Every buffer's first chunk, queued at once. */
	for (c = 0, off = 0; c < GDR_STAGE_BUFS && off < n; c++, off += len) {
		len = n - off < chunk ? n - off : chunk;
		res = s->call->MemcpyDtoHAsync(st->buf[c], gpu + off, len,
					       st->stream[c]);
		if (res != CUDA_SUCCESS)
			return drain(st, s, res);
	}
	for (c = 0, off = 0; off < n; c++, off += len) {
		size_t ahead = off + (size_t)GDR_STAGE_BUFS * chunk;

		b = c % GDR_STAGE_BUFS;
		len = n - off < chunk ? n - off : chunk;
		res = s->call->StreamSynchronize(st->stream[b]);
		if (res != CUDA_SUCCESS)
			break;
		cpu_copy(host + off, st->buf[b], len, 0);
		if (ahead < n) {
			res = s->call->MemcpyDtoHAsync(
				st->buf[b], gpu + ahead,
				n - ahead < chunk ? n - ahead : chunk,
				st->stream[b]);
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
