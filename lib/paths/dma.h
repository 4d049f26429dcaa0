/* SPDX-License-Identifier: MIT */
/*
 * Copies between host memory and GPU memory by the GPU's copy engine, on
 * a private non-blocking stream of the memory's own context: never
 * ordered behind the application's work (a kernel spinning on a flag
 * the CPU is about to write would otherwise deadlock it), complete when
 * the call returns.  Serves copy-only pins (copy_only_pins.c) and the DMA path
 * of gdrmap_copy_* (path_auto.c).
 */
#ifndef GDRMAP_DMA_H
#define GDRMAP_DMA_H

#include <stddef.h>
#include <stdint.h>

#include "base/cuda_api.h"

/*
 * Copy n bytes between host and the GPU memory at gpu (to_gpu: host ->
 * gpu).  host_pinned: whether CUDA has pinned the host buffer, where the
 * caller already asked (1 or 0); -1: ask here if it matters.  at: what
 * CUDA says of gpu, where the caller already asked (gdr_cuda_pointer);
 * NULL: ask here.  Each question costs about 0.1 us, a tenth of the
 * margin a 32 KiB DMA has over cuMemcpyDtoHAsync's 1.1x.  0, or a
 * positive errno with the reason logged under caller's name: EINVAL when
 * no GPU memory is at gpu, EIO when the copy failed.
 */
int gdr_dma(uint64_t gpu, void *host, size_t n, int to_gpu, int host_pinned,
	    const struct gdr_cuda_ptr *at, const char *caller);

/*
 * Whether CUDA has pinned [host, +n) (gdr_cuda_host_pinned), an answer
 * the thread got for the same buffer and size (one of its last few)
 * reused for its next GDR_HOST_REUSE questions of them.  For choosing
 * how to copy only: an answer gone stale (a buffer registered or
 * unregistered since) picks a slower way for those copies, never a wrong
 * one, as CUDA stages pageable memory that it is handed as if pinned.
 */
#define GDR_HOST_REUSE	64
int gdr_host_pinned_reused(const void *host, size_t n);

/* The same through the staged path's pinned buffers (dma_stage.h), for
 * pageable host memory; through CUDA's own staging where no pinned memory
 * is to be had for the buffers. */
int gdr_dma_staged(uint64_t gpu, void *host, size_t n, int to_gpu,
		   const struct gdr_cuda_ptr *at, const char *caller);

#endif /* GDRMAP_DMA_H */
