/* SPDX-License-Identifier: MIT */
/*
 * The clock every timing in the tree reads (the library's path choice and
 * copy threads, the gdrmap command's measurements): CLOCK_MONOTONIC in
 * nanoseconds, which no clock change moves.
 */
#ifndef GDRMAP_NOW_NS_H
#define GDRMAP_NOW_NS_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

#endif /* GDRMAP_NOW_NS_H */
