// SPDX-License-Identifier: MIT
/* Percentiles and histograms of latency samples (stats.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double stats_percentile(const double *sorted, size_t n, double pct)
{
	size_t rank;

	if (!n)
		return NAN;
	if (pct <= 0)
		return sorted[0];
	rank = (size_t)ceil(pct / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

void stats_compute(struct stats *st, double *v, size_t n)
{
	double sum = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	st->n = n;
	if (!n) {
		st->p0 = st->p50 = st->p99 = st->max = st->mean = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	st->p0 = v[0];
	st->p50 = stats_percentile(v, n, 50);
	st->p99 = stats_percentile(v, n, 99);
	st->max = v[n - 1];
	st->mean = sum / (double)n;
}

void stats_json_fields(struct json *j, const struct stats *st)
{
	json_int(j, "n", (long long)st->n);
	json_num(j, "p0", st->p0);
	json_num(j, "p50", st->p50);
	json_num(j, "p99", st->p99);
	json_num(j, "max", st->max);
	json_num(j, "mean", st->mean);
}

void stats_json(struct json *j, const char *key, const struct stats *st)
{
	json_obj_begin(j, key);
	stats_json_fields(j, st);
	json_obj_end(j);
}

void histogram_build(struct histogram *h, const double *v, size_t n)
{
	static const double steps[] = { 1, 2, 5 };
	double decade = 1;
	size_t i, b;

	memset(h, 0, sizeof(*h));
	for (b = 0; b < HIST_BUCKETS; b++) {
		h->lo[b] = decade * steps[b % 3];
		if (b % 3 == 2)
			decade *= 10;
	}
	h->first = HIST_BUCKETS;
	for (i = 0; i < n; i++) {
		/* The last bucket whose lower edge is at or below the sample;
		 * anything under 1 ns counts in the first. */
		for (b = HIST_BUCKETS - 1; b > 0 && v[i] < h->lo[b]; b--)
			;
		h->count[b]++;
		if (b < h->first)
			h->first = b;
		if (b > h->last)
			h->last = b;
	}
	h->n = n;
	if (!n)
		h->first = h->last = 0;
}

static double bucket_hi(const struct histogram *h, size_t b)
{
	return b + 1 < HIST_BUCKETS ? h->lo[b + 1] : INFINITY;
}

void histogram_json(struct json *j, const struct histogram *h)
{
	size_t b;

	json_arr_begin(j, "histogram");
	for (b = h->first; h->n && b <= h->last; b++) {
		json_obj_begin(j, NULL);
		json_num(j, "lo_ns", h->lo[b]);
		json_num(j, "hi_ns", bucket_hi(h, b));
		json_int(j, "count", (long long)h->count[b]);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void histogram_print(const struct histogram *h, int width)
{
	size_t b, most = 0;
	char lo[32], hi[32];

	for (b = h->first; h->n && b <= h->last; b++)
		if (h->count[b] > most)
			most = h->count[b];
	for (b = h->first; h->n && b <= h->last; b++) {
		int bar = (int)((double)h->count[b] * width / (double)most);

		if (h->count[b] && !bar)
			bar = 1;
		printf("    %10s - %-10s %8zu %.*s\n",
		       fmt_ns(h->lo[b], lo, sizeof(lo)),
		       fmt_ns(bucket_hi(h, b), hi, sizeof(hi)), h->count[b],
		       bar, "##################################################"
			    "##############################");
	}
}

const char *fmt_ns(double ns, char *buf, size_t len)
{
	if (isnan(ns))
		snprintf(buf, len, "-");
	else if (isinf(ns))
		snprintf(buf, len, "inf");
	else if (ns < 10000)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e7)
		snprintf(buf, len, "%.2f us", ns / 1e3);
	else
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	return buf;
}

double timer_overhead_ns(void)
{
	double v[1001], t0;
	struct stats st;
	size_t i;

	for (i = 0; i < 1001; i++) {
		t0 = now_ns();
		v[i] = now_ns() - t0;
	}
	stats_compute(&st, v, 1001);
	return st.p50;
}
