// SPDX-License-Identifier: MIT
/*
 * gdrmap pplat: GPU<->CPU ping-pong.  A GPU kernel polls a flag and,
 * each time it changes to the next sequence number, answers with that
 * number in pinned host memory; the CPU times signal-to-answer round
 * trips.  The CPU signals in three ways, each its own run:
 *   mapping   a 4-byte store through the CPU mapping of the flag (gdrmap)
 *   htod      cuMemcpyHtoDAsync of the flag, on its own stream
 *   hostflag  a store to a flag in pinned host memory, polled by the GPU
 * On a simulated GPU, which runs no kernels, a CPU thread plays the GPU's
 * part (reading the flag in GPU memory with cuMemcpyDtoH); the figures
 * are then labelled as such, and only the protocol is being tested.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "pplat_ptx.h"
#include "session.h"
#include "stats.h"

#define RTT_TIMEOUT_NS	5e9		/* one round trip, CPU side */
#define GPU_TIMEOUT_NS	10000000000ULL	/* between signals, GPU side */
#define CU_STREAM_NON_BLOCKING 0x1

enum { M_MAPPING, M_HTOD, M_HOSTFLAG, NMODES };

static const char *const mode_names[NMODES] = { "mapping", "htod",
						"hostflag" };

struct pp {
	struct session *s;
	struct gpubuf *b;	/* the GPU flag at b->base */
	volatile uint32_t *answer;	/* pinned host */
	volatile uint32_t *hflag;	/* pinned host */
	uint32_t *src;			/* pinned host, cuMemcpyHtoDAsync's */
	bool gpu;			/* a kernel answers, not a thread */
	CUmodule mod;
	CUfunction fn;
	CUstream kstream, cstream;
	/* The CPU responder's state. */
	pthread_t tid;
	int mode;
	uint32_t total;
	volatile int resp_err;
};

