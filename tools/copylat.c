// SPDX-License-Identifier: MIT
/*
 * gdrmap copylat: the latency of one copy call to and from a mapping, per
 * size (powers of two), with cuMemcpyHtoD/DtoH from the same host buffer
 * (pinned, registered or pageable: --host) measured in the same run.  Every sample is one call, timed on
 * its own, so the percentiles show the spread a caller sees; each size's
 * data is checked both ways against cuMemcpy before it is timed.  Beside
 * them gdrmap_copy_*, which picks the fastest path per size, and with
 * --paths each of its paths forced, timed in turns with gdr_copy_*,
 * cuMemcpy and cuMemcpy*Async on a private stream: the table that says
 * whether its choice is right, and whether anything moves the same bytes
 * faster.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "commands.h"
#include "copylat.h"
#include "paths.h"
#include "session.h"
#include "stats.h"

/* Bytes moved per size and method at most, so large sizes take fewer
 * samples: reads through a mapping run at about 1 GB/s.  But never fewer
 * than MIN_SAMPLES: on an H200, p50s of 10 calls of a 16 MiB pageable
 * read moved by 20% between two runs of the same measurement. */
#define WRITE_BYTES_CAP	(256UL << 20)
#define READ_BYTES_CAP	(64UL << 20)
#define MIN_SAMPLES	20
/* What each --host kind is, for the text header. */
static const char *const host_kind_what[] = {
	[HOST_PINNED] = "cuMemAllocHost",
	[HOST_REGISTERED] = "posix_memalign, cuMemHostRegister",
	[HOST_PAGEABLE] = "posix_memalign, touched, not pinned",
};
#define MAX_SIZES	64
/* --paths: rounds of turns between the methods of a direction */
#define ROUNDS		20
/* --paths: the methods of a direction taking turns: gdr_copy_*,
 * gdrmap_copy_*, the forced paths, cuMemcpy, cuMemcpy*Async */
#define TURNS		(4 + NPATHS - 1)
/* --paths: the pause before each call, so that none pays for the last
 * one's writes still draining from the write-combining buffers (sub-µs
 * copies were bimodal back to back: ~40 or ~150 ns on the H200). */
#define QUIET_NS	2000

struct ctx {
	struct session *s;
	struct gpubuf *b;
	struct na_note *na;	/* [NMETHODS]: why a path could not serve */
	char *host;		/* host buffer at the offset */
	void *vhost;		/* path_verify's, of the same kind */
	char *dev;		/* CPU pointer into the mapping at the offset */
	CUdeviceptr dptr;	/* GPU address at the offset */
	CUstream stream;	/* --paths: cuMemcpy*Async's; NULL: not timed */
};

/* cuMemcpy*Async on the private stream, waited for: as a caller that
 * keeps its copies off the application's streams would copy. */
static int async_copy(struct ctx *c, bool write, size_t n)
{
	const struct tcu *cu = c->s->cu;
	CUresult res;

	res = write ? cu->MemcpyHtoDAsync(c->dptr, c->host, n, c->stream) :
		      cu->MemcpyDtoHAsync(c->host, c->dptr, n, c->stream);
	if (res == CUDA_SUCCESS)
		res = cu->StreamSynchronize(c->stream);
	return res;
}

/* One call; 0, PATH_NA (a path that cannot serve) or nonzero if it
 * failed. */
static int one_copy(struct ctx *c, enum method m, size_t n)
{
	if (methods[m].path >= 0)
		return path_copy(c->b->mh, methods[m].write, methods[m].path,
				 c->dev, c->host, n);
	switch (m) {
	case TO_MAP:
		return gdr_copy_to_mapping(c->b->mh, c->dev, c->host, n);
	case FROM_MAP:
		return gdr_copy_from_mapping(c->b->mh, c->host, c->dev, n);
	case HTOD:
		return c->s->cu->MemcpyHtoD(c->dptr, c->host, n);
	case DTOH:
		return c->s->cu->MemcpyDtoH(c->host, c->dptr, n);
	case HTOD_ASYNC:
	case DTOH_ASYNC:
		return async_copy(c, m == HTOD_ASYNC, n);
	default:
		return -1;
	}
}

