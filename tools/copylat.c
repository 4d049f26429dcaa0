// SPDX-License-Identifier: MIT
/*
 * gdrmap copylat: the latency of one copy call to and from a mapping, per
 * size (powers of two), with cuMemcpyHtoD/DtoH from the same pinned host
 * buffer measured in the same run.  Every sample is one call, timed on
 * its own, so the percentiles show the spread a caller sees; each size's
 * data is checked both ways against cuMemcpy before it is timed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "commands.h"
#include "session.h"
#include "stats.h"

/* Bytes moved per size and method at most, so large sizes take fewer
 * samples: reads through a mapping run at about 1 GB/s. */
#define WRITE_BYTES_CAP	(256UL << 20)
#define READ_BYTES_CAP	(64UL << 20)
#define MIN_SAMPLES	10
#define MAX_SIZES	64

enum method { TO_MAP, HTOD, FROM_MAP, DTOH, NMETHODS };

static const char *const method_keys[NMETHODS] = {
	"gdr_copy_to_mapping", "cuMemcpyHtoD",
	"gdr_copy_from_mapping", "cuMemcpyDtoH",
};

struct row {
	size_t size;
	bool verified;
	char why[256];
	struct stats st[NMETHODS];
};

struct ctx {
	struct session *s;
	struct gpubuf *b;
	char *host;		/* host buffer at the offset */
	char *dev;		/* CPU pointer into the mapping at the offset */
	CUdeviceptr dptr;	/* GPU address at the offset */
};

/* One call; nonzero if it failed. */
static int one_copy(struct ctx *c, enum method m, size_t n)
{
	switch (m) {
	case TO_MAP:
		return gdr_copy_to_mapping(c->b->mh, c->dev, c->host, n);
	case FROM_MAP:
		return gdr_copy_from_mapping(c->b->mh, c->host, c->dev, n);
	case HTOD:
		return c->s->cu->MemcpyHtoD(c->dptr, c->host, n);
	case DTOH:
		return c->s->cu->MemcpyDtoH(c->host, c->dptr, n);
	default:
		return -1;
	}
}

static size_t samples_for(const struct opts *o, enum method m, size_t n)
{
	bool write = m == TO_MAP || m == HTOD;
	size_t want = (size_t)(write ? o->w_iters : o->r_iters);
	size_t cap = (write ? WRITE_BYTES_CAP : READ_BYTES_CAP) / n;

	if (cap < MIN_SAMPLES)
		cap = MIN_SAMPLES;
	return want < cap ? want : cap;
}

static int measure(struct ctx *c, enum method m, size_t n, double *v,
		   struct stats *st)
{
	const struct opts *o = c->s->o;
	size_t k = samples_for(o, m, n), i;
	double t0;

	for (i = 0; i < 2 && !o->cold; i++)
		if (one_copy(c, m, n))
			return -1;
	for (i = 0; i < k; i++) {
		if (o->cold)
			flush_range(c->host, n);
		t0 = now_ns();
		if (one_copy(c, m, n))
			return -1;
		v[i] = now_ns() - t0;
	}
	stats_compute(st, v, k);
	return 0;
}

static void print_table(const struct row *rows, int nrows)
{
	static const char *const heads[NMETHODS] = {
		"to mapping", "cuMemcpyHtoD", "from mapping", "cuMemcpyDtoH",
	};
	char a[32], b[32], d[32];
	int r, m;

	printf("\nlatency of one call, p0 / p50 / p99\n%9s", "size");
	for (m = 0; m < NMETHODS; m++)
		printf("  %-30s", heads[m]);
	printf("\n");
	for (r = 0; r < nrows; r++) {
		printf("%9zu", rows[r].size);
		if (!rows[r].verified) {
			printf("  WRONG DATA: %s\n", rows[r].why);
			continue;
		}
		for (m = 0; m < NMETHODS; m++) {
			char cell[40];

			snprintf(cell, sizeof(cell), "%s / %s / %s",
				 fmt_ns(rows[r].st[m].p0, a, sizeof(a)),
				 fmt_ns(rows[r].st[m].p50, b, sizeof(b)),
				 fmt_ns(rows[r].st[m].p99, d, sizeof(d)));
			printf("  %-30s", cell);
		}
		printf("\n");
	}
}

