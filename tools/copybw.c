// SPDX-License-Identifier: MIT
/*
 * gdrmap copybw: bandwidth of one copy size through the mapping, both
 * directions, optionally split over N threads (reads through a BAR gain
 * from several in flight; writes stop gaining at two), with cuMemcpy's and
 * gdrmap_copy_*'s (the fastest path for the size, its own threads
 * included) in the same run.  The data the timed copies moved is checked
 * afterwards against cuMemcpy.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "paths.h"
#include "session.h"
#include "stats.h"

enum dir { WRITE, READ };

struct shared {
	struct session *s;
	struct gpubuf *b;
	char *host;		/* at the offset */
	char *dev;		/* mapping at the offset */
	size_t n;		/* whole copy */
	int threads;
	long iters;
	enum dir dir;
	pthread_barrier_t start, done;
};

struct worker {
	struct shared *sh;
	pthread_t tid;
	int index;
	int cpu;
	int err;
};

/* Thread i's part: 64-byte multiples, the last takes the rest. */
static void part(const struct shared *sh, int i, size_t *off, size_t *len)
{
	size_t each = sh->n / (size_t)sh->threads & ~(size_t)63;

	*off = each * (size_t)i;
	*len = i == sh->threads - 1 ? sh->n - *off : each;
}

static int copy_part(struct worker *w)
{
	struct shared *sh = w->sh;
	size_t off, len;

	part(sh, w->index, &off, &len);
	if (!len)
		return 0;
	if (sh->dir == WRITE)
		return gdr_copy_to_mapping(sh->b->mh, sh->dev + off,
					   sh->host + off, len);
	return gdr_copy_from_mapping(sh->b->mh, sh->host + off, sh->dev + off,
				     len);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	long it;

	pin_thread(w->cpu);
	for (it = 0; it < w->sh->iters; it++) {
		pthread_barrier_wait(&w->sh->start);
		if (!w->err)
			w->err = copy_part(w);
		pthread_barrier_wait(&w->sh->done);
	}
	return NULL;
}

/* Timed iterations of one direction over all threads, into v (ns). */
static int run_gdr(struct shared *sh, struct worker *w, double *v)
{
	double t0;
	long it;
	int i, err = 0;

	pthread_barrier_init(&sh->start, NULL, (unsigned)sh->threads);
	pthread_barrier_init(&sh->done, NULL, (unsigned)sh->threads);
	for (i = 0; i < sh->threads; i++) {
		w[i].sh = sh;
		w[i].index = i;
		w[i].err = 0;
		w[i].cpu = sh->s->cpus.n ?
			   sh->s->cpus.cpu[i % sh->s->cpus.n] : -1;
	}
	for (i = 1; i < sh->threads; i++)
		if (pthread_create(&w[i].tid, NULL, worker_main, &w[i]))
			abort();	/* the barrier would wait forever */
	for (it = 0; it < sh->iters; it++) {
		t0 = now_ns();
		pthread_barrier_wait(&sh->start);
		if (!w[0].err)
			w[0].err = copy_part(&w[0]);
		pthread_barrier_wait(&sh->done);
		v[it] = now_ns() - t0;
	}
	for (i = 1; i < sh->threads; i++)
		pthread_join(w[i].tid, NULL);
	for (i = 0; i < sh->threads; i++)
		err = err ? err : w[i].err;
	pthread_barrier_destroy(&sh->start);
	pthread_barrier_destroy(&sh->done);
	return err;
}

static int run_cuda(struct shared *sh, double *v)
{
	const struct tcu *cu = sh->s->cu;
	CUdeviceptr d = sh->b->base + sh->s->o->offset;
	double t0;
	long it;

	for (it = 0; it < sh->iters; it++) {
		CUresult res;

		t0 = now_ns();
		res = sh->dir == WRITE ? cu->MemcpyHtoD(d, sh->host, sh->n) :
					 cu->MemcpyDtoH(sh->host, d, sh->n);
		v[it] = now_ns() - t0;
		if (res != CUDA_SUCCESS)
			return -1;
	}
	return 0;
}

/*
 * gdrmap_copy_* of the whole copy from this thread, as cuMemcpy's: the
 * library picks the path (and any threads) for the size; its choice is
 * made before the timing.  The destination is poisoned first (the
 * complement of what the copy brings), and checked after: 0, -1 if a call
 * failed, 1 if the data is wrong.
 */
