// SPDX-License-Identifier: MIT
/*
 * Every region starts on a cache line, in every chunk of the handle
 * table: the fields each copy reads (internal.h: state to map_classes)
 * then lie in one line, for gdr_copy_* and gdrmap_copy_* alike.  With
 * 216-byte regions in a calloc'd chunk, most slots had them across two,
 * and gdrmap_copy_* (which reads small_below too) more often than
 * gdr_copy_*.
 */
#include <stddef.h>
#include <stdint.h>

#include "base/internal.h"
#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR 0x7f0000000000UL
/* Three chunks' worth: the first, and chunks grown later. */
#define N (3 * (int)REGION_CHUNK_SLOTS)

int main(void)
{
	static gdr_mh_t mh[N];
	gdr_t g = mock_open_gdr();
	int i, pinned = 0, aligned = 0, one_line = 0;

	CHECK(g != NULL, "an instance opens");
	if (!g)
		return test_done();
	for (i = 0; i < N; i++) {
		struct gdr_region *r;
		uintptr_t first, last;
		uint64_t s;

		if (gdr_pin_buffer(g, GPU_ADDR + (unsigned long)i *
				   GPU_PAGE_SIZE, 100, 0, 0, &mh[i]))
			break;
		pinned++;
		r = gdr_region_peek(mh[i], &s);
		if (!r)
			continue;
		first = (uintptr_t)&r->state;
		last = (uintptr_t)&r->map_classes[1] +
		       sizeof(r->map_classes[1]) - 1;
		aligned += first % 64 == 0;
		one_line += first / 64 == last / 64;
	}
	CHECK(pinned == N, "%d of %d pins succeed", pinned, N);
	CHECK(aligned == N, "%d of %d regions start on a cache line",
	      aligned, N);
	CHECK(one_line == N,
	      "%d of %d regions have the copies' fields in one line",
	      one_line, N);
	for (i = 0; i < pinned; i++)
		gdr_unpin_buffer(g, mh[i]);
	gdr_close(g);
	return test_done();
}
