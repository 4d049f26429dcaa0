// SPDX-License-Identifier: MIT
/*
 * Eight threads pin, map, copy, check and unpin their own slices of one
 * allocation at once (sharing its import); each thread has the case's
 * current context (gpu.h) and must still have it after every call; the
 * GPU sees what the threads wrote.
 */
#include <pthread.h>
#include <stdio.h>

#include "gpu.h"

#define THREADS	8
#define ROUNDS	300
#define SLICE	(256UL << 10)

static const struct gpu_case *cur_case;
static unsigned long base;
static int failures[THREADS];

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	unsigned int seed = 77 + t;
	unsigned char data[512], back[512];
	gdr_t g = cur_case->g;
	int r;

	if (cu.CtxSetCurrent(cur_case->ctx) != CUDA_SUCCESS)
		failures[t]++;
	for (r = 0; r < ROUNDS; r++) {
		size_t off = (size_t)rand_r(&seed) % (SLICE - 512);
		size_t n = 1 + (size_t)rand_r(&seed) % 512;
		unsigned long addr = base + t * SLICE + off;
		gdr_info_t info;
		gdr_mh_t mh;
		char *va;

		fill_random(data, n, &seed);
		memset(back, 0x5a, sizeof(back));
		if (gdr_pin_buffer(g, addr, n, 0, 0, &mh)) {
			failures[t]++;
			continue;
		}
		if (gdr_map(g, mh, (void **)&va, n) ||
		    gdr_get_info(g, mh, &info) ||
		    gdr_copy_to_mapping(mh, va + (addr - info.va), data, n) ||
		    gdr_copy_from_mapping(mh, back, va + (addr - info.va), n) ||
		    memcmp(data, back, n) || gdr_unmap(g, mh, va, n))
			failures[t]++;
		if (gdr_unpin_buffer(g, mh) || gpu_current() != cur_case->ctx)
			failures[t]++;
	}
	/* What the GPU sees of the last round's slice start. */
	memset(data, 0xc3, 64);
	memset(back, 0x5a, 64);
	if (cu.CtxPushCurrent(cu.primary[cur_case->dev]) ||
	    cu.MemcpyHtoD(base + t * SLICE, data, 64) ||
	    cu.CtxSynchronize())
		failures[t]++;
	cu.CtxPopCurrent(&(CUcontext){ NULL });
	return NULL;
}

static void one_case(const struct gpu_case *c)
{
	pthread_t th[THREADS];
	unsigned char seen[64];
	int t, total = 0;
	gdr_info_t info;
	gdr_mh_t mh;
	char *va;

	cur_case = c;
	base = 0;
	LIB(gdrmap_mem_alloc(c->dev, THREADS * SLICE, &base), 0);
	if (!base)
		return;
	for (t = 0; t < THREADS; t++) {
		failures[t] = 0;
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	}
	for (t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		total += failures[t];
	}
	CHECK(total == 0, "GPU %d from %s: %d of %d rounds failed", c->dev,
	      gpu_start_names[c->start], total, THREADS * ROUNDS);
	/* The slices' first bytes, written by cuMemcpy, read through one
	 * mapping of the whole allocation. */
	LIB(gdr_pin_buffer(c->g, base, THREADS * SLICE, 0, 0, &mh), 0);
	LIB(gdr_map(c->g, mh, (void **)&va, THREADS * SLICE), 0);
	LIB(gdr_get_info(c->g, mh, &info), 0);
	for (t = 0; t < THREADS; t++) {
		memset(seen, 0x5a, sizeof(seen));
		LIB(gdr_copy_from_mapping(mh, seen, va + (base - info.va) +
					  t * SLICE, sizeof(seen)), 0);
		CHECK(seen[0] == 0xc3 && seen[63] == 0xc3 &&
		      first_diff(seen, seen + 1, 63) < 0,
		      "slice %d reads what cuMemcpy wrote", t);
	}
	LIB(gdr_unmap(c->g, mh, va, THREADS * SLICE), 0);
	LIB(gdr_unpin_buffer(c->g, mh), 0);
	LIB(gdrmap_mem_free(base), 0);
}

int main(void)
{
	return gpu_run(one_case);
}
