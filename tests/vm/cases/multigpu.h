/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the VM cases about several simulated GPUs (multi_*.c): every
 * context a thread can have, memory of each kind on each GPU, and one
 * pin-map-copy round trip through libgdrapi from a thread whose current
 * context is a given one.  Written for any number of GPUs; the VM has two.
 */
#ifndef GDRMAP_MULTIGPU_H
#define GDRMAP_MULTIGPU_H

#include <pthread.h>
#include <stdbool.h>

#include "gdrapi.h"
#include "vmtest.h"

#define MAX_GPUS 8

/*
 * CUDA up, device 0's primary context current: how many GPUs to use (at
 * most MAX_GPUS).  With fewer than need, the case is skipped.
 */
static inline int multi_init(int need)
{
	int n;

	vm_cuda_init();
	n = gpu_count();
	if (n < need) {
		SKIP("%d simulated GPU(s), the case needs %d", n, need);
		exit(test_done());
	}
	printf("%d simulated GPUs\n", n);
	return n < MAX_GPUS ? n : MAX_GPUS;
}

/* A current context a thread may have: none, a primary one, its own. */
struct vm_ctx {
	char name[24];
	CUcontext ctx;		/* NULL: no current context */
	int dev;		/* -1 with none */
};

/*
 * Every such context: none, then each GPU's primary context and a context
 * created on it (not current anywhere).  Returns how many.
 */
static inline int vm_contexts(struct vm_ctx *out, int ngpus)
{
	CUcontext saved = current_ctx(), c;
	int n = 0, d;

	out[n++] = (struct vm_ctx){ "no context", NULL, -1 };
	for (d = 0; d < ngpus; d++) {
		out[n] = (struct vm_ctx){ "", gpu_primary(d), d };
		snprintf(out[n++].name, sizeof(out->name), "primary@%d", d);
		CU_OK(cuCtxCreate(&c, 0, d));	/* pushed: current now */
		CU_OK(cuCtxPopCurrent(NULL));
		out[n] = (struct vm_ctx){ "", c, d };
		snprintf(out[n++].name, sizeof(out->name), "created@%d", d);
	}
	CU_OK(cuCtxSetCurrent(saved));
	return n;
}

/* GPU memory to pin: cuMemAlloc (in the GPU's primary context) or VMM. */
struct vm_mem {
	char name[24];
	int dev;
	bool vmm;
	CUdeviceptr base;
	size_t size;
};

#define VM_MEM_SIZE (2 * MiB)	/* the VMM granularity */

static inline void vm_mem_alloc(struct vm_mem *m, int dev, bool vmm)
{
	CUcontext saved = current_ctx();
	int ord = -1;

	m->dev = dev;
	m->vmm = vmm;
	m->size = VM_MEM_SIZE;
	snprintf(m->name, sizeof(m->name), "%s@%d", vmm ? "vmm" : "legacy",
		 dev);
	if (vmm) {
		m->base = vmm_alloc(dev, m->size);
	} else {
		/* Retained for the case's life: its memory lives as long. */
		CU_OK(cuCtxSetCurrent(gpu_primary(dev)));
		CU_OK(cuMemAlloc(&m->base, m->size));
		CU_OK(cuCtxSetCurrent(saved));
	}
	CU_OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				    m->base));
	REQUIRE(ord == dev, "%s is on GPU %d", m->name, ord);
}

static inline void vm_mem_free(struct vm_mem *m)
{
	if (m->vmm)
		vmm_free(m->base, m->size);
	else
		CU_OK(cuMemFree(m->base));
}

/*
 * One round trip, run by a thread whose current context is job->c: pin
 * [base + off, + len) of job->m, map it, read it into a poisoned buffer
 * (every byte must be the GPU's pattern seed, and nothing around it
 * written), write pattern seed + 1 through the mapping, unmap, unpin.
 * The thread's current context must be job->c after every call.
 */
struct pin_job {
	gdr_t g;
	const struct vm_mem *m;
	const struct vm_ctx *c;
	size_t off, len;
	unsigned int seed;
	bool wrote;		/* out: the write was made */
};

#define POISON_PAD 64

/* A byte that is never the pattern's at i: unwritten bytes show. */
static inline uint8_t poison_byte(size_t i, unsigned int seed)
{
	return pattern_byte(i, seed) ^ 0xff;
}

static inline void job_check_ctx(const struct pin_job *j,
				 const char *after)
{
	CUcontext now = current_ctx();

	CHECK(now == j->c->ctx, "%s from %s: %s changed the current context",
	      j->m->name, j->c->name, after);
}

