// SPDX-License-Identifier: MIT
/*
 * Many threads on one gdr_t: pin, map, copy, check, unmap and unpin in a
 * loop, while other threads copy through a long-lived mapping (the copy
 * functions take no lock and must not be disturbed by the handle table
 * growing or slots being reused underneath them).
 */
#include <pthread.h>
#include <stdlib.h>

#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR	0x7f0000000000UL
#define WORKERS		6
#define COPIERS		2
#define ROUNDS		400

static gdr_t g;
static gdr_mh_t shared_mh;
static unsigned char *shared_va;
static atomic_int failures, stop;

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	unsigned char src[300], dst[300];
	int round, i;

	for (round = 0; round < ROUNDS; round++) {
		size_t off = rand_r(&seed) % 4000, n = 1 + rand_r(&seed) % 300;
		gdr_mh_t mh;
		unsigned char *va;

		for (i = 0; i < (int)n; i++)
			src[i] = (unsigned char)(rand_r(&seed) | 0x80);
		memset(dst, 0, sizeof(dst));
		if (gdr_pin_buffer(g, GPU_ADDR + ((uintptr_t)arg << 24) + off,
				   n, 0, 0, &mh) ||
		    gdr_map(g, mh, (void **)&va, n) ||
		    gdr_copy_to_mapping(mh, va + off, src, n) ||
		    gdr_copy_from_mapping(mh, dst, va + off, n) ||
		    memcmp(src, dst, n) ||
		    gdr_unmap(g, mh, va, n) || gdr_unpin_buffer(g, mh))
			atomic_fetch_add(&failures, 1);
	}
	return NULL;
}

static void *copier(void *arg)
{
	unsigned char pattern[64], back[64];
	long rounds = 0;

	memset(pattern, (int)(uintptr_t)arg, sizeof(pattern));
	while (!atomic_load(&stop) || rounds < 1000) {
		unsigned char *p = shared_va + (uintptr_t)arg * 64;

		if (gdr_copy_to_mapping(shared_mh, p, pattern, 64) ||
		    gdr_copy_from_mapping(shared_mh, back, p, 64) ||
		    memcmp(pattern, back, 64))
			atomic_fetch_add(&failures, 1);
		rounds++;
	}
	return NULL;
}

int main(void)
{
	pthread_t w[WORKERS], c[COPIERS];
	uintptr_t i;

	g = mock_open_gdr();
	CHECK(g != NULL, "mock backend opens");
	if (!g)
		return test_done();
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 4096, 0, 0, &shared_mh), 0);
	CHECK_RET(gdr_map(g, shared_mh, (void **)&shared_va, 4096), 0);
	for (i = 0; i < COPIERS; i++)
		pthread_create(&c[i], NULL, copier, (void *)(i + 1));
	for (i = 0; i < WORKERS; i++)
		pthread_create(&w[i], NULL, worker, (void *)(i + 1));
	for (i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	atomic_store(&stop, 1);
	for (i = 0; i < COPIERS; i++)
		pthread_join(c[i], NULL);
	CHECK(atomic_load(&failures) == 0, "%d operations failed",
	      atomic_load(&failures));
	CHECK_RET(gdr_unmap(g, shared_mh, shared_va, 4096), 0);
	CHECK_RET(gdr_unpin_buffer(g, shared_mh), 0);
	CHECK_RET(gdr_close(g), 0);
	CHECK(atomic_load(&mock_pins) == 0 && atomic_load(&mock_maps) == 0,
	      "nothing outstanding");
	return test_done();
}
