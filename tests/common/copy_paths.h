/* SPDX-License-Identifier: MIT */
/*
 * Which of gdrmap_copy_*'s forced paths refuse a copy (lib/paths/path_auto.c,
 * gdrapi.h): what the copy tests of every tier expect of the _via calls;
 * and what the unit tests that model the paths' costs share.
 */
#ifndef GDRMAP_TEST_COPY_PATHS_H
#define GDRMAP_TEST_COPY_PATHS_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"

/*
 * A size class may be measuring again at any copy (its choice grew slower
 * than its rival: docs/best-path.md), so gdrmap_copy_path can say AUTO
 * after any number of copies; what the tests ask is that a class settles
 * within COPY_SETTLE more copies.
 */
#define COPY_SETTLE	400

/* May this thread run on one CPU only (the library starts no helpers)? */
static inline int copy_one_cpu(void)
{
	cpu_set_t set;

	return !sched_getaffinity(0, sizeof(set), &set) &&
	       CPU_COUNT(&set) == 1;
}

/*
 * Does path refuse n bytes from or to host memory (host_pinned: pinned by
 * CUDA) where the library has helper threads or not?  Threads below
 * 2 KiB, staged below 256 KiB or for pinned memory, both without helpers.
 */
static inline int copy_path_refused(int path, size_t n, int host_pinned,
				    int helpers)
{
	if (path == GDRMAP_COPY_PATH_THREADS)
		return n < 2048 || !helpers;
	if (path == GDRMAP_COPY_PATH_STAGED)
		return n < (256 << 10) || host_pinned || !helpers;
	return 0;
}

/*
 * For gdr_copy_watch_cost: the watched copies of a decided class cost
 * nothing.  The fake's real copies beside a model's times would look like
 * a slowed choice and measure the class again (test_copy_auto_watch tests
 * that).
 */
static inline uint64_t no_drift(int path, size_t n, int to_gpu, uint64_t ns)
{
	(void)path, (void)n, (void)to_gpu, (void)ns;
	return 0;
}

#endif /* GDRMAP_TEST_COPY_PATHS_H */
