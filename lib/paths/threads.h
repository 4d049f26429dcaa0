/* SPDX-License-Identifier: MIT */
/*
 * Copies split across the calling thread and a few helper threads.  A
 * core reads a BAR mapping at about 1 GB/s, bounded by its line-fill
 * buffers, whatever the instructions; several cores read it that much
 * faster, up to the point where the copy engine wins.  Writes through the
 * mapping, and the staged path's copies between pageable memory and its
 * pinned buffers (dma_stage.c), gain the same way from more cores.
 */
#ifndef GDRMAP_COPY_THREADS_H
#define GDRMAP_COPY_THREADS_H

#include <stddef.h>

/* Copies smaller than this are not split. */
#define GDR_THREADS_MIN	2048

typedef void (*gdr_part_fn)(void *dst, const void *src, size_t n);

/*
 * How many helper threads a threaded copy has (starting them on first
 * use): GDRMAP_COPY_THREADS if set, else one fewer than the CPUs this
 * thread may run on, at most 3.  0: threaded copies are not possible here.
 */
int gdr_threads_helpers(void);

/*
 * Copy n bytes from src to dst with fn on this thread and the helpers,
 * each part a whole number of 64-byte lines of the mapping side (dst if
 * map_is_dst, else src): no line is touched by two threads, and a
 * from_mapping routine fences before its first load, a to_mapping one
 * after its last store.  0 when done; EBUSY when another thread's
 * threaded copy is in progress, EAGAIN when there are no helpers: nothing
 * was copied, the caller copies by itself.
 */
int gdr_threads_copy(gdr_part_fn fn, void *dst, const void *src, size_t n,
		     int map_is_dst);

/*
 * Wake the helpers and wait (at most 2 ms) until every one is awake: a
 * measurement of threaded reads times them as a burst of reads finds
 * them, not their wake-up.
 */
void gdr_threads_warm(void);

/* In a fork child: the helpers are the parent's. */
void gdr_threads_fork_child(void);

#endif /* GDRMAP_COPY_THREADS_H */
