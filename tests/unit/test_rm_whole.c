// SPDX-License-Identifier: MIT
/*
 * The rm backend on the fake nvidia.ko RM (fake_rm.h): whole cuMemAlloc
 * allocations of every device, pinned and mapped write-combined (not
 * copy-only), every byte moved both ways and checked against the GPU's
 * view; the window of an allocation whose size is not a whole number of
 * pages reaches the end of its RM object; pins of parts of them from
 * every starting context, with the bytes around the range untouched.
 * The GPUs' PCI addresses, /dev/nvidiaN minors and RM device instances
 * all differ (the fake refuses a mapping through the wrong GPU's file).
 * The driver version is the API's, 2.6.  Nothing is left in
 * the fake RM but the library's client, and no CUDA call ran outside the
 * owner's context.
 */
#include "rm_pins.h"

#define SIZE	(1UL << 20)
#define ODD	(SIZE + 100)

/* Pin and map [p, +size) whole; its window is exactly want. */
static void whole(gdr_t g, int dev, CUdeviceptr p, size_t size,
		  size_t want)
{
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m;
	char what[64];

	fake_enter_start(START_OWN_PRIMARY, dev);
	m = rm_pin_map(g, p, size, &mh, &base, &info);
	CHECK(info.va == p && info.mapped_size == want,
	      "device %d: the window of [0x%llx, +%zu) is [0x%llx, +%llu), not +%zu",
	      dev, (unsigned long long)p, size, (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size, want);
	/* The whole window: past the allocation, what the GPU holds is its
	 * object's (the GPU's view of p reads on into it). */
	snprintf(what, sizeof(what), "device %d, %zu bytes", dev, size);
	rm_both_ways(mh, m, p, want, (unsigned int)(dev * 31 + size % 97),
		     what);
	rm_unmap_unpin(g, mh, base, info.mapped_size);
	fake_leave_start(START_OWN_PRIMARY, dev);
}

int main(void)
{
	CUdeviceptr mem[FAKE_DEVS], odd;
	int d, st, major = 0, minor = 0;
	gdr_t g;

	fake_rm_install();
	for (d = 0; d < FAKE_DEVS; d++)
		mem[d] = legacy_alloc(d, SIZE);
	odd = legacy_alloc(2, ODD);
	g = rm_open();
	if (!g)
		return test_done();
	CHECK_RET(gdr_driver_get_version(g, &major, &minor), 0);
	/* The API's version, as every module-free backend reports it:
	 * callers check it against GDRCopy's module (NCCL: >= 2.5). */
	CHECK(major == 2 && minor == 6, "driver version %d.%d", major, minor);

	for (d = 0; d < FAKE_DEVS; d++) {
		whole(g, d, mem[d], SIZE, SIZE);
		for (st = 0; st < NR_STARTS; st++) {
			pin_and_copy(g, d, st, mem[d], 100, 3000);
			pin_and_copy(g, d, st, mem[d], 65536 + 4093, 5000);
		}
	}
	/* An allocation of 1 MiB + 100 bytes: its object is 1 MiB + 64 KiB,
	 * and so is the window the core asks for. */
	whole(g, 2, odd, ODD, SIZE + FAKE_RM_ALIGN);

	CHECK_RET(gdr_close(g), 0);
	return rm_done(FAKE_DEVS);
}
