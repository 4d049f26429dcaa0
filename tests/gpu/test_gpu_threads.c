// SPDX-License-Identifier: MIT
/*
 * Eight threads pin, map, copy, check and unpin their own slices of one
 * allocation at once (sharing its import), while the GPU's view of the
 * data is checked at the end.
 */
#include <pthread.h>
#include <stdio.h>

#include "gpu.h"

#define THREADS	8
#define ROUNDS	300
#define SLICE	(256UL << 10)

static gdr_t g;
static unsigned long base;
static int failures[THREADS];

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	unsigned int seed = 77 + t;
	unsigned char data[512], back[512];
	int r;

	for (r = 0; r < ROUNDS; r++) {
		size_t off = (size_t)rand_r(&seed) % (SLICE - 512);
		size_t n = 1 + (size_t)rand_r(&seed) % 512;
		unsigned long addr = base + t * SLICE + off;
		gdr_info_t info;
		gdr_mh_t mh;
		char *va;

		fill_random(data, n, &seed);
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
		if (gdr_unpin_buffer(g, mh))
			failures[t]++;
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	int t, total = 0;

	if (gpu_setup())
		return test_done();
	g = gpu_gdr_open();
	if (!g)
		return test_done();
	CHECK_RET(gdrmap_mem_alloc(0, THREADS * SLICE, &base), 0);
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
	for (t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		total += failures[t];
	}
	CHECK(total == 0, "%d of %d rounds failed", total, THREADS * ROUNDS);
	CHECK_RET(gdrmap_mem_free(base), 0);
	CHECK_RET(gdr_close(g), 0);
	return test_done();
}
