// SPDX-License-Identifier: MIT
/*
 * The vulkan backend on a fake CUDA of several devices and a fake Vulkan
 * that lists the same GPUs in another order (fake_vulkan.h): pins of
 * memory of every device from every starting context run their CUDA
 * calls in the owner's context, import into the Vulkan device with the
 * owner's UUID, move the right bytes, and give every allocation handle
 * back on the last unpin.  Memory Vulkan cannot import is
 * test_copy_only_vulkan's.
 */
#include "fake_vulkan.h"
#include "owner_pins.h"

int main(void)
{
	char why[512];
	unsigned long vmm[FAKE_DEVS];
	gdr_t g;
	int d, st, err = 0, live;

	gdr_cuda_use_syms(&fake_syms);
	for (d = 0; d < FAKE_DEVS; d++)
		CHECK_RET(gdrmap_mem_alloc(d, 4 << 20, &vmm[d]), 0);
	live = fake_live_mems();
	g = gdr_open_backend(&gdr_backend_vulkan, why, sizeof(why), &err);
	CHECK(g != NULL, "vulkan opens: %s", why);
	if (!g)
		return test_done();

	for (d = 0; d < FAKE_DEVS; d++) {
		for (st = 0; st < NR_STARTS; st++) {
			pin_and_copy(g, d, st, vmm[d], 100, 3000);
			pin_and_copy(g, d, st, vmm[d], 65536 + 3, 5000);
		}
	}
	CHECK(imports == 2 * FAKE_DEVS * NR_STARTS && wrong_device == 0,
	      "%d of %d imports went to a Vulkan device with another UUID",
	      wrong_device, imports);
	CHECK(fake_live_mems() == live, "every handle given back (%d left)",
	      fake_live_mems() - live);
	/* The owner's context cannot be made current: ENODEV, as
	 * gdr_pin_buffer(3) says, naming the device. */
	fake_ctx_broken[0] = 1;
	pin_refused(g, 0, vmm[0], ENODEV,
		    "no context of CUDA device 0 can be made current");
	fake_ctx_broken[0] = 0;
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}
