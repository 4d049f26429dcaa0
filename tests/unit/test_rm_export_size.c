// SPDX-License-Identifier: MIT
/*
 * A libcuda (and nvidia.ko) whose dma-buf export argument has another
 * layout than the one the library knows: the argument's size differs,
 * and the library must not read RM handles out of it.
 *  - Seen by gdr_open's probe: the rm backend does not open, and the
 *    reason gives both sizes.
 *  - Seen by a pin: the pin is refused (EPROTO), not served copy-only and
 *    not mapped from misread handles; the message gives both sizes; no
 *    RM object is duplicated.
 *  - Once the layout is the known one again, the same memory maps.
 */
#include "rm_pins.h"

#define OTHER	2600	/* 580's layout less the byte it added, rounded */

int main(void)
{
	struct fake_rm_stats before, st;
	char why[GDR_WHY_LEN], sizes[64];
	CUdeviceptr mem;
	gdr_mh_t mh;
	int err = 0;
	gdr_t g;

	fake_rm_install();
	mem = legacy_alloc(2, 1 << 20);
	snprintf(sizes, sizeof(sizes), "%d bytes, not the %zu", OTHER,
		 sizeof(struct nv_export_dmabuf));

	fake_rm_export_size = OTHER;
	g = gdr_open_backend(&gdr_backend_rm, why, sizeof(why), &err);
	CHECK(g == NULL && err == EPROTO, "no rm backend for a libcuda of another layout (%d)",
	      err);
	CHECK(strstr(why, sizes) != NULL, "the reason gives both sizes: \"%s\"",
	      why);
	if (g)
		gdr_close(g);

	fake_rm_export_size = 0;
	fake_enter_start(START_OWN_PRIMARY, 2);
	g = rm_open();
	if (!g)
		return test_done();
	fake_rm_stats(&before);
	fake_rm_export_size = OTHER;
	CHECK_RET(gdr_pin_buffer(g, mem, 4096, 0, 0, &mh), EPROTO);
	CHECK(strstr(gdrmap_last_error(), sizes) != NULL,
	      "the refusal gives both sizes: \"%s\"", gdrmap_last_error());
	fake_rm_stats(&st);
	CHECK(st.dups_made == before.dups_made && st.dups == 0,
	      "nothing duplicated from a misread argument (%d)",
	      st.dups_made - before.dups_made);

	fake_rm_export_size = sizeof(struct nv_export_dmabuf);
	pin_and_copy(g, 2, START_OWN_PRIMARY, mem, 777, 6000);
	CHECK_RET(gdr_close(g), 0);
	fake_leave_start(START_OWN_PRIMARY, 2);
	/* Devices 0 (gdr_open's first probe) and 2. */
	return rm_done(2);
}
