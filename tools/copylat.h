/* SPDX-License-Identifier: MIT */
/*
 * copylat's results, shared by the measuring (copylat.c) and the
 * reports (copylat_text.c, copylat_json.c): one row per size, one latency
 * summary per call measured; what a row says is copylat_model.c's.
 */
#ifndef GDRMAP_TOOLS_COPYLAT_H
#define GDRMAP_TOOLS_COPYLAT_H

#include <stdbool.h>
#include <stdio.h>

#include "json.h"
#include "stats.h"

enum method {
	TO_MAP, HTOD, FROM_MAP, DTOH,	/* gdr_copy_*, cuMemcpy */
	TO_AUTO, FROM_AUTO,		/* gdrmap_copy_*: the path it picks */
	TO_VIA_MAP, TO_VIA_THREADS, TO_VIA_DMA, TO_VIA_STAGED,	/* --paths: */
	FROM_VIA_MAP, FROM_VIA_THREADS, FROM_VIA_DMA, FROM_VIA_STAGED,	/* forced */
	HTOD_ASYNC, DTOH_ASYNC,		/* --paths: cuMemcpy*Async on a private
					 * non-blocking stream, + sync */
	NMETHODS
};

struct method_def {
	const char *key;	/* in the JSON: the call, or the path */
	bool write;		/* to the GPU */
	int path;		/* GDRMAP_COPY_PATH_*; -1: not gdrmap_copy_* */
};

extern const struct method_def methods[NMETHODS];

/* The direction's methods: d is 0 for writes, 1 for reads. */
#define M_GDR(d)	((d) ? FROM_MAP : TO_MAP)
#define M_CUDA(d)	((d) ? DTOH : HTOD)
#define M_AUTO(d)	((d) ? FROM_AUTO : TO_AUTO)
#define M_ASYNC(d)	((d) ? DTOH_ASYNC : HTOD_ASYNC)
/* path: GDRMAP_COPY_PATH_MAPPING to _STAGED */
#define M_VIA(d, path)	((d) ? FROM_VIA_MAP + (path) - 1 : \
				TO_VIA_MAP + (path) - 1)

/* A size at or below this is small: gdrmap_copy_* must not be slower
 * there than gdr_copy_* (the "no regression"). */
#define SMALL_COPY	1024
/* gdrmap_copy_*'s p50 may be this much over the fastest path's. */
#define GOAL_RATIO	1.1

struct row {
	size_t size;
	bool verified;
	char why[256];
	unsigned measured;	/* bit per method: st[] holds its figures */
	unsigned na;		/* bit per method: that path cannot serve */
	struct stats st[NMETHODS];
	int chosen[2];		/* gdrmap_copy_path after the timing; [d] */
};

/* What the run measured, for the reports. */
struct copylat_run {
	const struct row *rows;
	int nrows;
	bool calls;		/* gdrmap_copy_* were timed */
	bool paths;		/* --paths: every forced path too, and
				 * cuMemcpy*Async */
	/* Per method, why its path could not serve, at the first size where
	 * it could not (the library's gdrmap_last_error); "" if it always
	 * could.  NULL: none recorded. */
	const struct na_note *na;
};

struct na_note {
	size_t size;
	char why[200];
};

extern const char *const dir_names[2];	/* "write", "read" */

/* The row's data was right and method m was timed. */
bool row_has(const struct row *r, int m);
/* The fastest forced path (GDRMAP_COPY_PATH_*) at a row, or -1. */
int row_fastest(const struct row *r, int d);
/* The fastest other way of moving the row's bytes (--paths): the method
 * (enum method) of least p50 of the forced paths, gdr_copy_*, cuMemcpy
 * and cuMemcpy*Async, or -1. */
int row_fastest_other(const struct row *r, int d);
/* "mapping", ... for a forced path; the call's name for the others. */
const char *method_name(int m);
/* gdrmap_copy_*'s p50 over the fastest forced path's, the fastest other
 * way's, gdr_copy_*'s or cuMemcpy's; NaN where either is missing. */
double row_over_fastest(const struct row *r, int d);
double row_over_other(const struct row *r, int d);
double row_over_gdr(const struct row *r, int d);
double row_over_cuda(const struct row *r, int d);

/* Per direction: the verified sizes, and the path at each: the one
 * gdrmap_copy_* took, or the fastest forced one. */
struct series {
	size_t size[64];
	int path[64];
	int n;
};

void series_of(const struct copylat_run *run, int d, bool fastest,
	       struct series *s);

/* What sum_ratios compares gdrmap_copy_* with, over a direction's rows. */
enum versus {
	VS_FASTEST,	/* the fastest forced path, against GOAL_RATIO */
	VS_OTHER,	/* the fastest other way, against GOAL_RATIO */
	VS_SMALL,	/* gdr_copy_* at the sizes up to SMALL_COPY, against 1 */
};
struct ratio_sum;
void sum_ratios(const struct copylat_run *run, int d, enum versus vs,
		struct ratio_sum *rs);

/* The text tables and summary lines (after the common header). */
void copylat_text(FILE *f, const struct copylat_run *run);
/* The members after the common header, up to "verified". */
void copylat_json(struct json *j, const struct copylat_run *run);

#endif /* GDRMAP_TOOLS_COPYLAT_H */
