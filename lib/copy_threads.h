/* SPDX-License-Identifier: MIT */
/*
 * Reads through a mapping split across the calling thread and a few
 * helper threads.  A core reads a BAR mapping at about 1 GB/s, bounded by
 * its line-fill buffers, whatever the instructions; several cores read it
 * that much faster, up to the point where the copy engine wins.
 */
#ifndef GDRMAP_COPY_THREADS_H
#define GDRMAP_COPY_THREADS_H

#include <stddef.h>

/* Reads smaller than this are not split. */
#define GDR_THREADS_MIN_READ	2048

typedef void (*gdr_read_fn)(void *host_dst, const void *map_src, size_t n);

/*
 * How many helper threads a threaded read has (starting them on first
 * use): GDRMAP_COPY_THREADS if set, else one fewer than the CPUs this
 * thread may run on, at most 3.  0: threaded reads are not possible here.
 */
int gdr_threads_helpers(void);

/*
 * Read n bytes from map_src into host_dst with fn (a from_mapping routine,
 * which fences before its first load) on this thread and the helpers,
 * each part a whole number of the source's 64-byte lines.  0 when done;
 * EBUSY when another thread's threaded read is in progress, EAGAIN when
 * there are no helpers: nothing was read, the caller reads by itself.
 */
int gdr_threads_read(gdr_read_fn fn, void *host_dst, const void *map_src,
		     size_t n);

/*
 * Wake the helpers and wait (at most 2 ms) until every one is awake: a
 * measurement of threaded reads times them as a burst of reads finds
 * them, not their wake-up.
 */
void gdr_threads_warm(void);

/* In a fork child: the helpers are the parent's. */
void gdr_threads_fork_child(void);

#endif /* GDRMAP_COPY_THREADS_H */