static size_t samples_for(const struct opts *o, enum method m, size_t n)
{
	bool write = methods[m].write;
	size_t want = (size_t)(write ? o->w_iters : o->r_iters);
	size_t cap = (write ? WRITE_BYTES_CAP : READ_BYTES_CAP) / n;

	if (cap < MIN_SAMPLES)
		cap = MIN_SAMPLES;
	return want < cap ? want : cap;
}

/* 0, PATH_NA or -1 (a call failed). */
static int measure(struct ctx *c, enum method m, size_t n, double *v,
		   struct stats *st)
{
	const struct opts *o = c->s->o;
	size_t k = samples_for(o, m, n), i;
	double t0;
	int e;

	/* gdrmap_copy_* first decides which path serves this size; the
	 * copies that decide are not what a caller sees from then on.
	 * Even with --cold: the choice is not a cache effect. */
	if (methods[m].path == GDRMAP_COPY_PATH_AUTO &&
	    path_settle(c->b->mh, methods[m].write, c->dev, c->host, n))
		return -1;
	for (i = 0; i < 2 && !o->cold; i++) {
		e = one_copy(c, m, n);
		if (e)
			return e == PATH_NA ? PATH_NA : -1;
	}
	for (i = 0; i < k; i++) {
		if (o->cold)
			flush_range(c->host, n);
		t0 = now_ns();
		e = one_copy(c, m, n);
		if (e)
			return e == PATH_NA ? PATH_NA : -1;
		v[i] = now_ns() - t0;
	}
	stats_compute(st, v, k);
	return 0;
}

/* Method m's path cannot serve size n: mark it, and keep the library's
 * reason the first time. */
static void mark_na(struct ctx *c, struct row *w, int m)
{
	struct na_note *note = &c->na[m];

	w->na |= 1u << m;
	if (note->why[0])
		return;
	note->size = w->size;
	snprintf(note->why, sizeof(note->why), "%s",
		 gdrmap_last_error && *gdrmap_last_error() ?
		 gdrmap_last_error() : "EOPNOTSUPP");
}

/*
 * Check gdrmap_copy_* both ways, and with --paths each forced path (one
 * that cannot serve is marked n/a, not timed): 0, EXIT_WRONG with why
 * filled in, or EXIT_CANNOT.
 */
static int verify_paths(struct ctx *c, struct row *w, bool forced)
{
	int m, e;

	for (m = TO_AUTO; m < (forced ? HTOD_ASYNC : TO_VIA_MAP); m++) {
		e = path_verify(c->s, c->b, c->s->o->offset, w->size,
				methods[m].write, methods[m].path, c->vhost,
				w->why, sizeof(w->why));
		if (e == PATH_NA)
			mark_na(c, w, m);
		else if (e)
			return e;
	}
	return 0;
}

/*
 * With --paths, a direction's gdr_copy_*, gdrmap_copy_*, forced paths,
 * cuMemcpy and cuMemcpy*Async are timed in turns, a block of calls of
 * each per round, so that a drift of the machine (another tenant, the
 * clock) shifts them all alike: their ratios are what the table is for.
 * 0, or -1 when a call failed (*bad set to the method).
 */
