/* SPDX-License-Identifier: MIT */
/*
 * The staged path (gdrapi.h GDRMAP_COPY_PATH_STAGED): a copy between
 * pageable host memory and GPU memory through a ring of pinned memory,
 * the caller and the helper threads (threads.h) filling one chunk of it
 * while the copy engine empties another (or the other way round for
 * reads).
 *
 * CUDA's own copies from pageable memory stage too, but with one thread:
 * about 14 GB/s on an H200 where the copy engine moves 53 GB/s from
 * pinned memory; the CPU's side is what limits them, and more cores lift
 * it.
 */
#ifndef GDRMAP_DMA_STAGE_H
#define GDRMAP_DMA_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "base/cuda_api.h"

/* Smaller copies are not staged: a few chunks' set-up costs more than the
 * helpers save. */
#define GDR_STAGE_MIN		(256UL << 10)
#define GDR_STAGE_BUFS		3

/*
 * One context's pinned memory, cut into chunks as a ring (dma_stage.c),
 * one stream for all their copies, and for each of the GDR_STAGE_BUFS
 * chunks in flight an event marking its copy's end (made on first use).
 * One stream, so that the copy engine moves the chunks one after the
 * other and the first is done after its own share of the time: copies
 * queued on separate streams may run side by side, all finishing near the
 * end, and nothing would overlap with the CPUs' part.
 */
struct gdr_stage {
	void *ring;
	size_t at;			/* where the ring's next chunk goes */
	char *slot[GDR_STAGE_BUFS];	/* where each chunk in flight lies */
	CUevent done[GDR_STAGE_BUFS];
	CUstream stream;
	int made;
};

/*
 * Copy n bytes between host (pageable) and gpu through st's buffers, in
 * scope s (the memory's context, entered).  Complete when it returns.
 * The caller holds whatever keeps st to itself.
 */
CUresult gdr_stage_copy(struct gdr_stage *st, const struct gdr_cuda_scope *s,
			uint64_t gpu, void *host, size_t n, int to_gpu);

/*
 * The ring (dma_stage.c): a copy cut into chunks of len bytes starts at a
 * whole number of them, and each chunk goes right after the one before,
 * or at the ring's start where it would not fit.  Chunks then fill slots
 * len apart, ring / len of them, and while len <= ring / GDR_STAGE_BUFS a
 * chunk never lands on one of the GDR_STAGE_BUFS - 1 placed before it,
 * which may still be in flight (test_stage_ring.c: a copy starting
 * anywhere else could).  The last chunk may be shorter.
 */
static inline void gdr_stage_start(size_t *at, size_t len)
{
	*at = (*at + len - 1) / len * len;
}

static inline size_t gdr_stage_place(size_t *at, size_t ring, size_t len)
{
	size_t here = *at <= ring - len ? *at : 0;

	*at = here + len;
	return here;
}

/* Free st's buffers and streams (what is left of them: after its context
 * died, nothing may be). */
void gdr_stage_free(struct gdr_stage *st, const struct gdr_cuda_scope *s);

#endif /* GDRMAP_DMA_STAGE_H */