static inline void *pin_job_run(void *arg)
{
	struct pin_job *j = arg;
	uint64_t addr = j->m->base + j->off;
	uint8_t *buf = malloc(j->len + 2 * POISON_PAD);
	gdr_info_t info;
	gdr_mh_t mh;
	void *map;
	char *p;
	size_t i;
	int rc;

	REQUIRE(buf, "malloc");
	CU_OK(cuCtxSetCurrent(j->c->ctx));
	rc = gdr_pin_buffer(j->g, addr, j->len, 0, 0, &mh);
	CHECK(rc == 0, "pin of %s from %s: %d (%s)", j->m->name, j->c->name,
	      rc, gdrmap_last_error());
	job_check_ctx(j, "gdr_pin_buffer");
	if (rc)
		goto out;
	CHECK_RET(gdr_get_info(j->g, mh, &info), 0);
	rc = gdr_map(j->g, mh, &map, j->len);
	CHECK(rc == 0, "map of %s from %s: %d (%s)", j->m->name, j->c->name,
	      rc, gdrmap_last_error());
	job_check_ctx(j, "gdr_map");
	if (rc)
		goto unpin;
	p = (char *)map + (addr - info.va);

	for (i = 0; i < j->len + 2 * POISON_PAD; i++)
		buf[i] = poison_byte(i, j->seed);
	CHECK_RET(gdr_copy_from_mapping(mh, buf + POISON_PAD, p, j->len), 0);
	for (i = 0; i < j->len; i++)
		if (buf[POISON_PAD + i] != pattern_byte(j->off + i, j->seed))
			break;
	CHECK(i == j->len, "%s from %s: read differs at +%#zx", j->m->name,
	      j->c->name, i);
	for (i = 0; i < POISON_PAD; i++)
		if (buf[i] != poison_byte(i, j->seed) ||
		    buf[POISON_PAD + j->len + i] !=
		    poison_byte(POISON_PAD + j->len + i, j->seed))
			break;
	CHECK(i == POISON_PAD, "%s from %s: the read wrote around its buffer",
	      j->m->name, j->c->name);

	for (i = 0; i < j->len; i++)
		buf[i] = pattern_byte(j->off + i, j->seed + 1);
	rc = gdr_copy_to_mapping(mh, p, buf, j->len);
	CHECK(rc == 0, "%s from %s: gdr_copy_to_mapping %d", j->m->name,
	      j->c->name, rc);
	j->wrote = !rc;
	job_check_ctx(j, "the copies");
	CHECK_RET(gdr_unmap(j->g, mh, map, j->len), 0);
unpin:
	CHECK_RET(gdr_unpin_buffer(j->g, mh), 0);
	job_check_ctx(j, "gdr_unmap/gdr_unpin_buffer");
out:
	free(buf);
	return NULL;
}

/*
 * Run fn(arg) in a new thread, and wait for it.  No check may run here
 * meanwhile: the counters of check.h are the thread's while it runs (and
 * REQUIRE would take its failures for its own).
 */
static inline void run_in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, fn, arg);

	if (err)
		REQUIRE(0, "pthread_create: %s", strerror(err));
	pthread_join(t, NULL);
}

/*
 * Fill m with pattern seed, run the round trip in a new thread with
 * context c, then check through CUDA that exactly [off, + len) holds
 * pattern seed + 1 (seed where the round trip failed before writing) and
 * the rest still seed.  The calling thread needs a context (copies).
 */
static inline void pin_from_context(gdr_t g, const struct vm_mem *m,
				    const struct vm_ctx *c, size_t off,
				    size_t len, unsigned int seed)
{
	struct pin_job job = { g, m, c, off, len, seed, false };
	uint8_t *all = malloc(m->size);
	size_t i;

	REQUIRE(all, "malloc");
	gpu_fill(m->base, m->size, seed);
	run_in_thread(pin_job_run, &job);
	memset(all, 0, m->size);
	CU_OK(cuMemcpyDtoH(all, m->base, m->size));
	for (i = 0; i < m->size; i++) {
		bool in = job.wrote && i >= off && i - off < len;

		if (all[i] != pattern_byte(i, in ? seed + 1 : seed))
			break;
	}
	CHECK(i == m->size, "%s from %s: GPU memory wrong at +%#zx (%s)",
	      m->name, c->name, i, i >= off && i - off < len ?
	      "the write did not arrive" : "written outside the range");
	free(all);
}

#endif /* GDRMAP_MULTIGPU_H */