static int measure_turns(struct ctx *c, struct row *w, int d, double *v,
			 int *bad)
{
	const struct opts *o = c->s->o;
	int ms[TURNS], nm = 0, m, i, j, e, path;
	uint64_t rng = 0x9e3779b97f4a7c15ULL ^ w->size;
	size_t k, r, b, rounds, per;

	ms[nm++] = M_GDR(d);
	ms[nm++] = M_AUTO(d);
	for (path = GDRMAP_COPY_PATH_MAPPING; path <= GDRMAP_COPY_PATH_STAGED;
	     path++)
		ms[nm++] = M_VIA(d, path);
	ms[nm++] = M_CUDA(d);
	if (c->stream)
		ms[nm++] = M_ASYNC(d);
	if (path_settle(c->b->mh, d == 0, c->dev, c->host, w->size)) {
		*bad = M_AUTO(d);
		return -1;
	}
	k = samples_for(o, (enum method)M_GDR(d), w->size);
	for (i = 0; i < nm; i++) {
		m = ms[i];
		if (w->na & (1u << m))
			continue;
		for (r = 0; r < 2 && !o->cold; r++) {
			e = one_copy(c, (enum method)m, w->size);
			if (e == PATH_NA) {
				mark_na(c, w, m);
				break;
			}
			if (e) {
				*bad = m;
				return -1;
			}
		}
	}
	/*
	 * Rounds, each in a new order, of a block of calls per method; the
	 * first call of a block is not timed.  Every timed call thus follows
	 * a call of its own method, as in a run of it alone (what a call
	 * leaves behind, write-combining buffers draining or the host
	 * buffer dirty in the CPU's caches, changes the next call's cost),
	 * while the rounds spread each method over the whole measurement.
	 */
	rounds = k < ROUNDS ? k : ROUNDS;
	per = k / rounds;
	k = rounds * per;
	for (r = 0; r < rounds; r++) {
		int order[TURNS], n = 0;

		for (i = 0; i < nm; i++)
			if (!(w->na & (1u << ms[i])))
				order[n++] = i;
		for (j = n - 1; j > 0; j--) {
			int x, pick;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			pick = (int)(rng % (uint64_t)(j + 1));
			x = order[j];
			order[j] = order[pick];
			order[pick] = x;
		}
		for (j = 0; j < n; j++) {
			i = order[j];
			m = ms[i];
			for (b = 0; b <= per; b++) {
				double t0, t1;

				if (o->cold)
					flush_range(c->host, w->size);
				t0 = now_ns();
				e = one_copy(c, (enum method)m, w->size);
				if (e) {
					*bad = m;
					return -1;
				}
				t1 = now_ns();
				if (b)
					v[(size_t)i * k + r * per + b - 1] =
						t1 - t0;
				/* Each call alone: what the last one left in
				 * flight has landed. */
				while (now_ns() - t1 < QUIET_NS)
					;
			}
		}
	}
	for (i = 0; i < nm; i++) {
		m = ms[i];
		if (w->na & (1u << m))
			continue;
		stats_compute(&w->st[m], v + (size_t)i * k, k);
		w->measured |= 1u << m;
	}
	w->chosen[d] = path_settled(c->b->mh, d == 0, c->dev, c->host,
				    w->size);
	return 0;
}

static int call_failed(const struct opts *o, int m, size_t n)
{
	bool via = methods[m].path > GDRMAP_COPY_PATH_AUTO;

	return fail(o, EXIT_CANNOT, "%s%s%s%s of %zu bytes failed",
		    !via ? methods[m].key :
		    methods[m].write ? "gdrmap_copy_to_mapping_via" :
		    "gdrmap_copy_from_mapping_via",
		    !via ? "" : "(", !via ? "" : methods[m].key,
		    !via ? "" : ")", n);
}

/* Time every method of a verified row; 0 or EXIT_CANNOT.  v holds
 * NMETHODS samples per call. */
static int measure_row(struct ctx *c, struct row *w, int nmethods, double *v)
{
	const struct opts *o = c->s->o;
	int m, e, d, bad;

	if (nmethods == NMETHODS) {
		for (d = 0; d < 2; d++)
			if (measure_turns(c, w, d, v, &bad))
				return call_failed(o, bad, w->size);
		goto check;
	}
	for (m = 0; m < nmethods; m++) {
		if (w->na & (1u << m))
			continue;
		e = measure(c, (enum method)m, w->size, v, &w->st[m]);
		if (e == PATH_NA) {
			mark_na(c, w, m);
			continue;
		}
		if (e)
			return call_failed(o, m, w->size);
		w->measured |= 1u << m;
		if (m == TO_AUTO || m == FROM_AUTO)
			w->chosen[m == FROM_AUTO] = path_settled(
				c->b->mh, methods[m].write, c->dev, c->host,
				w->size);
	}
check:
	/* What gdrmap_copy_* moves once its choice is made. */
	for (d = 0; d < 2 && nmethods > TO_AUTO; d++) {
		e = path_verify(c->s, c->b, o->offset, w->size, d == 0,
				GDRMAP_COPY_PATH_AUTO, c->vhost, w->why,
				sizeof(w->why));
		if (e == EXIT_WRONG)
			w->verified = false;
		else if (e)
			return fail(o, EXIT_CANNOT, "%s", w->why);
	}
	return 0;
}

