/* SPDX-License-Identifier: MIT */
/*
 * One copy of gdrmap_copy_* by a named path (path_run.c): whether the path
 * can serve it, why not, and the copy itself.  path_auto.c chooses the
 * path; this is what each choice runs.
 */
#ifndef GDRMAP_PATH_RUN_H
#define GDRMAP_PATH_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "path_choose.h"

/* A region's dma_id when CUDA gave no buffer ID (DMA never serves it). */
#define GDR_NO_DMA_ID	(~0ULL)

/* One copy: what gdrmap_copy_* were asked, and what was found out. */
struct gdr_job {
	struct gdr_region *r;
	int kind;			/* of the host buffer, GDR_HOST_* */
	uintptr_t base;			/* of r's mapping */
	void *map;
	void *host;
	size_t n;
	int to_gpu;
	uint64_t gpu;			/* CUDA's address of map */
	int asked;			/* at holds CUDA's word on gpu */
	int watch_now;			/* time it: the watch sampled it */
	struct gdr_cuda_ptr at;
	const char *caller;
};

/* What the host kind says for gdr_dma: 1 pinned, 0 not, -1 not asked. */
static inline int gdr_job_host_pinned(int kind)
{
	return kind == GDR_HOST_ANY ? -1 : kind == GDR_HOST_PINNED;
}

/*
 * May DMA serve j now: is the memory at its region's address the one
 * pinned?  Asks CUDA about j's own address once per copy (j->at).
 */
int gdr_job_dma_usable(struct gdr_job *j, const struct gdr_tune *t);

/* Can path p serve a copy of n bytes of j's region in t's direction? */
int gdr_job_possible(struct gdr_job *j, const struct gdr_tune *t, int p,
		     size_t n);

/* The paths that can serve n bytes of j with t, as bits (1 << path). */
int gdr_job_possible_paths(struct gdr_job *j, const struct gdr_tune *t,
			   size_t n);

/* Why path cannot serve n bytes with t (gdr_job_possible said no). */
const char *gdr_job_why_not(const struct gdr_tune *t, int path, size_t n);

/*
 * Copy j by path p.  A threaded copy that finds the helpers busy, and a
 * DMA that fails, fall back to the mapping: the copy is made anyway.
 * Returns 0.
 */
int gdr_job_run(const struct gdr_job *j, int p);

#endif /* GDRMAP_PATH_RUN_H */