static int run_auto(struct shared *sh, double *v, char *check)
{
	const struct tcu *cu = sh->s->cu;
	CUdeviceptr d = sh->b->base + sh->s->o->offset;
	bool write = sh->dir == WRITE;
	double t0;
	size_t i;
	long it;

	/* GPU and host hold the same bytes here (cuMemcpy's run). */
	for (i = 0; i < sh->n; i++)
		check[i] = (char)~sh->host[i];
	if (!write)
		memcpy(sh->host, check, sh->n);
	else if (cu->MemcpyHtoD(d, check, sh->n) != CUDA_SUCCESS ||
		 cu->CtxSynchronize() != CUDA_SUCCESS)
		return -1;	/* pageable: synchronized to have landed */
	if (path_settle(sh->b->mh, write, sh->dev, sh->host, sh->n))
		return -1;
	for (it = 0; it < sh->iters; it++) {
		t0 = now_ns();
		if (path_copy(sh->b->mh, write, GDRMAP_COPY_PATH_AUTO, sh->dev,
			      sh->host, sh->n))
			return -1;
		v[it] = now_ns() - t0;
	}
	if (cu->MemcpyDtoH(check, d, sh->n) != CUDA_SUCCESS)
		return -1;
	return memcmp(check, sh->host, sh->n) ? 1 : 0;
}

struct result {
	struct stats st;
	double gbps;		/* from the median time */
	double gbps_best;	/* from the fastest */
};

static void finish(struct result *r, double *v, long k, size_t n)
{
	stats_compute(&r->st, v, (size_t)k);
	r->gbps = (double)n / r->st.p50;
	r->gbps_best = (double)n / r->st.p0;
}

static void result_json(struct json *j, const char *key,
			const struct result *r)
{
	json_obj_begin(j, key);
	json_num(j, "gbps", r->gbps);
	json_num(j, "gbps_best", r->gbps_best);
	stats_json(j, "ns", &r->st);
	json_obj_end(j);
}

static void fill(char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)(rand_r(&seed) >> 5);
}

/* What a run measured, per direction: [dir][0 gdr, 1 cuda, 2 gdrmap]. */
struct bw_run {
	struct result res[2][3];
	bool ok[2];
	bool calls;		/* gdrmap_copy_* timed */
	int chosen[2];		/* the path it took */
};

static const char *const gdr_keys[2] = { "gdr_copy_to_mapping",
					 "gdr_copy_from_mapping" };
static const char *const cuda_keys[2] = { "cuMemcpyHtoD", "cuMemcpyDtoH" };
static const char *const gdrmap_keys[2] = { "gdrmap_copy_to_mapping",
					    "gdrmap_copy_from_mapping" };

static void report_json(const struct session *s, const struct gpubuf *b,
			const struct bw_run *r)
{
	const struct opts *o = s->o;
	struct json j;
	int d;

	session_json_begin(&j, s, b, "GB/s");
	json_int(&j, "size", (long long)o->size);
	json_int(&j, "copy_size", (long long)o->copy_size);
	json_int(&j, "offset", (long long)o->offset);
	json_int(&j, "threads", o->threads);
	json_bool(&j, "gdrmap_copy", r->calls);
	for (d = WRITE; d <= READ; d++) {
		json_obj_begin(&j, d == WRITE ? "write" : "read");
		json_int(&j, "iters", d == WRITE ? o->w_iters : o->r_iters);
		json_bool(&j, "verified", r->ok[d]);
		result_json(&j, gdr_keys[d], &r->res[d][0]);
		result_json(&j, cuda_keys[d], &r->res[d][1]);
		if (r->calls) {
			result_json(&j, gdrmap_keys[d], &r->res[d][2]);
			json_str(&j, "path", path_chosen_name(r->chosen[d]));
		} else {
			json_null(&j, gdrmap_keys[d]);
			json_null(&j, "path");
		}
		json_obj_end(&j);
	}
	json_bool(&j, "verified", r->ok[WRITE] && r->ok[READ]);
	json_finish(&j);
}

static void report_text(const struct opts *o, const struct bw_run *r)
{
	char c[3][40];
	int d, m;

	printf("\n%zu bytes at offset %zu, %d thread%s; GB/s from the median (best)\n",
	       o->copy_size, o->offset, o->threads, o->threads > 1 ? "s" : "");
	printf("         %-17s  %-26s  %-17s  data\n", "mapping",
	       "gdrmap_copy (path)", "cuMemcpy");
	for (d = WRITE; d <= READ; d++) {
		for (m = 0; m < 3; m++)
			snprintf(c[m], sizeof(c[m]), "%7.2f (%.2f)",
				 r->res[d][m].gbps, r->res[d][m].gbps_best);
		if (r->calls)
			snprintf(c[2] + strlen(c[2]), sizeof(c[2]) - strlen(c[2]),
				 " %s", path_chosen_name(r->chosen[d]));
		else
			snprintf(c[2], sizeof(c[2]), "      -");
		printf("  %-5s  %-17s  %-26s  %-17s  %s\n",
		       d == WRITE ? "write" : "read", c[0], c[2], c[1],
		       r->ok[d] ? "verified" : "WRONG");
	}
	if (r->calls)
		printf("gdrmap_copy: one call per copy, as cuMemcpy, on the path it took for the size\n");
}

