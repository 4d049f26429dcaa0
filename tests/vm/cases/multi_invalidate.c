/* SPDX-License-Identifier: MIT */
/*
 * Invalidation on one GPU leaves every other GPU's pins alone: with
 * mappings of memory on each GPU live, freeing GPU 0's cuMemAlloc memory,
 * then cuMemUnmap of GPU 1's VMM memory, flags (non-persistent mode) only
 * the pin on the freed memory, fires the callback on that GPU alone, and
 * the other mappings still read and write the right bytes.
 */
#include "multigpu.h"

struct live {
	struct vm_mem m;
	uint64_t h;
	volatile uint8_t *map;
	unsigned int seed;	/* what it holds now */
};

static int fd, persistent;

static void pin_map(struct live *l, int dev, bool vmm, unsigned int seed)
{
	vm_mem_alloc(&l->m, dev, vmm);
	l->seed = seed;
	gpu_fill(l->m.base, l->m.size, seed);
	REQUIRE(gdrdrv_pin(fd, l->m.base, l->m.size, &l->h) == 0,
		"pin of %s", l->m.name);
	l->map = gdrdrv_mmap(fd, l->h, l->m.size);
	REQUIRE(l->map != MAP_FAILED, "mmap of %s: %s", l->m.name,
		strerror(errno));
}

/* A survivor: not flagged, reads what it held, a write reaches its GPU. */
static void still_right(struct live *l, const char *after)
{
	uint32_t flag = 7;
	long bad;

	CHECK_RET(gdrdrv_cb_flag(fd, l->h, &flag), 0);
	CHECK(flag == 0, "%s: %s flagged", after, l->m.name);
	bad = map_mismatch(l->map, l->m.size, l->seed);
	CHECK(bad < 0, "%s: %s reads wrong at +%#lx", after, l->m.name, bad);
	map_fill(l->map, l->m.size, ++l->seed);
	bad = gpu_mismatch(l->m.base, l->m.size, l->seed);
	CHECK(bad < 0, "%s: write to %s wrong at +%#lx", after, l->m.name,
	      bad);
}

/* The victim: flagged in non-persistent mode; its handle still goes. */
static void invalidated(struct live *l, const char *after)
{
	uint32_t flag = 7;

	CHECK_RET(gdrdrv_cb_flag(fd, l->h, &flag), 0);
	CHECK(flag == (uint32_t)!persistent, "%s: %s's flag %u", after,
	      l->m.name, flag);
	CHECK(munmap((void *)l->map, l->m.size) == 0, "munmap: %s",
	      strerror(errno));
	CHECK_RET(gdrdrv_unpin(fd, l->h), 0);
}

static void release(struct live *l)
{
	CHECK(munmap((void *)l->map, l->m.size) == 0, "munmap: %s",
	      strerror(errno));
	CHECK_RET(gdrdrv_unpin(fd, l->h), 0);
	vm_mem_free(&l->m);
}

/* callbacks_fired of each GPU, now. */
static void callbacks(long *cb, int ngpus)
{
	for (int d = 0; d < ngpus; d++)
		cb[d] = nvsim_gpu_count(d, "callbacks_fired");
}

static void fired_on(const long *cb0, int ngpus, int dev, const char *after)
{
	long cb[MAX_GPUS];

	callbacks(cb, ngpus);
	for (int d = 0; d < ngpus; d++)
		CHECK(cb[d] == cb0[d] + (d == dev && !persistent),
		      "%s: GPU %d fired %ld callbacks", after, d,
		      cb[d] - cb0[d]);
}

int main(void)
{
	struct live a, b, c, e;	/* legacy@0, legacy@1, vmm@1, vmm@0 */
	long cb0[MAX_GPUS];
	int ngpus;

	ngpus = multi_init(2);
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	printf("gdrdrv %s mode\n", persistent ? "persistent" : "non-persistent");

	pin_map(&a, 0, false, 500);
	pin_map(&b, 1, false, 510);
	callbacks(cb0, ngpus);
	CU_OK(cuMemFree(a.m.base));
	fired_on(cb0, ngpus, 0, "cuMemFree on GPU 0");
	invalidated(&a, "cuMemFree on GPU 0");
	still_right(&b, "cuMemFree on GPU 0");

	pin_map(&c, 1, true, 520);
	pin_map(&e, 0, true, 530);
	callbacks(cb0, ngpus);
	CU_OK(cuMemUnmap(c.m.base, c.m.size));
	fired_on(cb0, ngpus, 1, "cuMemUnmap on GPU 1");
	invalidated(&c, "cuMemUnmap on GPU 1");
	CU_OK(cuMemAddressFree(c.m.base, c.m.size));
	still_right(&e, "cuMemUnmap on GPU 1");
	still_right(&b, "cuMemUnmap on GPU 1");

	release(&b);
	release(&e);
	close(fd);
	CHECK(nvsim_count("outstanding_pins") == 0, "outstanding_pins %ld",
	      nvsim_count("outstanding_pins"));
	return test_done();
}
