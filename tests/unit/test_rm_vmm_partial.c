// SPDX-License-Identifier: MIT
/*
 * cuMemCreate memory is mapped into the GPU's address space piece by
 * piece: a 4 MiB handle of which only the first 2 MiB are mapped, at the
 * start of a 4 MiB reservation whose second half holds nothing.  The RM
 * object is 4 MiB, but only what CUDA maps lies at the addresses after
 * the mapping.  A pin that reaches one page past the mapping must not be
 * served by a CPU mapping of the handle's unmapped half (a write there
 * would land in memory the GPU sees nowhere, or elsewhere); it is not
 * mapped for the CPU (copy-only, the core's answer for memory a backend
 * cannot map), and the handle's second half is untouched.  A pin inside
 * the mapping maps as usual.  Nothing is left in the fake RM.
 */
#include "rm_pins.h"

#define GRAN	FAKE_GRAN

int main(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, 2 },
	};
	CUmemGenericAllocationHandle h = 0;
	unsigned char *view;
	CUdeviceptr p = 0;
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m;
	size_t i;
	int ok, bad;
	gdr_t g;

	fake_rm_install();
	fake_enter_start(START_OWN_PRIMARY, 2);
	ok = fake_MemAddressReserve(&p, 2 * GRAN, 0, 0, 0) == CUDA_SUCCESS &&
	     fake_MemCreate(&h, 2 * GRAN, &prop, 0) == CUDA_SUCCESS &&
	     fake_MemMap(p, GRAN, 0, h, 0) == CUDA_SUCCESS;
	fake_MemRelease(h);
	CHECK(ok, "half of a 4 MiB handle mapped");
	g = rm_open();
	if (!g)
		return test_done();

	/* The handle whole, its second half poisoned (read on from p). */
	view = malloc(2 * GRAN);
	if (!view)
		return test_done();
	memset(view, POISON, 2 * GRAN);
	CHECK(fake_gpu_rw(p, view, 2 * GRAN, 1) == 0, "poison");

	/* One page past the mapping: not mapped for the CPU. */
	CHECK_RET(gdr_pin_buffer(g, p + GRAN - 4096, 8192, 0, 0, &mh), 0);
	info = rm_info(g, mh);
	CHECK_RET(gdr_map(g, mh, (void **)&base, 8192), 0);
	info = rm_info(g, mh);
	CHECK(!info.mapped, "a range past the mapping is not mapped for the CPU (type %d, [0x%llx, +%llu))",
	      info.mapping_type, (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size);
	if (info.mapped) {
		/* What a mapping would have done: written the unmapped half. */
		memset(view, 0x11, 8192);
		gdr_copy_to_mapping(mh, base + (p + GRAN - 4096 - info.va),
				    view, 8192);
	}
	CHECK_RET(gdr_unmap(g, mh, base, 8192), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK(fake_gpu_rw(p, view, 2 * GRAN, 0) == 0, "read the handle");
	for (i = GRAN, bad = 0; i < 2 * GRAN; i++)
		bad += view[i] != POISON;
	CHECK(bad == 0, "%d bytes of the handle's unmapped half written", bad);

	/* Inside the mapping: mapped. */
	m = rm_pin_map(g, p + GRAN - 4096, 4096, &mh, &base, &info);
	rm_both_ways(mh, m, p + GRAN - 4096, 4096, 31, "the mapped half");
	rm_unmap_unpin(g, mh, base, info.mapped_size);
	free(view);
	CHECK_RET(gdr_close(g), 0);
	fake_leave_start(START_OWN_PRIMARY, 2);
	return rm_done(1);
}