static void *cpu_responder(void *arg)
{
	struct pp *p = arg;
	const struct tcu *cu = p->s->cu;
	uint32_t i, v = 0;
	double last;

	if (p->s->cpus.n > 1)
		pin_thread(p->s->cpus.cpu[1]);
	cu->CtxSetCurrent(p->s->ctx);
	for (i = 1; i <= p->total; i++) {
		last = now_ns();
		for (;;) {
			if (p->mode == M_HOSTFLAG)
				v = __atomic_load_n(p->hflag, __ATOMIC_ACQUIRE);
			else if (cu->MemcpyDtoH(&v, p->b->base, 4) !=
				 CUDA_SUCCESS)
				v = 0;
			if (v == i)
				break;
			if (now_ns() - last > RTT_TIMEOUT_NS) {
				p->resp_err = 1;
				return NULL;
			}
		}
		__atomic_store_n(p->answer, i, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Load the kernel and make its streams; false if this CUDA cannot. */
static bool gpu_setup(struct pp *p, char *why, size_t len)
{
	const struct tcu *cu = p->s->cu;
	char e[160];
	CUresult res;

	if (!cu->ModuleLoadData || !cu->ModuleGetFunction ||
	    !cu->LaunchKernel || !cu->StreamCreate || !cu->StreamSynchronize) {
		snprintf(why, len, "this libcuda.so.1 cannot launch kernels");
		return false;
	}
	res = cu->ModuleLoadData(&p->mod, pplat_ptx);
	if (res == CUDA_SUCCESS)
		res = cu->ModuleGetFunction(&p->fn, p->mod, "pingpong");
	if (res == CUDA_SUCCESS)
		res = cu->StreamCreate(&p->kstream, CU_STREAM_NON_BLOCKING);
	if (res == CUDA_SUCCESS)
		res = cu->StreamCreate(&p->cstream, CU_STREAM_NON_BLOCKING);
	if (res != CUDA_SUCCESS) {
		snprintf(why, len, "loading the PTX kernel: %s",
			 tcu_error(res, e, sizeof(e)));
		return false;
	}
	return true;
}

static void gpu_teardown(struct pp *p)
{
	const struct tcu *cu = p->s->cu;

	if (p->kstream && cu->StreamDestroy)
		cu->StreamDestroy(p->kstream);
	if (p->cstream && cu->StreamDestroy)
		cu->StreamDestroy(p->cstream);
	if (p->mod && cu->ModuleUnload)
		cu->ModuleUnload(p->mod);
}

static const char *signal_call(const struct pp *p, int mode)
{
	if (mode == M_MAPPING)
		return "gdr_copy_to_mapping";
	if (mode == M_HOSTFLAG)
		return "store to pinned host memory";
	return p->s->cu->MemcpyHtoDAsync && p->cstream ? "cuMemcpyHtoDAsync" :
							 "cuMemcpyHtoD";
}

static int signal_gpu(struct pp *p, int mode, uint32_t i)
{
	const struct tcu *cu = p->s->cu;

	switch (mode) {
	case M_MAPPING:
		return gdr_copy_to_mapping(p->b->mh, p->b->cpu, &i, 4);
	case M_HOSTFLAG:
		/* seq_cst: the store leaves the store buffer now. */
		__atomic_store_n(p->hflag, i, __ATOMIC_SEQ_CST);
		return 0;
	default:
		*p->src = i;
		if (cu->MemcpyHtoDAsync && p->cstream)
			return cu->MemcpyHtoDAsync(p->b->base, p->src, 4,
						   p->cstream);
		return cu->MemcpyHtoD(p->b->base, p->src, 4);
	}
}

/*
 * One run of a mode: warm-up round trips, then n timed ones into v.
 * 0, EXIT_WRONG (an answer out of sequence) or EXIT_CANNOT, err says why.
 */
static int run_mode(struct pp *p, int mode, uint32_t warm, uint32_t n,
		    double *v, char *err, size_t len)
{
	const struct tcu *cu = p->s->cu;
	uint64_t flag, answer, timeout = GPU_TIMEOUT_NS;
	void *params[4] = { &flag, &answer, &p->total, &timeout };
	uint32_t i, got;
	double t0, t;
	char e[160];
	CUresult res;
	int ret = 0;

	p->mode = mode;
	p->total = warm + n;
	p->resp_err = 0;
	*p->answer = 0;
	*p->hflag = 0;
	if (cu->MemsetD8(p->b->base, 0, 4) != CUDA_SUCCESS ||
	    cu->CtxSynchronize() != CUDA_SUCCESS) {
		snprintf(err, len, "cuMemsetD8 of the flag failed");
		return EXIT_CANNOT;
	}
	flag = mode == M_HOSTFLAG ? (uint64_t)(uintptr_t)p->hflag :
				    (uint64_t)p->b->base;
	answer = (uint64_t)(uintptr_t)p->answer;
	if (p->gpu) {
		res = cu->LaunchKernel(p->fn, 1, 1, 1, 1, 1, 1, 0, p->kstream,
				       params, NULL);
		if (res != CUDA_SUCCESS) {
			snprintf(err, len, "cuLaunchKernel: %s",
				 tcu_error(res, e, sizeof(e)));
			return EXIT_CANNOT;
		}
	} else if (pthread_create(&p->tid, NULL, cpu_responder, p)) {
		snprintf(err, len, "cannot start the responder thread");
		return EXIT_CANNOT;
	}
	for (i = 1; i <= p->total; i++) {
		t0 = now_ns();
		if (signal_gpu(p, mode, i)) {
			snprintf(err, len, "signal %u through %s failed", i,
				 signal_call(p, mode));
			ret = EXIT_CANNOT;
			break;
		}
		while ((got = __atomic_load_n(p->answer, __ATOMIC_ACQUIRE)) != i) {
			if (got > i || got + 1 < i) {
				snprintf(err, len, "answer %u to signal %u",
					 got, i);
				ret = EXIT_WRONG;
				break;
			}
			if (now_ns() - t0 > RTT_TIMEOUT_NS) {
				snprintf(err, len,
					 "no answer to signal %u within %.0f s (the %s did not see the flag change)",
					 i, RTT_TIMEOUT_NS / 1e9,
					 p->gpu ? "GPU kernel" : "responder thread");
				ret = EXIT_CANNOT;
				break;
			}
		}
		if (ret)
			break;
		t = now_ns() - t0;
		if (i > warm)
			v[i - warm - 1] = t;
	}
	if (p->gpu) {
		/* On failure the kernel stops by its own timeout. */
		res = cu->StreamSynchronize(p->kstream);
		if (!ret && res != CUDA_SUCCESS) {
			snprintf(err, len, "the kernel failed: %s",
				 tcu_error(res, e, sizeof(e)));
			ret = EXIT_CANNOT;
		}
	} else {
		if (ret)
			__atomic_store_n(p->hflag, UINT32_MAX, __ATOMIC_SEQ_CST);
		pthread_join(p->tid, NULL);
	}
	return ret;
}

int cmd_pplat(int argc, char **argv)
{
	struct stats st[NMODES];
	bool ran[NMODES] = { false }, wrong = false, pinned = false;
	char why[256], errs[NMODES][256], a[32], b2[32], c[32];
	struct session s;
	struct gpubuf b = { 0 };
	struct opts o;
	struct pp p;
	uint32_t warm;
	char *host = NULL;
	double *v = NULL;
	int ret, m;

	ret = opts_parse(CMD_PPLAT, argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	warm = o.iters / 10 < 100 ? (uint32_t)(o.iters / 10) : 100;

	memset(&p, 0, sizeof(p));
	ret = session_open(&s, &o);
	if (ret)
		goto close;
	ret = gpubuf_open(&s, &b, 65536, 0);
	if (ret)
		goto close;
	p.s = &s;
	p.b = &b;
	host = host_alloc(&s, 4096, &pinned);
	v = malloc((size_t)o.iters * sizeof(*v));
	if (!host || !v) {
		ret = fail(&o, EXIT_CANNOT, "out of memory");
		goto free_all;
	}
	p.answer = (volatile uint32_t *)host;
	p.hflag = (volatile uint32_t *)(host + 128);
	p.src = (uint32_t *)(host + 256);

	why[0] = 0;
	if (o.responder == RESP_CPU)
		snprintf(why, sizeof(why), "--responder cpu");
	else
		p.gpu = gpu_setup(&p, why, sizeof(why));
	if (!p.gpu && o.responder == RESP_GPU)
		ret = fail(&o, EXIT_CANNOT, "%s", why);
	else if (!p.gpu && o.responder == RESP_AUTO && !s.gpu.simulated)
		ret = fail(&o, EXIT_CANNOT, "%s (pplat needs a GPU that runs PTX kernels)",
			   why);
	else if (p.gpu && !pinned)
		ret = fail(&o, EXIT_CANNOT, "cuMemAllocHost failed: the GPU kernel needs pinned host memory");
	if (ret)
		goto free_all;
	if (!o.json) {
		session_print_header(&s, &b);
		if (!p.gpu)
			printf("*** the GPU's part is played by a CPU thread (%s): these are not GPU round trips ***\n",
			       why);
	}

	for (m = 0; m < NMODES; m++) {
		errs[m][0] = 0;
		if (!(o.modes & (1u << m)))
			continue;
		ret = run_mode(&p, m, warm, (uint32_t)o.iters, v, errs[m],
			       sizeof(errs[m]));
		if (ret == EXIT_CANNOT) {
			ret = fail(&o, EXIT_CANNOT, "%s: %s", mode_names[m],
				   errs[m]);
			goto free_all;
		}
		if (ret) {
			wrong = true;
			fprintf(stderr, "gdrmap pplat: %s: %s\n",
				mode_names[m], errs[m]);
			continue;
		}
		ran[m] = true;
		stats_compute(&st[m], v, (size_t)o.iters);
	}

	if (o.json) {
		struct json j;

		session_json_begin(&j, &s, &b, "ns");
		json_str(&j, "responder", p.gpu ? "gpu-kernel" : "cpu-thread");
		json_int(&j, "iters", o.iters);
		json_int(&j, "warmup", warm);
		json_obj_begin(&j, "modes");
		for (m = 0; m < NMODES; m++) {
			if (!(o.modes & (1u << m)))
				continue;
			json_obj_begin(&j, mode_names[m]);
			json_str(&j, "signal_call", signal_call(&p, m));
			json_bool(&j, "verified", ran[m]);
			if (ran[m])
				stats_json_fields(&j, &st[m]);
			else
				json_str(&j, "error", errs[m]);
			json_obj_end(&j);
		}
		json_obj_end(&j);
		json_bool(&j, "verified", !wrong);
		json_finish(&j);
	} else {
		printf("\nround trip, signal to answer, %ld each (after %u warm-up): p0 / p50 / p99\n",
		       o.iters, warm);
		for (m = 0; m < NMODES; m++) {
			if (!(o.modes & (1u << m)))
				continue;
			if (!ran[m]) {
				printf("  %-9s WRONG: %s\n", mode_names[m],
				       errs[m]);
				continue;
			}
			printf("  %-9s %-28s %s / %s / %s\n", mode_names[m],
			       signal_call(&p, m),
			       fmt_ns(st[m].p0, a, sizeof(a)),
			       fmt_ns(st[m].p50, b2, sizeof(b2)),
			       fmt_ns(st[m].p99, c, sizeof(c)));
		}
	}
	ret = wrong ? EXIT_WRONG : EXIT_OK;
free_all:
	gpu_teardown(&p);
	free(v);
	if (host)
		host_free(&s, host, pinned);
close:
	session_close(&s, &b);
	return ret;
}
