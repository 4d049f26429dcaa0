// SPDX-License-Identifier: MIT
/*
 * gdrmap copybw: bandwidth of one copy size through the mapping, both
 * directions, optionally split over N threads (reads through a BAR gain
 * from several in flight; writes stop gaining at two), with cuMemcpy's in
 * the same run.  The data the timed copies moved is checked afterwards
 * against cuMemcpy.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
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

int cmd_copybw(int argc, char **argv)
{
	struct result res[2][2];	/* [dir][0 gdr, 1 cuda] */
	bool ok[2] = { false, false }, pinned = false;
	struct worker *w = NULL;
	struct shared sh;
	struct session s;
	struct gpubuf b;
	struct opts o;
	char *host = NULL, *check = NULL;
	double *v = NULL;
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
		goto close_buf;
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
	if (!o.json)
		session_print_header(&s, &b);

	for (d = WRITE; d <= READ; d++) {
		sh.dir = (enum dir)d;
		sh.iters = d == WRITE ? o.w_iters : o.r_iters;
		if (d == WRITE)
			fill(sh.host, sh.n, 1);
		else
			memset(sh.host, 0, sh.n);
		if (run_gdr(&sh, w, v)) {
			ret = fail(&o, EXIT_CANNOT, "%s failed",
				   d == WRITE ? "gdr_copy_to_mapping" :
						"gdr_copy_from_mapping");
			goto free_all;
		}
		finish(&res[d][0], v, sh.iters, sh.n);
		/* What the timed copies moved, as cuMemcpy sees it. */
		if (s.cu->MemcpyDtoH(check, b.base + o.offset, sh.n) !=
		    CUDA_SUCCESS) {
			ret = fail(&o, EXIT_CANNOT, "cuMemcpyDtoH failed");
			goto free_all;
		}
		ok[d] = !memcmp(check, sh.host, sh.n);
		if (run_cuda(&sh, v)) {
			ret = fail(&o, EXIT_CANNOT, "cuMemcpy failed");
			goto free_all;
		}
		finish(&res[d][1], v, sh.iters, sh.n);
	}

	if (o.json) {
		struct json j;

		json_init(&j, stdout);
		json_obj_begin(&j, NULL);
		session_json_header(&j, &s, &b);
		json_str(&j, "unit", "GB/s");
		json_int(&j, "size", (long long)o.size);
		json_int(&j, "copy_size", (long long)o.copy_size);
		json_int(&j, "offset", (long long)o.offset);
		json_int(&j, "threads", o.threads);
		json_obj_begin(&j, "write");
		json_int(&j, "iters", o.w_iters);
		json_bool(&j, "verified", ok[WRITE]);
		result_json(&j, "gdr_copy_to_mapping", &res[WRITE][0]);
		result_json(&j, "cuMemcpyHtoD", &res[WRITE][1]);
		json_obj_end(&j);
		json_obj_begin(&j, "read");
		json_int(&j, "iters", o.r_iters);
		json_bool(&j, "verified", ok[READ]);
		result_json(&j, "gdr_copy_from_mapping", &res[READ][0]);
		result_json(&j, "cuMemcpyDtoH", &res[READ][1]);
		json_obj_end(&j);
		json_bool(&j, "verified", ok[WRITE] && ok[READ]);
		json_finish(&j);
	} else {
		printf("\n%zu bytes at offset %zu, %d thread%s; GB/s from the median (best)\n",
		       o.copy_size, o.offset, o.threads, o.threads > 1 ? "s" : "");
		printf("  write: mapping %7.2f (%.2f)  cuMemcpyHtoD %7.2f (%.2f)  data %s\n",
		       res[WRITE][0].gbps, res[WRITE][0].gbps_best,
		       res[WRITE][1].gbps, res[WRITE][1].gbps_best,
		       ok[WRITE] ? "verified" : "WRONG");
		printf("  read:  mapping %7.2f (%.2f)  cuMemcpyDtoH %7.2f (%.2f)  data %s\n",
		       res[READ][0].gbps, res[READ][0].gbps_best,
		       res[READ][1].gbps, res[READ][1].gbps_best,
		       ok[READ] ? "verified" : "WRONG");
	}
	if (!ok[WRITE] || !ok[READ])
		fprintf(stderr, "gdrmap copybw: the data moved through the mapping differs from what cuMemcpy sees\n");
	ret = ok[WRITE] && ok[READ] ? EXIT_OK : EXIT_WRONG;
free_all:
	free(w);
	free(v);
	free(check);
	if (host)
		host_free(&s, host, pinned);
close_buf:
	gpubuf_close(&s, &b);
close:
	session_close(&s);
	return ret;
}
