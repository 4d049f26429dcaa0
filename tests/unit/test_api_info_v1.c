// SPDX-License-Identifier: MIT
/*
 * GDRCopy's exported v1 gdr_get_info (looked up with dlsym by NCCL and
 * NVSHMEM) fills exactly the 40-byte v1 struct, with the same values as
 * gdr_get_info_v2.
 */
#include <string.h>

#include "check.h"
#include "mock_backend.h"

#undef gdr_get_info
int gdr_get_info(gdr_t g, gdr_mh_t handle, struct gdr_info_v1 *info);

#define GPU_ADDR 0x7f0000000000UL

int main(void)
{
	gdr_t g = mock_open_gdr();
	unsigned char buf[sizeof(struct gdr_info_v1) + 16];
	struct gdr_info_v1 v1;
	gdr_info_v2_t v2;
	gdr_mh_t mh;
	unsigned int i;
	void *va;
	int ok = 1;

	CHECK(g != NULL, "mock backend opens");
	if (!g)
		return test_done();
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR + 5, 100000, 0, 0, &mh), 0);
	CHECK_RET(gdr_map(g, mh, &va, 100000), 0);
	memset(buf, 0xee, sizeof(buf));
	CHECK_RET(gdr_get_info(g, mh, (struct gdr_info_v1 *)buf), 0);
	for (i = sizeof(struct gdr_info_v1); i < sizeof(buf); i++)
		ok &= buf[i] == 0xee;
	CHECK(ok, "nothing written past the 40-byte v1 struct");
	memcpy(&v1, buf, sizeof(v1));
	CHECK_RET(gdr_get_info_v2(g, mh, &v2), 0);
	CHECK(v1.va == v2.va && v1.mapped_size == v2.mapped_size &&
	      v1.page_size == v2.page_size && v1.mapped == v2.mapped &&
	      v1.wc_mapping == v2.wc_mapping, "v1 and v2 agree");
	CHECK(v1.va == GPU_ADDR && v1.mapped_size == 2 * GPU_PAGE_SIZE &&
	      v1.mapped && v1.wc_mapping, "v1 describes the mapped window");
	CHECK_RET(gdr_get_info(g, mh, NULL), EINVAL);
	CHECK_RET(gdr_unmap(g, mh, va, 100000), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_get_info(g, mh, &v1), EINVAL);
	CHECK_RET(gdr_close(g), 0);
	return test_done();
}
