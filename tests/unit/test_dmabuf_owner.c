// SPDX-License-Identifier: MIT
/*
 * The dmabuf backend on a fake CUDA of several devices: gdr_open tries
 * the device of the calling thread's context (not device 0); pins of
 * memory of every device, VMM and legacy, from every starting context,
 * export in the owner's context and move the right bytes; a device that
 * cannot export dma-bufs is refused by name while the others work.
 */
#include "owner_pins.h"

int main(void)
{
	unsigned long vmm[FAKE_DEVS];
	CUdeviceptr legacy[FAKE_DEVS];
	gdr_t g;
	int d, st, before;

	gdr_cuda_use_syms(&fake_syms);
	fake_dmabuf_supported[1] = 0;
	for (d = 0; d < FAKE_DEVS; d++) {
		legacy[d] = legacy_alloc(d, 1 << 20);
		CHECK_RET(gdrmap_mem_alloc(d, 2 << 20, &vmm[d]), 0);
	}
	before = fake_legacy_allocs[0];

	/* Opened from device 2's context: the try runs there. */
	fake_enter_start(START_OWN_PRIMARY, 2);
	g = open_dmabuf();
	CHECK(fake_cur == &fake_primary[2], "gdr_open keeps the context");
	CHECK(fake_legacy_allocs[2] == 2 && fake_legacy_allocs[0] == before,
	      "gdr_open tried device 2, the caller's (allocations: %d on 2, %d on 0)",
	      fake_legacy_allocs[2], fake_legacy_allocs[0]);
	fake_leave_start(START_OWN_PRIMARY, 2);
	if (!g)
		return test_done();

	for (d = 0; d < FAKE_DEVS; d++) {
		if (d == 1)
			continue;
		for (st = 0; st < NR_STARTS; st++) {
			pin_and_copy(g, d, st, vmm[d], 100, 3000);
			pin_and_copy(g, d, st, legacy[d], 7, 4000);
		}
	}
	/* Named: the device that cannot export. */
	pin_refused(g, 1, vmm[1], ENOTSUP, "CUDA device 1");
	/* The owner's context cannot be made current: ENODEV, as
	 * gdr_pin_buffer(3) says, naming the device. */
	fake_ctx_broken[0] = 1;
	pin_refused(g, 0, vmm[0], ENODEV,
		    "no context of CUDA device 0 can be made current");
	fake_ctx_broken[0] = 0;
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}
