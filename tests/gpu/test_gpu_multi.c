// SPDX-License-Identifier: MIT
/*
 * One gdr_t holds pins of every GPU's memory at once: each GPU's mapping
 * moves its own data both ways, checked byte by byte against what that
 * GPU sees, and unpinning one GPU's memory leaves the others' mappings
 * working.  Run from each kind of current context (gpu.h), the pins made
 * in a rotating order so that every GPU is pinned while another GPU's
 * context is current.  Skips on a machine with one GPU.
 */
#include <stdio.h>

#include "gpu.h"

#define SIZE	(2UL << 20)
#define OFF	12345UL
#define LEN	100000UL

struct pin {
	unsigned long base;
	gdr_mh_t mh;
	char *va, *p;
};

/* Write through GPU d's mapping, check what d sees; then the reverse. */
static void check_both_ways(int d, struct pin *pn, unsigned int *seed)
{
	static const uint32_t poison = 0xdeadbeefu;
	const unsigned char *pb = (const unsigned char *)&poison;
	unsigned char *data = malloc(SIZE), *seen = malloc(SIZE);
	size_t i;
	long bad;

	if (!data || !seen)
		abort();
	CU_ON(d, cu.MemsetD32(pn->base, poison, SIZE / 4));
	CU_ON(d, cu.CtxSynchronize());
	fill_random(data, LEN, seed);
	LIB(gdr_copy_to_mapping(pn->mh, pn->p, data, LEN), 0);
	CU_ON(d, cu.MemcpyDtoH(seen, pn->base, SIZE));
	bad = first_diff(seen + OFF, data, LEN);
	CHECK(bad < 0, "GPU %d sees byte %ld of what its mapping wrote differ",
	      d, bad);
	for (bad = -1, i = 0; i < SIZE && bad < 0; i++)
		if ((i < OFF || i >= OFF + LEN) && seen[i] != pb[i & 3])
			bad = (long)i;
	CHECK(bad < 0, "GPU %d: byte %ld outside the write lost its poison",
	      d, bad);

	fill_random(data, LEN, seed);
	CU_ON(d, cu.MemcpyHtoD(pn->base + OFF, data, LEN));
	CU_ON(d, cu.CtxSynchronize());
	memset(seen, 0x5a, LEN);
	LIB(gdr_copy_from_mapping(pn->mh, seen, pn->p, LEN), 0);
	bad = first_diff(seen, data, LEN);
	CHECK(bad < 0, "GPU %d: byte %ld read through its mapping differs",
	      d, bad);
	free(data);
	free(seen);
}

static void pin_all(const struct gpu_case *c)
{
	struct pin pins[GPU_MAX];
	unsigned int seed = 99 + (unsigned int)c->start;
	gdr_info_t info;
	int i, d;

	if (c->dev)	/* one round per context kind, not per GPU */
		return;
	for (i = 0; i < cu.ndev; i++) {
		d = (i + 1) % cu.ndev;	/* not the order of the contexts */
		pins[d].base = 0;
		LIB(gdrmap_mem_alloc(d, SIZE, &pins[d].base), 0);
		LIB(gdr_pin_buffer(c->g, pins[d].base + OFF, LEN, 0, 0,
				   &pins[d].mh), 0);
		LIB(gdr_map(c->g, pins[d].mh, (void **)&pins[d].va, LEN), 0);
		LIB(gdr_get_info(c->g, pins[d].mh, &info), 0);
		pins[d].p = pins[d].va + (pins[d].base + OFF - info.va);
	}
	for (d = 0; d < cu.ndev; d++)
		check_both_ways(d, &pins[d], &seed);
	/* Unpin GPU 0's: the others keep working. */
	LIB(gdr_unmap(c->g, pins[0].mh, pins[0].va, LEN), 0);
	LIB(gdr_unpin_buffer(c->g, pins[0].mh), 0);
	LIB(gdrmap_mem_free(pins[0].base), 0);
	for (d = 1; d < cu.ndev; d++) {
		check_both_ways(d, &pins[d], &seed);
		LIB(gdr_unmap(c->g, pins[d].mh, pins[d].va, LEN), 0);
		LIB(gdr_unpin_buffer(c->g, pins[d].mh), 0);
		LIB(gdrmap_mem_free(pins[d].base), 0);
	}
}

int main(void)
{
	/* Before gpu_run opens anything: one GPU means nothing to test. */
	if (gpu_count() == 1) {
		SKIP("one GPU: this test pins several GPUs' memory at once");
		return test_done();
	}
	return gpu_run(pin_all);
}
