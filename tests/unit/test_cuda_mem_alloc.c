// SPDX-License-Identifier: MIT
/*
 * gdrmap_mem_alloc and gdrmap_mem_free on a fake CUDA of several devices,
 * from every starting context: the memory lands on the device asked for,
 * is freed whatever context the freeing thread has, every CUDA call runs
 * in a context of the owner, and the caller's context is kept.
 */
#include "owner_pins.h"

int main(void)
{
	unsigned long p[FAKE_DEVS][NR_STARTS];
	int d, st, live;

	gdr_cuda_use_syms(&fake_syms);
	live = fake_live_mems();
	for (d = 0; d < FAKE_DEVS; d++) {
		for (st = 0; st < NR_STARTS; st++) {
			p[d][st] = 0;
			fake_enter_start(st, d);
			LIB(gdrmap_mem_alloc(d, 3 << 20, &p[d][st]), 0);
			CHECK(p[d][st] && fake_owner(p[d][st]) == d,
			      "allocated on device %d from %s (owner %d)", d,
			      fake_start_names[st], fake_owner(p[d][st]));
			fake_leave_start(st, d);
		}
	}
	CHECK(fake_live_mems() == live + FAKE_DEVS * NR_STARTS,
	      "one allocation each");
	/* Freed from another start than it was allocated from. */
	for (d = 0; d < FAKE_DEVS; d++) {
		for (st = 0; st < NR_STARTS; st++) {
			fake_enter_start((st + 3) % NR_STARTS, d);
			LIB(gdrmap_mem_free(p[d][st]), 0);
			fake_leave_start((st + 3) % NR_STARTS, d);
		}
	}
	CHECK(fake_live_mems() == live, "%d allocations left behind",
	      fake_live_mems() - live);

	fake_enter_start(START_OTHER_USER, 0);
	LIB(gdrmap_mem_alloc(FAKE_DEVS, 4096, &p[0][0]), ENODEV);
	CHECK(strstr(gdrmap_last_error(), "no CUDA device 3") != NULL,
	      "names the missing device: %s", gdrmap_last_error());
	/* A CUDA failure other than running out of memory is EINVAL, as
	 * gdrmap_mem_alloc(3) says, naming the call; out of memory is
	 * ENOMEM; neither leaves an allocation behind. */
	live = fake_live_mems();
	fake_set_access_fails = CUDA_ERROR_NOT_PERMITTED;
	LIB(gdrmap_mem_alloc(0, 4096, &p[0][0]), EINVAL);
	CHECK(strstr(gdrmap_last_error(), "cuMemSetAccess") != NULL,
	      "names the CUDA call that failed: %s", gdrmap_last_error());
	fake_set_access_fails = CUDA_ERROR_OUT_OF_MEMORY;
	LIB(gdrmap_mem_alloc(0, 4096, &p[0][0]), ENOMEM);
	fake_set_access_fails = CUDA_SUCCESS;
	CHECK(fake_live_mems() == live, "%d allocations left behind after failures",
	      fake_live_mems() - live);
	LIB(gdrmap_mem_free(0x1234), EINVAL);
	CHECK(strstr(gdrmap_last_error(), "not an address returned by gdrmap_mem_alloc") != NULL,
	      "explains an unknown address: %s", gdrmap_last_error());
	fake_leave_start(START_OTHER_USER, 0);

	return owner_done();
}
