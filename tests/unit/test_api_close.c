// SPDX-License-Identifier: MIT
/* gdr_close releases every pin and mapping still outstanding. */
#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR 0x7f0000000000UL

int main(void)
{
	gdr_t g = mock_open_gdr();
	gdr_mh_t mh[10];
	void *va;
	int i;

	CHECK(g != NULL, "mock backend opens");
	if (!g)
		return test_done();
	for (i = 0; i < 10; i++) {
		CHECK_RET(gdr_pin_buffer(g, GPU_ADDR + (unsigned long)i * 0x100000,
					 12345, 0, 0, &mh[i]), 0);
		if (i % 2)
			CHECK_RET(gdr_map(g, mh[i], &va, 12345), 0);
	}
	CHECK(atomic_load(&mock_pins) == 10 && atomic_load(&mock_maps) == 5,
	      "10 pins, 5 maps outstanding");
	CHECK_RET(gdr_close(g), 0);
	CHECK(atomic_load(&mock_pins) == 0, "no pin left (%d)",
	      atomic_load(&mock_pins));
	CHECK(atomic_load(&mock_maps) == 0, "no mapping left (%d)",
	      atomic_load(&mock_maps));
	return test_done();
}
