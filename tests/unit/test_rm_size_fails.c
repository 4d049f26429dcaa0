// SPDX-License-Identifier: MIT
/*
 * RM does not answer the size of a memory object (NV0041_CTRL_CMD_GET_
 * SURFACE_INFO fails): the rm backend falls back to what the exports
 * covered.
 *  - the 64 KiB window around a small suballocated buffer narrows to the
 *    object's pages up to the buffer's last one (only what the caller
 *    asks for is exported, and the object reaches at least that far from
 *    its start), and is still mapped, not copy-only: the buffer moves
 *    both ways, the neighbours in those pages read through it;
 *  - a cuMemAlloc allocation of 1 MiB + 100 bytes maps to the end of its
 *    last page, not of its 1 MiB + 64 KiB object;
 *  - a range the caller asks for that reaches past the allocations into
 *    that free space cannot be mapped: it is pinned copy-only, and its
 *    bytes still move;
 * and nothing is left in the fake RM.
 */
#include "rm_pins.h"

#define WIN	(64UL << 10)
#define NSMALL	24
#define SIZE	((1UL << 20) + 100)

int main(void)
{
	CUdeviceptr small[NSMALL], big, chunk;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), used;
	int inside = 0;
	unsigned char data[64], back[64];
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m;
	int k = 12;
	gdr_t g;

	fake_rm_install();
	fake_enter_start(START_OWN_PRIMARY, 2);
	g = rm_open();
	if (!g)
		return test_done();
	suballocated(2, small, NSMALL, 8);
	big = legacy_alloc(2, SIZE);
	chunk = small[0];
	used = (small[k] + 8 - chunk + page - 1) / page * page;

	fake_rm_size_status = NV_ERR_NOT_SUPPORTED;

	/* The window: the object up to the buffer's page, still mapped. */
	m = rm_pin_map(g, small[k], 8, &mh, &base, &info);
	CHECK(info.va == chunk && info.mapped_size == used,
	      "the window narrows to the object up to the buffer's page: [0x%llx, +%llu), not [0x%llx, +%zu)",
	      (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size,
	      (unsigned long long)chunk, used);
	if (m) {
		rm_both_ways(mh, m, small[k], 8, 21, "the buffer");
		inside = rm_neighbour_reads(mh, base, &info, small, NSMALL,
					    k);
		CHECK(inside > 0, "the window holds %d neighbours", inside);
	}
	rm_unmap_unpin(g, mh, base, info.mapped_size);

	/* A whole allocation: to the end of its last page. */
	m = rm_pin_map(g, big, SIZE, &mh, &base, &info);
	CHECK(info.va == big &&
	      info.mapped_size == (SIZE + page - 1) / page * page,
	      "the window ends at the allocation's last page: +%llu",
	      (unsigned long long)info.mapped_size);
	rm_both_ways(mh, m, big, SIZE, 22, "1 MiB + 100 bytes");
	rm_unmap_unpin(g, mh, base, info.mapped_size);

	/* Asked for free space the object is not known to hold: served
	 * copy-only. */
	CHECK_RET(gdr_pin_buffer(g, chunk, WIN, 0, 0, &mh), 0);
	info = rm_info(g, mh);
	CHECK(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE,
	      "pinned copy-only (type %d)", info.mapping_type);
	CHECK_RET(gdr_map(g, mh, (void **)&base, WIN), 0);
	pattern(data, sizeof(data), 23);
	memset(back, POISON, sizeof(back));
	CHECK(fake_gpu_rw(small[3], back, 8, 1) == 0, "poison");
	CHECK_RET(gdr_copy_to_mapping(mh, base + (small[3] - info.va), data,
				      8), 0);
	CHECK(fake_gpu_rw(small[3], back, 8, 0) == 0 && !memcmp(back, data, 8),
	      "a copy-only write lands in the buffer");
	CHECK_RET(gdr_unmap(g, mh, base, WIN), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);

	fake_rm_size_status = NV_OK;
	CHECK_RET(gdr_close(g), 0);
	fake_leave_start(START_OWN_PRIMARY, 2);
	return rm_done(1);
}
