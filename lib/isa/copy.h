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
 *    the streaming routines load each of those lines exactly once, the
 *    generic one each naturally aligned 8-byte word of them at most once.
 *
 * The routines take no lock and test no feature: callers look a set up
 * once (gdr_copy_for_type) and call through its pointers from then on.
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

/*
 * Every routine set for write-combined mappings built into this library,
 * NULL-terminated, the preferred ones first; the last is always "generic",
 * which every CPU supports.  These are the names GDRMAP_COPY accepts.
 */
extern const struct gdr_copy_impl *const gdr_copy_impls[];

/* The routine sets, for callers (and tests) that want one by itself.
 * Only those of the architecture being built exist. */
extern const struct gdr_copy_impl gdr_copy_generic;
/* libc memcpy between fences: for cached, coherent mappings only. */
extern const struct gdr_copy_impl gdr_copy_memcpy;
#if defined(__x86_64__)
extern const struct gdr_copy_impl gdr_copy_sse41;
extern const struct gdr_copy_impl gdr_copy_avx2;
extern const struct gdr_copy_impl gdr_copy_avx512;
extern const struct gdr_copy_impl gdr_copy_movdir64b;
/* The MOVDIR64B set reads with the SSE4.1 routine: MOVDIR64B only writes. */
void gdr_copy_sse41_from_mapping(void *host_dst, const void *map_src,
				 size_t n);
#elif defined(__aarch64__)
extern const struct gdr_copy_impl gdr_copy_neon;
#endif

/*
 * The routine set for a mapping type: WC gets the set chosen once per
 * process by gdr_copy_select(getenv("GDRMAP_COPY")), DEVICE the generic
 * aligned scalar set, CACHING memcpy.  NULL for GDR_MAPPING_TYPE_NONE or
 * an unknown type.  GDRMAP_COPY affects WC mappings only: the other types
 * need the access kinds their own set makes.
 */
const struct gdr_copy_impl *gdr_copy_for_type(gdr_mapping_type_t type);

/* Find a built routine set of gdr_copy_impls by name; NULL if none. */
const struct gdr_copy_impl *gdr_copy_find(const char *name);

/*
 * The set a WC mapping should use when GDRMAP_COPY is `forced` (NULL or
 * "" when it is unset): that set if it is built and supported, otherwise
 * the first supported one of gdr_copy_impls.  An ignored name is reported
 * on stderr when GDRCOPY_ENABLE_LOGGING is set.  No caching: it is the
 * seam that lets tests try names without a new process.
 */
const struct gdr_copy_impl *gdr_copy_select(const char *forced);

#endif /* GDRMAP_COPY_H */
