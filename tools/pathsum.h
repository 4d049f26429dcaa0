/* SPDX-License-Identifier: MIT */
/*
 * Summaries of the paths gdrmap_copy_* took over a series of sizes: the
 * runs of one path and the sizes where the choice changes (crossovers),
 * and how a ratio of latencies fared against a limit.  Pure: no GPU, no
 * library calls, so the unit tests check them on made-up series.
 */
#ifndef GDRMAP_TOOLS_PATHSUM_H
#define GDRMAP_TOOLS_PATHSUM_H

#include <stdbool.h>
#include <stddef.h>

/* A size for text: "8", "4K", "64M", "3G"; bytes when not a whole unit. */
const char *fmt_size(size_t n, char *buf, size_t len);

/* path[i] changes from "from" to "to" at size[i]. */
struct crossover {
	size_t size;
	int from, to;
};

/*
 * The crossovers of n sizes in increasing order, each with its path
 * (GDRMAP_COPY_PATH_*; anything else, such as PATH_UNKNOWN, is passed
 * over): at most max into out, the count returned.
 */
int path_crossovers(const size_t *size, const int *path, int n,
		    struct crossover *out, int max);

/*
 * The same series as text, one run of a path per item:
 * "mapping 8-2K, dma 4K-64M" ("-" when no size has a path).
 */
void path_runs(char *buf, size_t len, const size_t *size, const int *path,
	       int n);

/* Ratios (e.g. one p50 over another) at each size, against a limit. */
struct ratio_sum {
	int sizes;		/* ratios added */
	int within;		/* of them, at or below the limit */
	double worst;		/* the largest */
	size_t worst_size;
};

void ratio_init(struct ratio_sum *r);
/* NaN (nothing to compare) is not counted. */
void ratio_add(struct ratio_sum *r, size_t size, double ratio, double limit);

#endif /* GDRMAP_TOOLS_PATHSUM_H */
