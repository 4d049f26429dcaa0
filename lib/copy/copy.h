/* SPDX-License-Identifier: MIT */
/*
 * The copy engine: routines that move bytes to and from a CPU mapping of
 * GPU memory.  One set of routines per instruction set, each in its own
 * file built with its own compiler flags; dispatch.c picks one set per
 * process from the CPU's features (or GDRMAP_COPY).
 *
 * Contract of every routine, whatever the mapping type it serves:
 *  - any size (0 included) and any alignment of either pointer;
 *  - only [dst, dst + n) is written; nothing outside it, not even with the
 *    same value;
 *  - every access to the mapping is naturally aligned;
 *  - to_mapping ends with a fence that makes its stores visible to the
 *    device before it returns (sfence for write-combined memory);
 *  - from_mapping issues a full fence before its first load, so it never
 *    returns data older than a read that completed before it started, and
 *    touches nothing outside the 64-byte lines that cover [src, src + n);
 *    the streaming routines load each of those lines exactly once.
 */
#ifndef GDRMAP_COPY_H
#define GDRMAP_COPY_H

#include <stddef.h>

#include "gdrapi.h"

struct gdr_copy_impl {
	const char *name;
	/* Nonzero when the CPU and the OS support this routine set. */
	int (*supported)(void);
	/* host -> mapping */
	void (*to_mapping)(void *map_dst, const void *host_src, size_t n);
	/* mapping -> host */
	void (*from_mapping)(void *host_dst, const void *map_src, size_t n);
};

/* Every routine set built into this library, NULL-terminated; the
 * preferred ones come first. */
extern const struct gdr_copy_impl *const gdr_copy_impls[];

/*
 * The routine set for a mapping type: WC gets the best streaming set this
 * CPU supports (chosen once per process), DEVICE the aligned scalar set,
 * CACHING plain memcpy.  NULL for GDR_MAPPING_TYPE_NONE or an unknown type.
 */
const struct gdr_copy_impl *gdr_copy_for_type(gdr_mapping_type_t type);

/* Find a built routine set by name; NULL if none. */
const struct gdr_copy_impl *gdr_copy_find(const char *name);

#endif /* GDRMAP_COPY_H */
