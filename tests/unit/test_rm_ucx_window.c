// SPDX-License-Identifier: MIT
/*
 * The 64 KiB window UCX pins around a small cudaMalloc buffer: CUDA
 * suballocates small buffers from one larger RM object (fake_cuda's
 * chunks), so the window holds the buffer, its neighbours and free space
 * of that object.  The rm backend maps the whole window (not copy-only,
 * not narrowed): the buffer moves both ways through it, each neighbour
 * the GPU writes reads back through it at its own offset, a write through
 * the mapping lands in the right neighbour and nowhere else, and the free
 * space past the allocations is mapped memory of the same object.  One
 * export per allocation-holding page run, one duplicate of the object.
 */
#include "rm_pins.h"

#define WIN	(64UL << 10)
#define NSMALL	24

int main(void)
{
	CUdeviceptr small[NSMALL], start, q;
	struct fake_rm_stats before, st;
	uint64_t v, back, probe;
	unsigned char mark[512];
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m;
	int i, k = 12, bad;
	gdr_t g;

	fake_rm_install();
	/* Opened in device 2's context: gdr_open's probe runs there. */
	fake_enter_start(START_OWN_PRIMARY, 2);
	g = rm_open();
	fake_leave_start(START_OWN_PRIMARY, 2);
	if (!g)
		return test_done();
	/* Small buffers of device 2, carved from one chunk, 512 bytes apart
	 * (cudaMalloc's alignment is 256). */
	fake_suballoc_max = 4096;
	for (i = 0; i < NSMALL; i++)
		small[i] = legacy_alloc(2, 8);
	for (i = 1; i < NSMALL; i++)
		CHECK(small[i] ==
		      small[0] + (CUdeviceptr)i * FAKE_SUBALLOC_ALIGN,
		      "buffer %d suballocated next to the others", i);
	start = small[k] & ~(WIN - 1);

	fake_enter_start(START_OWN_USER, 2);
	fake_rm_stats(&before);
	m = rm_pin_map(g, small[k], 8, &mh, &base, &info);
	fake_rm_stats(&st);
	CHECK(info.va == start && info.mapped_size == WIN,
	      "the whole 64 KiB window is mapped: [0x%llx, +%llu), not [0x%llx, +%lu)",
	      (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size,
	      (unsigned long long)start, WIN);
	CHECK(st.dups_made == before.dups_made + 1,
	      "one object behind the window, duplicated once (%d)",
	      st.dups_made - before.dups_made);
	if (!m)
		goto out;

	/* The buffer itself. */
	rm_both_ways(mh, m, small[k], 8, 3, "the 8-byte buffer");

	/* Every neighbour in the window reads through it at its offset. */
	for (i = 0; i < NSMALL; i++) {
		q = small[i];
		v = 0x0123456789abcdefULL ^ ((uint64_t)i * 0x1111);
		back = 0;
		CHECK(fake_gpu_rw(q, &v, 8, 1) == 0, "GPU writes neighbour %d",
		      i);
		CHECK_RET(gdr_copy_from_mapping(mh, &back, base + (q - info.va),
						8), 0);
		CHECK(back == v, "neighbour %d at +0x%llx reads through the window (0x%llx)",
		      i, (unsigned long long)(q - info.va),
		      (unsigned long long)back);
	}

	/* A write through the window lands in neighbour 5 and nowhere else
	 * (every byte of its 512-byte stretch of the chunk checked). */
	q = small[5];
	memset(mark, POISON, sizeof(mark));
	CHECK(fake_gpu_rw(q - 512, mark, sizeof(mark), 1) == 0 &&
	      fake_gpu_rw(q, mark, sizeof(mark), 1) == 0, "poison");
	v = 0xfeedfacecafebeefULL;
	CHECK_RET(gdr_copy_to_mapping(mh, base + (q - info.va), &v, 8), 0);
	memset(mark, 0, sizeof(mark));
	CHECK(fake_gpu_rw(q, mark, sizeof(mark), 0) == 0, "read back");
	bad = memcmp(mark, &v, 8) != 0;
	for (i = 8; i < (int)sizeof(mark); i++)
		bad += mark[i] != POISON;
	CHECK(fake_gpu_rw(q - 512, mark, sizeof(mark), 0) == 0, "read before");
	for (i = 0; i < (int)sizeof(mark); i++)
		bad += mark[i] != POISON;
	CHECK(bad == 0, "%d bytes wrong around neighbour 5 after writing it through the window",
	      bad);

	/* The free space past the allocations is mapped memory of the same
	 * object: what is written there reads back, and the GPU sees it in
	 * the chunk (read on from the last allocation). */
	probe = 0x5ca1ab1e00000000ULL | (uint64_t)(WIN - 4096);
	CHECK_RET(gdr_copy_to_mapping(mh, base + WIN - 4096, &probe, 8), 0);
	back = 0;
	{
		size_t at = info.va + WIN - 4096 - small[NSMALL - 1];
		unsigned char *view = malloc(at + 8);

		CHECK(view && fake_gpu_rw(small[NSMALL - 1], view, at + 8,
					  0) == 0, "GPU view of free space");
		if (view)
			memcpy(&back, view + at, 8);
		free(view);
	}
	CHECK(back == probe, "free space of the object: the GPU holds 0x%llx where the mapping wrote 0x%llx",
	      (unsigned long long)back, (unsigned long long)probe);
out:
	rm_unmap_unpin(g, mh, base, info.mapped_size);
	fake_leave_start(START_OWN_USER, 2);
	for (i = 0; i < NSMALL; i++) {
		fake_ctx_create(2, 2);
		CHECK(fake_MemFree(small[i]) == CUDA_SUCCESS, "free %d", i);
	}
	fake_cur = NULL;
	CHECK_RET(gdr_close(g), 0);
	return rm_done(1);
}