/* One direction, every method: 0, or an exit code after fail(). */
static int run_dir(struct shared *sh, struct worker *w, double *v,
		   char *check, struct bw_run *r)
{
	const struct opts *o = sh->s->o;
	int d = sh->dir, e;

	if (run_gdr(sh, w, v))
		return fail(o, EXIT_CANNOT, "%s failed", gdr_keys[d]);
	finish(&r->res[d][0], v, sh->iters, sh->n);
	/* What the timed copies moved, as cuMemcpy sees it. */
	if (sh->s->cu->MemcpyDtoH(check, sh->b->base + o->offset, sh->n) !=
	    CUDA_SUCCESS)
		return fail(o, EXIT_CANNOT, "cuMemcpyDtoH failed");
	r->ok[d] = !memcmp(check, sh->host, sh->n);
	if (run_cuda(sh, v))
		return fail(o, EXIT_CANNOT, "cuMemcpy failed");
	finish(&r->res[d][1], v, sh->iters, sh->n);
	if (!r->calls)
		return 0;
	e = run_auto(sh, v, check);
	if (e < 0)
		return fail(o, EXIT_CANNOT, "%s failed", gdrmap_keys[d]);
	if (e)
		r->ok[d] = false;
	finish(&r->res[d][2], v, sh->iters, sh->n);
	r->chosen[d] = path_settled(sh->b->mh, d == WRITE, sh->dev, sh->host,
				    sh->n);
	return 0;
}

int cmd_copybw(int argc, char **argv)
{
	struct bw_run r;
	bool pinned = false;
	struct worker *w = NULL;
	struct shared sh;
	struct session s;
	struct gpubuf b = { 0 };
	struct opts o;
	char *host = NULL, *check = NULL;
	double *v = NULL;
	size_t i;
	long k;
	int ret, d;

	ret = opts_parse(CMD_COPYBW, argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (o.offset >= o.size)
		return fail(&o, EXIT_USAGE, "--offset %zu must be below --size %zu",
			    o.offset, o.size);
	if (!o.copy_size)
		o.copy_size = o.size - o.offset;
	if (o.copy_size > o.size - o.offset)
		return fail(&o, EXIT_USAGE, "--offset %zu + --copy-size %zu exceed --size %zu: copy at most %zu bytes there",
			    o.offset, o.copy_size, o.size, o.size - o.offset);

	ret = session_open(&s, &o);
	if (ret)
		goto close;
	ret = gpubuf_open(&s, &b, o.size, o.offset);
	if (ret)
		goto close;
	k = o.w_iters > o.r_iters ? o.w_iters : o.r_iters;
	host = host_alloc(&s, o.offset + o.copy_size, &pinned);
	check = malloc(o.copy_size);
	v = malloc((size_t)k * sizeof(*v));
	w = calloc((size_t)o.threads, sizeof(*w));
	if (!host || !check || !v || !w) {
		ret = fail(&o, EXIT_CANNOT, "out of memory");
		goto free_all;
	}
	memset(&sh, 0, sizeof(sh));
	sh.s = &s;
	sh.b = &b;
	sh.host = host + o.offset;
	sh.dev = b.cpu + o.offset;
	sh.n = o.copy_size;
	sh.threads = o.threads;
	memset(&r, 0, sizeof(r));
	r.calls = paths_available();
	if (r.calls)
		paths_start_helpers(&s, &b, o.offset, o.copy_size);
	if (!o.json)
		session_print_header(&s, &b);

	for (d = WRITE; d <= READ; d++) {
		sh.dir = (enum dir)d;
		sh.iters = d == WRITE ? o.w_iters : o.r_iters;
		/* Reads: the GPU holds what the writes left, the host its
		 * complement, so a byte not read shows. */
		if (d == WRITE)
			fill(sh.host, sh.n, 1);
		else
			for (i = 0; i < sh.n; i++)
				sh.host[i] = (char)~sh.host[i];
		ret = run_dir(&sh, w, v, check, &r);
		if (ret)
			goto free_all;
	}

	if (o.json)
		report_json(&s, &b, &r);
	else
		report_text(&o, &r);
	if (!r.ok[WRITE] || !r.ok[READ])
		fprintf(stderr, "gdrmap copybw: the data moved through the mapping differs from what cuMemcpy sees\n");
	ret = r.ok[WRITE] && r.ok[READ] ? EXIT_OK : EXIT_WRONG;
free_all:
	free(w);
	free(v);
	free(check);
	if (host)
		host_free(&s, host, pinned);
close:
	session_close(&s, &b);
	return ret;
}
