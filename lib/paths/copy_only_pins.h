/* SPDX-License-Identifier: MIT */
/*
 * Copy-only pins: GPU memory that the module-free backend in use cannot
 * map for the CPU (cuMemAlloc memory under the vulkan backend, a range
 * that runs past its allocation, VMM memory without a POSIX fd handle
 * type), pinned anyway and served by DMA.
 *
 * Why they exist: GDRCopy's gdr_open succeeds only where any CUDA memory
 * can be pinned, and consumers that register arbitrary application memory
 * (UCX, libfabric, MVAPICH) treat a failed pin as fatal.  Those consumers
 * only call gdr_copy_to/from_mapping on it, so a pin that the backend
 * cannot map is served by copies instead: gdr_map returns an address range
 * reserved with no access at all, gdr_copy_* move the bytes with
 * cuMemcpy*Async on a private non-blocking stream of the memory's own
 * context (never ordered behind the application's work), and a direct
 * load or store through the pointer faults at once.  gdr_get_info reports
 * such a mapping as GDR_MAPPING_TYPE_NONE (mapped 0).  docs/copy-only.md
 * has the reasons and the alternatives weighed.
 *
 * GDRMAP_COPY_ONLY=0 refuses such pins instead, as before.
 */
#ifndef GDRMAP_COPY_ONLY_H
#define GDRMAP_COPY_ONLY_H

#include <stddef.h>
#include <stdint.h>

#include "base/backend.h"

/*
 * Pin r copy-only; the backend's pin said why it cannot map it with
 * gdr_pin_unmappable().  Checks that the range is GPU memory (not host or
 * managed memory), else refuses with an explanation.  g->lock held.
 * Returns 0 or a positive errno; on success r->ops is the copy-only table.
 */
int gdr_copy_only_pin(struct gdr *g, struct gdr_region *r, const char *caller);

/* The copy functions' slow path: [map_ptr, +n) is inside r's mapping,
 * which starts at base. */
int gdr_copy_only_to_mapping(struct gdr_region *r, uintptr_t base,
			     void *map_ptr, const void *host, size_t n);
int gdr_copy_only_from_mapping(struct gdr_region *r, uintptr_t base,
			       void *host, const void *map_ptr, size_t n);

#endif /* GDRMAP_COPY_ONLY_H */