static void print_json(const struct session *s, const struct gpubuf *b,
		       const struct row *rows, int nrows, bool all_ok)
{
	const struct opts *o = s->o;
	struct json j;
	int r, m;

	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	session_json_header(&j, s, b);
	json_str(&j, "unit", "ns");
	json_int(&j, "offset", (long long)o->offset);
	json_bool(&j, "cold_cache", o->cold);
	json_str(&j, "host_memory", "pinned");
	json_arr_begin(&j, "results");
	for (r = 0; r < nrows; r++) {
		json_obj_begin(&j, NULL);
		json_int(&j, "size", (long long)rows[r].size);
		json_bool(&j, "verified", rows[r].verified);
		if (!rows[r].verified)
			json_str(&j, "error", rows[r].why);
		for (m = 0; m < NMETHODS && rows[r].verified; m++)
			stats_json(&j, method_keys[m], &rows[r].st[m]);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_bool(&j, "verified", all_ok);
	json_finish(&j);
}

int cmd_copylat(int argc, char **argv)
{
	struct row rows[MAX_SIZES];
	struct session s;
	struct gpubuf b;
	struct opts o;
	struct ctx c;
	size_t n, maxk;
	bool pinned, all_ok = true;
	double *v = NULL;
	char *host = NULL;
	int ret, nrows = 0, m;

	ret = opts_parse(CMD_COPYLAT, argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (o.cold && !flush_supported())
		return fail(&o, EXIT_USAGE, "--cold is not supported on this CPU architecture");
	for (n = o.min_size; n <= o.size && nrows < MAX_SIZES - 1; n *= 2)
		rows[nrows++].size = n;
	if (rows[nrows - 1].size != o.size)
		rows[nrows++].size = o.size;

	ret = session_open(&s, &o);
	if (ret)
		goto close;
	ret = gpubuf_open(&s, &b, o.offset + o.size, o.offset);
	if (ret)
		goto close_buf;
	host = host_alloc(&s, o.offset + o.size, &pinned);
	maxk = (size_t)(o.w_iters > o.r_iters ? o.w_iters : o.r_iters);
	v = malloc(maxk * sizeof(*v));
	if (!host || !v) {
		ret = fail(&o, EXIT_CANNOT, "out of memory");
		goto free_host;
	}
	c.s = &s;
	c.b = &b;
	c.host = host + o.offset;
	c.dev = b.cpu + o.offset;
	c.dptr = b.base + o.offset;
	if (!o.json)
		session_print_header(&s, &b);

	for (int r = 0; r < nrows; r++) {
		ret = verify_both_ways(&s, &b, o.offset, rows[r].size,
				       rows[r].why, sizeof(rows[r].why));
		rows[r].verified = ret == 0;
		if (ret == EXIT_CANNOT) {
			ret = fail(&o, EXIT_CANNOT, "%s", rows[r].why);
			goto free_host;
		}
		if (ret) {
			all_ok = false;
			fprintf(stderr, "gdrmap copylat: %s\n", rows[r].why);
			continue;
		}
		for (m = 0; m < NMETHODS; m++) {
			if (measure(&c, (enum method)m, rows[r].size, v,
				    &rows[r].st[m])) {
				ret = fail(&o, EXIT_CANNOT, "%s of %zu bytes failed",
					   method_keys[m], rows[r].size);
				goto free_host;
			}
		}
	}
	if (o.json)
		print_json(&s, &b, rows, nrows, all_ok);
	else
		print_table(rows, nrows);
	ret = all_ok ? EXIT_OK : EXIT_WRONG;
free_host:
	free(v);
	if (host)
		host_free(&s, host, pinned);
close_buf:
	gpubuf_close(&s, &b);
close:
	session_close(&s);
	return ret;
}
