// SPDX-License-Identifier: MIT
/*
 * Everything the rm backend makes in RM is released: the fake counts
 * the library's live duplicates, RM mappings, address space mapped
 * through it, and open files, and the process's own file descriptors are
 * counted too.
 *  - pin, map, unmap, unpin of every kind of memory (cuMemAlloc whole,
 *    suballocated buffers in a UCX window, two cuMemCreate allocations in
 *    one window): back to nothing after each; while mapped, RM holds one
 *    mapping per object of the window and no device file stays open;
 *  - map and unmap of one pin, again and again;
 *  - memory freed by CUDA under a pin: the duplicate keeps it, the
 *    mapping still reads what was written, gdr_get_callback_flag says it
 *    was freed, and the unpin releases it;
 *  - pins left pinned and mapped at gdr_close: all released by it.
 * At the end: the library's one client on its one control file, one
 * device and subdevice per GPU used, and as many file descriptors as
 * before the first pin.
 */
#include <dirent.h>

#include "rm_pins.h"

#define SIZE	(1UL << 20)
#define GRAN	FAKE_GRAN
#define WIN	(64UL << 10)

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

static struct fake_rm_stats base;

static void back_to_base(const char *after)
{
	struct fake_rm_stats st;

	fake_rm_stats(&st);
	CHECK(st.dups == base.dups && st.rm_maps == base.rm_maps &&
	      st.cpu_bytes == base.cpu_bytes && st.files == base.files,
	      "after %s: %d duplicates, %d RM mappings, %zu bytes, %d files more than before",
	      after, st.dups - base.dups, st.rm_maps - base.rm_maps,
	      st.cpu_bytes - base.cpu_bytes, st.files - base.files);
}

/* Pin [p, +n) of dev, map it, check the RM mappings held, move bytes,
 * unmap, unpin. */
static void cycle(gdr_t g, int dev, CUdeviceptr p, size_t n, int objects,
		  const char *what)
{
	struct fake_rm_stats st;
	gdr_info_t info;
	gdr_mh_t mh;
	char *mbase, *m;

	fake_enter_start(START_OWN_PRIMARY, dev);
	m = rm_pin_map(g, p, n, &mh, &mbase, &info);
	fake_rm_stats(&st);
	CHECK(st.dups == base.dups + objects &&
	      st.rm_maps == base.rm_maps + objects &&
	      st.files == base.files && st.cpu_bytes == info.mapped_size,
	      "%s mapped: %d duplicates, %d RM mappings (want %d each), %d device files open, %zu bytes mapped of %llu",
	      what, st.dups - base.dups, st.rm_maps - base.rm_maps, objects,
	      st.files - base.files, st.cpu_bytes,
	      (unsigned long long)info.mapped_size);
	if (m)
		rm_both_ways(mh, m, p, 8, (unsigned int)objects, what);
	rm_unmap_unpin(g, mh, mbase, info.mapped_size);
	fake_leave_start(START_OWN_PRIMARY, dev);
	back_to_base(what);
}

static CUdeviceptr pair_of(int dev)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr p = 0;
	int i, ok;

	fake_DevicePrimaryCtxRetain(&fake_cur, dev);
	ok = fake_MemAddressReserve(&p, 2 * GRAN, 0, 0, 0) == CUDA_SUCCESS;
	for (i = 0; ok && i < 2; i++) {
		ok = fake_MemCreate(&h, GRAN, &prop, 0) == CUDA_SUCCESS &&
		     fake_MemMap(p + i * GRAN, GRAN, 0, h, 0) == CUDA_SUCCESS;
		fake_MemRelease(h);
	}
	fake_primary_release(dev);
	fake_cur = NULL;
	CHECK(ok, "two allocations side by side");
	return p;
}

