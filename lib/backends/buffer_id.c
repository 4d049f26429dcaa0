// SPDX-License-Identifier: MIT
/*
 * Frees seen without a module.  gdrdrv learns that memory under a pin was
 * freed from NVIDIA's free callback; the module-free backends have none,
 * and their pins keep the memory alive, so a consumer's cache of pins
 * would never learn that the application freed or replaced it.  CUDA
 * gives every allocation, and every cuMemMap of VMM memory, a buffer ID
 * that is never reused and that a freed address no longer has: the ID at
 * the pinned address, recorded at pin time, tells.  One pointer query
 * per gdr_get_callback_flag (tens of ns on an H200), nothing on the copy
 * path.
 */
#include "base/backend.h"
#include "base/cuda_api.h"
#include "base/internal.h"

void gdr_buffer_id_record(struct gdr_region *r)
{
	struct gdr_cuda_ptr p;

	gdr_cuda_pointer(r->addr, &p);
	r->buffer_id = p.buffer_id;
}

int gdr_buffer_id_callback_flag(struct gdr *g, struct gdr_region *r,
				int *flag)
{
	struct gdr_cuda_ptr p;

	(void)g;
	/* Nothing was there to watch (a window starting between
	 * allocations): nothing can be said. */
	if (!r->buffer_id) {
		*flag = 0;
		return 0;
	}
	gdr_cuda_pointer(r->addr, &p);
	*flag = p.buffer_id != r->buffer_id;
	return 0;
}
