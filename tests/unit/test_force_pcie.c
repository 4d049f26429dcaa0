// SPDX-License-Identifier: MIT
/*
 * GDR_PIN_FLAG_FORCE_PCIE, the same answer from every module-free backend
 * (lib/backends/force_pcie.c) on GPUs without a coherent link, as the fake's
 * are: the pin is refused with EOPNOTSUPP and a reason that says why, nothing
 * is left pinned, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE is 0 (dmabuf:
 * 1, as GDRCopy's library reports in dma-buf mode), and the same memory
 * pins without the flag.
 */
#include "fake_vulkan.h"
#include "rm_pins.h"

static void one_backend(const struct gdr_backend *b, CUdeviceptr p,
			int want_attr)
{
	char why[GDR_WHY_LEN];
	int err = 0, attr = -1;
	gdr_mh_t mh;
	gdr_t g;

	g = gdr_open_backend(b, why, sizeof(why), &err);
	CHECK(g != NULL, "the %s backend opens on the fake: %s", b->name, why);
	if (!g)
		return;
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE,
				    &attr), 0);
	CHECK(attr == want_attr, "%s: GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE %d, want %d",
	      b->name, attr, want_attr);
	memset(&mh, 0xa5, sizeof(mh));
	CHECK_RET(gdr_pin_buffer_v2(g, p, 4096, GDR_PIN_FLAG_FORCE_PCIE, &mh),
		  EOPNOTSUPP);
	CHECK(strstr(gdrmap_last_error(), "no coherent link") &&
	      strstr(gdrmap_last_error(), "pin without it"),
	      "%s: the refusal says why and what to do: %s", b->name,
	      gdrmap_last_error());
	CHECK_RET(gdr_pin_buffer_v2(g, p, 4096, GDR_PIN_FLAG_DEFAULT, &mh), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_close(g), 0);
}

int main(void)
{
	unsigned long vmm = 0;
	CUdeviceptr legacy;

	fake_rm_install();
	CHECK_RET(gdrmap_mem_alloc(0, 4 << 20, &vmm), 0);
	legacy = legacy_alloc(0, 1 << 20);
	fake_enter_start(START_OWN_PRIMARY, 0);
	one_backend(&gdr_backend_rm, legacy, 0);
	one_backend(&gdr_backend_dmabuf, vmm, 1);
	one_backend(&gdr_backend_vulkan, vmm, 0);
	fake_leave_start(START_OWN_PRIMARY, 0);
	return test_done();
}