int main(void)
{
	CUdeviceptr legacy, pair, small[4], doomed;
	struct fake_rm_stats st;
	uint64_t v = 0x0ddba11c0ffee000ULL, back = 0;
	gdr_mh_t mh[4];
	int i, fds, flag = -1;
	gdr_info_t info;
	char *va[4];
	gdr_t g;

	fake_rm_install();
	legacy = legacy_alloc(0, SIZE);
	pair = pair_of(2);
	suballocated(1, small, 4, 64);
	g = rm_open();
	if (!g)
		return test_done();
	/* Each GPU's probe and device first, so that what follows makes
	 * only pins. */
	for (i = 0; i < FAKE_DEVS; i++)
		pin_and_copy(g, i, START_OWN_PRIMARY,
			     i == 0 ? legacy : i == 1 ? small[0] : pair,
			     0, 64);
	fake_rm_stats(&base);
	fds = open_fds();

	cycle(g, 0, legacy, SIZE, 1, "cuMemAlloc memory");
	cycle(g, 1, small[2], 64, 1, "a UCX window");
	cycle(g, 2, pair + GRAN - WIN, 2 * WIN, 2, "two cuMemCreate allocations");

	/* Map and unmap one pin again and again. */
	CHECK_RET(gdr_pin_buffer(g, pair, 2 * GRAN, 0, 0, &mh[0]), 0);
	for (i = 0; i < 5; i++) {
		CHECK_RET(gdr_map(g, mh[0], (void **)&va[0], 2 * GRAN), 0);
		rm_both_ways(mh[0], va[0] + GRAN - 8, pair + GRAN - 8, 8,
			     (unsigned int)i, "a map again");
		CHECK_RET(gdr_unmap(g, mh[0], va[0], 2 * GRAN), 0);
		fake_rm_stats(&st);
		CHECK(st.rm_maps == base.rm_maps &&
		      st.cpu_bytes == base.cpu_bytes,
		      "unmap %d leaves %d RM mappings, %zu bytes", i,
		      st.rm_maps - base.rm_maps, st.cpu_bytes - base.cpu_bytes);
	}
	CHECK_RET(gdr_unpin_buffer(g, mh[0]), 0);
	back_to_base("maps again and again");

	/* Freed under the pin. */
	doomed = legacy_alloc(0, SIZE);
	fake_enter_start(START_OWN_PRIMARY, 0);
	CHECK_RET(gdr_pin_buffer(g, doomed, SIZE, 0, 0, &mh[0]), 0);
	CHECK_RET(gdr_map(g, mh[0], (void **)&va[0], SIZE), 0);
	CHECK_RET(gdr_copy_to_mapping(mh[0], va[0] + 4096, &v, 8), 0);
	CHECK_RET(gdr_get_callback_flag(g, mh[0], &flag), 0);
	CHECK(flag == 0, "the flag is clear while the memory lives");
	CHECK(fake_MemFree(doomed) == CUDA_SUCCESS, "cuMemFree under the pin");
	CHECK_RET(gdr_copy_from_mapping(mh[0], &back, va[0] + 4096, 8), 0);
	CHECK(back == v, "the duplicate keeps the memory: 0x%llx",
	      (unsigned long long)back);
	CHECK_RET(gdr_get_callback_flag(g, mh[0], &flag), 0);
	CHECK(flag == 1, "the flag says the memory was freed");
	CHECK_RET(gdr_unmap(g, mh[0], va[0], SIZE), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh[0]), 0);
	fake_leave_start(START_OWN_PRIMARY, 0);
	back_to_base("memory freed under a pin");

	/* Left pinned, some mapped, at gdr_close. */
	CHECK_RET(gdr_pin_buffer(g, legacy, SIZE, 0, 0, &mh[0]), 0);
	CHECK_RET(gdr_pin_buffer(g, pair + GRAN - WIN, 2 * WIN, 0, 0, &mh[1]),
		  0);
	CHECK_RET(gdr_pin_buffer(g, small[3], 64, 0, 0, &mh[2]), 0);
	CHECK_RET(gdr_pin_buffer(g, small[1], 64, 0, 0, &mh[3]), 0);
	CHECK_RET(gdr_map(g, mh[0], (void **)&va[0], SIZE), 0);
	CHECK_RET(gdr_map(g, mh[1], (void **)&va[1], 2 * WIN), 0);
	info = rm_info(g, mh[2]);
	CHECK_RET(gdr_map(g, mh[2], (void **)&va[2], info.mapped_size), 0);
	CHECK_RET(gdr_close(g), 0);
	back_to_base("gdr_close with pins left");
	CHECK(open_fds() == fds, "%d file descriptors more than before the pins",
	      open_fds() - fds);
	return rm_done(FAKE_DEVS);
}
