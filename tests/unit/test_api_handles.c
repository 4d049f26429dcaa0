// SPDX-License-Identifier: MIT
/*
 * Handle lifetime: double unpin, stale handles after their slot is reused,
 * handles used with the wrong gdr_t, unpin while mapped.
 */
#include <errno.h>

#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR 0x7f0000000000UL

int main(void)
{
	gdr_t g = mock_open_gdr(), g2 = mock_open_gdr();
	gdr_mh_t a, b, c;
	gdr_info_t info;
	char data[8] = "gdrmap!";
	char back[8];
	void *va;

	CHECK(g && g2, "two instances open");
	if (!g || !g2)
		return test_done();

	/* Double unpin */
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 4096, 0, 0, &a), 0);
	CHECK(a.h != 0, "handles are never 0");
	CHECK_RET(gdr_unpin_buffer(g, a), 0);
	CHECK_RET(gdr_unpin_buffer(g, a), EINVAL);

	/* The slot of a is reused by b: a must stay dead. */
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 4096, 0, 0, &b), 0);
	CHECK(a.h != b.h, "a reused slot gets a new handle value");
	CHECK_RET(gdr_get_info(g, a, &info), EINVAL);
	CHECK_RET(gdr_unpin_buffer(g, a), EINVAL);
	CHECK_RET(gdr_get_info(g, b, &info), 0);

	/* A handle belongs to the gdr_t that pinned it. */
	CHECK_RET(gdr_get_info(g2, b, &info), EINVAL);
	CHECK_RET(gdr_map(g2, b, &va, 4096), EINVAL);
	CHECK_RET(gdr_unpin_buffer(g2, b), EINVAL);

	/* Unpin while mapped is refused; the mapping keeps working. */
	CHECK_RET(gdr_map(g, b, &va, 4096), 0);
	CHECK_RET(gdr_map(g, b, &va, 4096), EAGAIN);
	CHECK_RET(gdr_unpin_buffer(g, b), EBUSY);
	CHECK_RET(gdr_copy_to_mapping(b, va, data, sizeof(data)), 0);
	CHECK_RET(gdr_copy_from_mapping(b, back, va, sizeof(back)), 0);
	CHECK(!memcmp(data, back, sizeof(data)), "data survived the EBUSY");
	CHECK_RET(gdr_unmap(g, b, va, 4096), 0);
	CHECK_RET(gdr_unmap(g, b, va, 4096), EINVAL);
	CHECK_RET(gdr_copy_to_mapping(b, va, data, sizeof(data)), EINVAL);
	CHECK_RET(gdr_unpin_buffer(g, b), 0);
	CHECK_RET(gdr_copy_to_mapping(b, va, data, sizeof(data)), EINVAL);

	/* A closed instance's handles are gone too. */
	CHECK_RET(gdr_pin_buffer(g2, GPU_ADDR, 4096, 0, 0, &c), 0);
	CHECK_RET(gdr_map(g2, c, &va, 4096), 0);
	CHECK_RET(gdr_close(g2), 0);
	CHECK_RET(gdr_copy_to_mapping(c, va, data, sizeof(data)), EINVAL);
	CHECK_RET(gdr_get_info(g, c, &info), EINVAL);

	/* Many handles at once, all distinct and all released. */
	{
		enum { N = 3000 };
		static gdr_mh_t many[N];
		int i, ok = 1;

		for (i = 0; i < N && ok; i++)
			ok = !gdr_pin_buffer(g, GPU_ADDR + (unsigned long)i *
					     GPU_PAGE_SIZE, 100, 0, 0,
					     &many[i]);
		CHECK(ok, "%d pins succeed", N);
		for (i = 1; i < N; i++)
			ok &= many[i].h != many[i - 1].h;
		CHECK(ok, "handles are distinct");
		CHECK(atomic_load(&mock_pins) == N, "%d pins outstanding", N);
		for (i = 0; i < N; i += 2)
			ok &= !gdr_unpin_buffer(g, many[i]);
		CHECK(ok, "every other handle unpinned");
	}
	CHECK_RET(gdr_close(g), 0);
	CHECK(atomic_load(&mock_pins) == 0 && atomic_load(&mock_maps) == 0,
	      "close released the rest (%d pins, %d maps left)",
	      atomic_load(&mock_pins), atomic_load(&mock_maps));
	return test_done();
}
