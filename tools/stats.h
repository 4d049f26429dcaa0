/* SPDX-License-Identifier: MIT */
/*
 * Latency samples: percentiles, a histogram, and their JSON and text
 * forms.  Every measuring command reports through these, so that figures
 * mean the same everywhere: p0 is the minimum, pN the nearest-rank
 * percentile (the smallest sample with at least N% of samples at or
 * below it), all in nanoseconds.
 */
#ifndef GDRMAP_TOOLS_STATS_H
#define GDRMAP_TOOLS_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "json.h"
#include "now_ns.h"

struct stats {
	size_t n;
	double p0, p50, p99, max, mean;
};

/* Sorts v in place. */
void stats_compute(struct stats *st, double *v, size_t n);

/* The nearest-rank percentile of n sorted samples. */
double stats_percentile(const double *sorted, size_t n, double pct);

/* "key": {"n":..,"p0":..,"p50":..,"p99":..,"max":..,"mean":..} */
void stats_json(struct json *j, const char *key, const struct stats *st);
/* The same members, into an object the caller has open. */
void stats_json_fields(struct json *j, const struct stats *st);

/*
 * Histogram buckets on a 1-2-5 series (1, 2, 5, 10, 20, 50 ns, ...),
 * which stays readable over the six decades an API call can span.
 */
#define HIST_BUCKETS 40
struct histogram {
	double lo[HIST_BUCKETS];	/* lower edge of each bucket, ns */
	size_t count[HIST_BUCKETS];
	size_t first, last;		/* the non-empty range */
	size_t n;
};

void histogram_build(struct histogram *h, const double *v, size_t n);
/* "histogram": [{"lo_ns":..,"hi_ns":..,"count":..}, ...] (non-empty range) */
void histogram_json(struct json *j, const struct histogram *h);
/* One line per bucket with a bar scaled to width characters. */
void histogram_print(const struct histogram *h, int width);

/* A time in ns, for text output: "123 ns", "4.56 us", "7.89 ms". */
const char *fmt_ns(double ns, char *buf, size_t len);

/*
 * The median cost of reading the clock twice, as every sample does: it
 * is included in every figure, and reported so that a reader can tell
 * how much of a 100 ns write is the clock.
 */
double timer_overhead_ns(void);

#endif /* GDRMAP_TOOLS_STATS_H */
