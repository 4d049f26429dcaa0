// SPDX-License-Identifier: MIT
/* Runs, crossovers and ratio summaries of copy paths (pathsum.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gdrapi.h"
#include "pathsum.h"

const char *fmt_size(size_t n, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (n && !(n & 1023) && u < 3) {
		n >>= 10;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%zu", n);
	else
		snprintf(buf, len, "%zu%c", n, units[u]);
	return buf;
}

static bool known(int path)
{
	return path >= GDRMAP_COPY_PATH_MAPPING &&
	       path <= GDRMAP_COPY_PATH_STAGED;
}

int path_crossovers(const size_t *size, const int *path, int n,
		    struct crossover *out, int max)
{
	int i, last = -1, k = 0;

	for (i = 0; i < n; i++) {
		if (!known(path[i]))
			continue;
		if (last >= 0 && path[i] != last && k < max) {
			out[k].size = size[i];
			out[k].from = last;
			out[k].to = path[i];
			k++;
		}
		last = path[i];
	}
	return k;
}

/* Names here rather than paths.c's, so that this file stays pure. */
static const char *name(int path)
{
	static const char *const names[] = { "auto", "mapping", "threads",
					     "dma", "staged" };

	return names[path];
}

/* "4K-64M", or "8" for a run of one size. */
static void span_text(char *out, size_t len, size_t lo, size_t hi)
{
	char a[24], b[24];

	if (lo == hi)
		snprintf(out, len, "%s", fmt_size(lo, a, sizeof(a)));
	else
		snprintf(out, len, "%s-%s", fmt_size(lo, a, sizeof(a)),
			 fmt_size(hi, b, sizeof(b)));
}

void path_runs(char *buf, size_t len, const size_t *size, const int *path,
	       int n)
{
	char span[64];
	size_t used = 0;
	int i, first = -1, last = -1;

	buf[0] = 0;
	for (i = 0; i <= n; i++) {
		if (i < n && !known(path[i]))
			continue;
		/* A run ends where the path changes, and at the end. */
		if (first >= 0 && (i == n || path[i] != path[first])) {
			span_text(span, sizeof(span), size[first], size[last]);
			used += (size_t)snprintf(buf + used,
						 used < len ? len - used : 0,
						 "%s%s %s", used ? ", " : "",
						 name(path[first]), span);
			if (used >= len)
				return;
			first = -1;
		}
		if (i == n)
			break;
		if (first < 0)
			first = i;
		last = i;
	}
	if (!used)
		snprintf(buf, len, "-");
}

void ratio_init(struct ratio_sum *r)
{
	memset(r, 0, sizeof(*r));
	r->worst = NAN;
}

void ratio_add(struct ratio_sum *r, size_t size, double ratio, double limit)
{
	if (isnan(ratio))
		return;
	r->sizes++;
	if (ratio <= limit)
		r->within++;
	if (isnan(r->worst) || ratio > r->worst) {
		r->worst = ratio;
		r->worst_size = size;
	}
}
