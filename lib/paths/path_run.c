// SPDX-License-Identifier: MIT
/*
 * One copy of gdrmap_copy_* by a named path (path_run.h).
 *
 * DMA goes to the CUDA address of the pin, so it is taken only while the
 * memory there is the memory pinned: the buffer ID CUDA gives it (new for
 * every allocation and every cuMemMap, never reused) still matches.  A
 * pin whose memory was freed keeps the mapping path, which still reaches
 * the pinned pages.
 */
#include <stdatomic.h>

#include "dma.h"
#include "dma_stage.h"
#include "isa/copy.h"
#include "path_run.h"
#include "threads.h"

/*
 * May DMA serve j now: is the memory at its region's address the one
 * pinned?  Asked of the copy's own address, once a copy (j->at, which the
 * DMA goes on to use); a region over several allocations whose copy is
 * not in the one its address starts needs a second question.
 */
int gdr_job_dma_usable(struct gdr_job *j, const struct gdr_tune *t)
{
	struct gdr_region *r = j->r;
	unsigned long long id = atomic_load_explicit(&r->dma_id,
						     memory_order_relaxed);
	struct gdr_cuda_ptr first;

	if (t->dev < 0 || !id || id == GDR_NO_DMA_ID)
		return 0;
	if (!j->asked) {
		gdr_cuda_pointer(j->gpu, &j->at);
		j->asked = 1;
	}
	if (r->addr - j->at.start < j->at.size)
		return j->at.buffer_id == id;
	gdr_cuda_pointer(r->addr, &first);
	return first.buffer_id == id;
}

/* Can path p serve a copy of n bytes of j's region in t's direction? */
int gdr_job_possible(struct gdr_job *j, const struct gdr_tune *t, int p,
		     size_t n)
{
	switch (p) {
	case GDRMAP_COPY_PATH_MAPPING:
		return 1;
	case GDRMAP_COPY_PATH_THREADS:
		/* Smaller copies are not split: no helper threads for them. */
		return n >= GDR_THREADS_MIN && gdr_threads_helpers() > 0;
	case GDRMAP_COPY_PATH_DMA:
		return gdr_job_dma_usable(j, t);
	case GDRMAP_COPY_PATH_STAGED:
		/* Pinned memory goes straight: staging would only add a copy. */
		return t->kind == GDR_HOST_PAGEABLE && n >= GDR_STAGE_MIN &&
		       gdr_threads_helpers() > 0 && gdr_job_dma_usable(j, t);
	default:
		return 0;
	}
}

/*
 * One copy by path p.  A threaded copy that finds the helpers busy, and
 * a DMA that fails, fall back to the mapping: the copy is made anyway.
 */
int gdr_job_run(const struct gdr_job *j, int p)
{
	const struct gdr_copy_impl *copy =
		atomic_load_explicit(&j->r->copy, memory_order_relaxed);
	const struct gdr_cuda_ptr *at = j->asked ? &j->at : NULL;

	if (p == GDRMAP_COPY_PATH_DMA &&
	    !gdr_dma(j->gpu, j->host, j->n, j->to_gpu,
		     gdr_job_host_pinned(j->kind), at, j->caller))
		return 0;
	if (p == GDRMAP_COPY_PATH_STAGED &&
	    !gdr_dma_staged(j->gpu, j->host, j->n, j->to_gpu, at, j->caller))
		return 0;
	if (p == GDRMAP_COPY_PATH_THREADS &&
	    !(j->to_gpu ?
	      gdr_threads_copy(copy->to_mapping, j->map, j->host, j->n, 1) :
	      gdr_threads_copy(copy->from_mapping, j->host, j->map, j->n, 0)))
		return 0;
	if (j->to_gpu)
		copy->to_mapping(j->map, j->host, j->n);
	else
		copy->from_mapping(j->host, j->map, j->n);
	return 0;
}

int gdr_job_possible_paths(struct gdr_job *j, const struct gdr_tune *t,
			   size_t n)
{
	int p, bits = 0;

	for (p = 1; p < GDR_NPATH; p++)
		if (gdr_job_possible(j, t, p, n))
			bits |= 1 << p;
	return bits;
}

/* Why path cannot serve n bytes with t (gdr_job_possible said no). */
const char *gdr_job_why_not(const struct gdr_tune *t, int path, size_t n)
{
	if ((path == GDRMAP_COPY_PATH_THREADS && n < GDR_THREADS_MIN) ||
	    (path == GDRMAP_COPY_PATH_STAGED && n < GDR_STAGE_MIN))
		return "the copy is too small to split";
	if (path == GDRMAP_COPY_PATH_STAGED && t->kind != GDR_HOST_PAGEABLE)
		return "the host buffer is pinned by CUDA: the dma path copies it straight";
	if ((path == GDRMAP_COPY_PATH_THREADS ||
	     path == GDRMAP_COPY_PATH_STAGED) && !gdr_threads_helpers())
		return "this thread may run on one CPU only, or GDRMAP_COPY_THREADS=0: no helper threads";
	return "CUDA does not know the memory under the pin (not loaded, freed since it was pinned, or another process's)";
}
