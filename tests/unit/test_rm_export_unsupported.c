// SPDX-License-Identifier: MIT
/*
 * A GPU whose memory CUDA does not export as a dma-buf (fake_cuda's
 * device 1: cuMemGetHandleForAddressRange answers NOT_SUPPORTED) gives
 * the rm backend no way to learn the RM objects behind its memory:
 *  - gdr_open's probe on that device fails, and the reason is the probe's
 *    own (CUDA's answer), not an older message of the thread;
 *  - opened on another device, a pin of that device's memory is refused
 *    with ENOTSUP, naming the device and CUDA's answer;
 *  - the other devices' memory maps.
 * Nothing is left in the fake RM.
 */
#include "rm_pins.h"

#define SIZE	(1UL << 20)

int main(void)
{
	char why[GDR_WHY_LEN];
	CUdeviceptr mem[2];
	int err = 0;
	gdr_t g;

	fake_rm_install();
	fake_dmabuf_supported[1] = 0;
	mem[0] = legacy_alloc(0, SIZE);
	mem[1] = legacy_alloc(1, SIZE);

	/* An earlier failure of this thread must not become the reason. */
	CHECK_RET(gdr_pin_buffer(NULL, 0, 0, 0, 0, NULL), EINVAL);
	fake_enter_start(START_OWN_PRIMARY, 1);
	g = gdr_open_backend(&gdr_backend_rm, why, sizeof(why), &err);
	fake_leave_start(START_OWN_PRIMARY, 1);
	CHECK(g == NULL && err == ENOTSUP, "no rm backend on device 1 (%d)",
	      err);
	CHECK(strstr(why, "CUDA_ERROR_NOT_SUPPORTED") &&
	      strstr(why, "dma-buf"),
	      "the reason is CUDA's refusal to export: \"%s\"", why);
	if (g)
		gdr_close(g);

	g = rm_open();
	if (!g)
		return test_done();
	pin_refused(g, 1, mem[1], ENOTSUP, "CUDA device 1");
	CHECK(strstr(gdrmap_last_error(), "CUDA_ERROR_NOT_SUPPORTED") != NULL,
	      "the refusal says why: \"%s\"", gdrmap_last_error());
	pin_and_copy(g, 0, START_NONE, mem[0], 12345, 4000);
	CHECK_RET(gdr_close(g), 0);
	/* Devices 1 (the refused probe got that far) and 0. */
	return rm_done(2);
}
