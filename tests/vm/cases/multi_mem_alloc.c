/* SPDX-License-Identifier: MIT */
/*
 * gdrmap_mem_alloc(k) and gdrmap_mem_free from a thread whose current
 * context is each possible one j (none, each GPU's primary, one created
 * on each): the memory is on GPU k, pins, maps and copies (from context j
 * too), is freed, and the thread's context is the same after each call.
 */
#include "multigpu.h"

struct alloc_job {
	const struct vm_ctx *c;
	struct vm_mem *m;	/* in: dev; out: base */
	bool do_free;
	int rc;
	char why[256];		/* the thread's gdrmap_last_error() */
};

static void *alloc_job_run(void *arg)
{
	struct alloc_job *j = arg;
	unsigned long p = 0;
	CUcontext now;

	CU_OK(cuCtxSetCurrent(j->c->ctx));
	if (j->do_free) {
		j->rc = gdrmap_mem_free(j->m->base);
	} else {
		j->rc = gdrmap_mem_alloc(j->m->dev, j->m->size, &p);
		j->m->base = p;
	}
	snprintf(j->why, sizeof(j->why), "%s", gdrmap_last_error());
	now = current_ctx();
	CHECK(now == j->c->ctx, "%s on GPU %d from %s changed the context",
	      j->do_free ? "gdrmap_mem_free" : "gdrmap_mem_alloc", j->m->dev,
	      j->c->name);
	return NULL;
}

/* gdrmap_mem_alloc or _free in a thread with context c; its result. */
static int run_alloc_job(const struct vm_ctx *c, struct vm_mem *m,
			 bool do_free, char *why, size_t why_len)
{
	struct alloc_job job = { c, m, do_free, -1, "" };

	run_in_thread(alloc_job_run, &job);
	snprintf(why, why_len, "%s", job.why);
	return job.rc;
}

static void one(gdr_t g, int k, const struct vm_ctx *c, unsigned int seed)
{
	struct vm_mem m = { "", k, true, 0, VM_MEM_SIZE };
	long used = nvsim_gpu_count(k, "used_pages");
	int rc, ord = -1;
	char why[256];

	snprintf(m.name, sizeof(m.name), "gdrmap_mem_alloc@%d", k);
	rc = run_alloc_job(c, &m, false, why, sizeof(why));
	CHECK(rc == 0, "gdrmap_mem_alloc(%d) from %s: %d (%s)", k, c->name,
	      rc, why);
	if (rc)
		return;
	CU_OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				    m.base));
	CHECK(ord == k, "gdrmap_mem_alloc(%d) from %s: memory on GPU %d", k,
	      c->name, ord);
	pin_from_context(g, &m, c, 3 * GPU_PAGE - 1, GPU_PAGE + 2, seed);

	rc = run_alloc_job(c, &m, true, why, sizeof(why));
	CHECK(rc == 0, "gdrmap_mem_free of GPU %d's memory from %s: %d (%s)",
	      k, c->name, rc, why);
	if (rc)
		vmm_free(m.base, m.size);	/* not to spoil the next ones */
	CHECK(nvsim_gpu_count(k, "used_pages") == used,
	      "GPU %d used_pages %ld, was %ld", k,
	      nvsim_gpu_count(k, "used_pages"), used);
}

int main(void)
{
	struct vm_ctx ctxs[1 + 2 * MAX_GPUS];
	unsigned int seed = 1;
	int ngpus, nctx, k, j;
	gdr_t g;

	ngpus = multi_init(1);
	nctx = vm_contexts(ctxs, ngpus);
	g = gdr_open();
	REQUIRE(g, "gdr_open failed: %s", gdrmap_last_error());
	for (k = 0; k < ngpus; k++)
		for (j = 0; j < nctx; j++, seed += 2)
			one(g, k, &ctxs[j], seed);
	CHECK_RET(gdr_close(g), 0);
	return test_done();
}
