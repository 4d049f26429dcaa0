/* SPDX-License-Identifier: MIT */
/*
 * One gdr_t holding pins on every GPU at once, cuMemAlloc and VMM memory
 * of each: all mapped together, each written with its own pattern through
 * its mapping and read back through its mapping and through CUDA, so that
 * no GPU's bytes land in another's; nvsim counts each GPU's pins on that
 * GPU; unpinning the first GPU's leaves the others' mappings right.
 */
#include "multigpu.h"

#define LEN (3 * GPU_PAGE + 77)	/* pinned at +OFF of each allocation */
#define OFF (GPU_PAGE + 5)

struct held {
	struct vm_mem m;
	gdr_mh_t mh;
	void *map;
	char *p;		/* the mapping of base + OFF */
	bool pinned;
};

static void check_all(const struct held *h, int n, unsigned int seed,
		       const char *when)
{
	uint8_t *buf = malloc(LEN);
	long bad;
	int i;

	REQUIRE(buf, "malloc");
	for (i = 0; i < n; i++) {
		if (!h[i].pinned)
			continue;
		memset(buf, 0, LEN);
		CHECK_RET(gdr_copy_from_mapping(h[i].mh, buf, h[i].p, LEN), 0);
		bad = find_mismatch(buf, LEN, seed + i);
		CHECK(bad < 0, "%s, %s: mapping reads wrong at +%#lx",
		      when, h[i].m.name, bad);
		bad = gpu_mismatch(h[i].m.base + OFF, LEN, seed + i);
		CHECK(bad < 0, "%s, %s: GPU holds wrong data at +%#lx",
		      when, h[i].m.name, bad);
	}
	free(buf);
}

int main(void)
{
	struct held h[2 * MAX_GPUS];
	uint8_t *buf = malloc(LEN);
	long pins[MAX_GPUS];
	int ngpus, n = 0, i, d;
	gdr_info_t info;
	size_t k;
	gdr_t g;

	ngpus = multi_init(2);
	REQUIRE(buf, "malloc");
	g = gdr_open();
	REQUIRE(g, "gdr_open failed: %s", gdrmap_last_error());
	for (d = 0; d < ngpus; d++) {
		pins[d] = nvsim_gpu_count(d, "outstanding_pins");
		for (i = 0; i < 2; i++, n++) {
			memset(&h[n], 0, sizeof(h[n]));
			vm_mem_alloc(&h[n].m, d, i);
			gpu_fill(h[n].m.base, h[n].m.size, 900 + n);
		}
	}

	/* Everything pinned and mapped at once. */
	for (i = 0; i < n; i++) {
		CHECK_RET(gdr_pin_buffer(g, h[i].m.base + OFF, LEN, 0, 0,
					 &h[i].mh), 0);
		CHECK_RET(gdr_get_info(g, h[i].mh, &info), 0);
		CHECK_RET(gdr_map(g, h[i].mh, &h[i].map, LEN), 0);
		h[i].p = (char *)h[i].map + (h[i].m.base + OFF - info.va);
		h[i].pinned = true;
	}
	for (d = 0; d < ngpus; d++)
		CHECK(nvsim_gpu_count(d, "outstanding_pins") == pins[d] + 2,
		      "GPU %d: outstanding_pins %ld, want %ld", d,
		      nvsim_gpu_count(d, "outstanding_pins"), pins[d] + 2);

	/* Reads first: each mapping shows its own GPU's bytes. */
	for (i = 0; i < n; i++) {
		memset(buf, 0, LEN);
		CHECK_RET(gdr_copy_from_mapping(h[i].mh, buf, h[i].p, LEN), 0);
		for (k = 0; k < LEN; k++)
			if (buf[k] != pattern_byte(OFF + k, 900 + i))
				break;
		CHECK(k == LEN, "%s: first read wrong at +%#zx", h[i].m.name,
		      k);
	}
	/* Then every one written with its own pattern, all before any
	 * is checked. */
	for (i = 0; i < n; i++) {
		fill_pattern(buf, LEN, 10 + i);
		CHECK_RET(gdr_copy_to_mapping(h[i].mh, h[i].p, buf, LEN), 0);
	}
	check_all(h, n, 10, "all pinned");

	/* The first GPU's pins go; the others' stay right. */
	for (i = 0; i < 2; i++) {
		CHECK_RET(gdr_unmap(g, h[i].mh, h[i].map, LEN), 0);
		CHECK_RET(gdr_unpin_buffer(g, h[i].mh), 0);
		h[i].pinned = false;
	}
	CHECK(nvsim_gpu_count(0, "outstanding_pins") == pins[0],
	      "GPU 0 outstanding_pins %ld after its unpins",
	      nvsim_gpu_count(0, "outstanding_pins"));
	for (i = 2; i < n; i++) {
		fill_pattern(buf, LEN, 50 + i);
		CHECK_RET(gdr_copy_to_mapping(h[i].mh, h[i].p, buf, LEN), 0);
	}
	check_all(h, n, 50, "GPU 0 unpinned");

	CHECK_RET(gdr_close(g), 0);	/* unpins the rest */
	for (d = 0; d < ngpus; d++)
		CHECK(nvsim_gpu_count(d, "outstanding_pins") == pins[d],
		      "GPU %d: outstanding_pins %ld after gdr_close", d,
		      nvsim_gpu_count(d, "outstanding_pins"));
	for (i = 0; i < n; i++)
		vm_mem_free(&h[i].m);
	free(buf);
	return test_done();
}