int cmd_copylat(int argc, char **argv)
{
	struct row rows[MAX_SIZES];
	struct na_note na[NMETHODS];
	struct copylat_run run;
	struct session s;
	struct gpubuf b = { 0 };
	struct opts o;
	struct ctx c = { 0 };
	size_t n, maxk;
	bool all_ok = true;
	double *v = NULL;
	char *host = NULL;
	enum host_kind kind;
	int ret, nrows = 0, nmethods;

	ret = opts_parse(CMD_COPYLAT, argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (o.cold && !flush_supported())
		return fail(&o, EXIT_USAGE, "--cold is not supported on this CPU architecture");
	memset(rows, 0, sizeof(rows));
	memset(na, 0, sizeof(na));
	for (n = o.min_size; n <= o.size && nrows < MAX_SIZES - 1; n *= 2)
		rows[nrows++].size = n;
	if (rows[nrows - 1].size != o.size)
		rows[nrows++].size = o.size;
	nmethods = o.paths ? NMETHODS : paths_available() ? TO_VIA_MAP :
		   TO_AUTO;

	ret = session_open(&s, &o);
	if (ret)
		goto close;
	if (o.paths && !paths_available()) {
		ret = fail(&o, EXIT_CANNOT, "--paths: this libgdrapi.so.2 has no gdrmap_copy_*_via (not gdrmap's?)");
		goto close;
	}
	ret = gpubuf_open(&s, &b, o.offset + o.size, o.offset);
	if (ret)
		goto close;
	if (nmethods > TO_AUTO)
		paths_start_helpers(&s, &b, o.offset, o.size);
	kind = o.host;
	host = host_alloc_kind(&s, o.offset + o.size, &kind);
	if (!host) {
		ret = EXIT_CANNOT;
		goto close;
	}
	c.vhost = host_alloc_kind(&s, PATH_VERIFY_HOST(o.size), &kind);
	if (!c.vhost) {
		ret = EXIT_CANNOT;
		goto free_host;
	}
	maxk = (size_t)(o.w_iters > o.r_iters ? o.w_iters : o.r_iters);
	v = malloc(maxk * TURNS * sizeof(*v));
	if (!v) {
		ret = fail(&o, EXIT_CANNOT, "out of memory");
		goto free_host;
	}
	c.s = &s;
	c.b = &b;
	c.na = na;
	c.host = host + o.offset;
	c.dev = b.cpu + o.offset;
	c.dptr = b.base + o.offset;
	/* cuMemcpy*Async where this CUDA has it: not timed otherwise. */
	if (o.paths && s.cu->StreamCreate && s.cu->StreamDestroy &&
	    s.cu->StreamSynchronize && s.cu->MemcpyHtoDAsync &&
	    s.cu->MemcpyDtoHAsync &&
	    s.cu->StreamCreate(&c.stream, CU_STREAM_NON_BLOCKING))
		c.stream = NULL;
	if (!o.json) {
		session_print_header(&s, &b);
		printf("host memory %s (%s)\n", host_kind_names[kind],
		       host_kind_what[kind]);
	}

	for (int r = 0; r < nrows; r++) {
		struct row *w = &rows[r];

		w->chosen[0] = w->chosen[1] = PATH_UNKNOWN;
		ret = verify_both_ways(&s, &b, o.offset, w->size, w->why,
				       sizeof(w->why));
		if (!ret && nmethods > TO_AUTO)
			ret = verify_paths(&c, w, o.paths);
		w->verified = ret == 0;
		if (ret == EXIT_CANNOT) {
			ret = fail(&o, EXIT_CANNOT, "%s", w->why);
			goto free_host;
		}
		if (w->verified) {
			ret = measure_row(&c, w, nmethods, v);
			if (ret)
				goto free_host;
		}
		if (!w->verified) {
			all_ok = false;
			fprintf(stderr, "gdrmap copylat: %s\n", w->why);
		}
	}
	run.rows = rows;
	run.nrows = nrows;
	run.calls = nmethods > TO_AUTO;
	run.paths = o.paths;
	run.na = na;
	if (o.json) {
		struct json j;

		session_json_begin(&j, &s, &b, "ns");
		json_int(&j, "offset", (long long)o.offset);
		json_bool(&j, "cold_cache", o.cold);
		json_str(&j, "host_memory", host_kind_names[kind]);
		copylat_json(&j, &run);
		json_bool(&j, "verified", all_ok);
		json_finish(&j);
	} else {
		copylat_text(stdout, &run);
	}
	ret = all_ok ? EXIT_OK : EXIT_WRONG;
free_host:
	free(v);
	if (c.stream)
		s.cu->StreamDestroy(c.stream);
	host_free_kind(&s, c.vhost, kind);
	host_free_kind(&s, host, kind);
close:
	session_close(&s, &b);
	return ret;
}
