// SPDX-License-Identifier: MIT
/*
 * The rm backend exports (cuMemGetHandleForAddressRange) only the
 * allocations that hold bytes the caller asked to pin, never the rest of
 * the 64 KiB window: other threads' buffers there may be freed while
 * the export runs, and NVIDIA's libcuda then dereferences NULL inside
 * the export (seen on an H200, driver 580.159.04, 3 crashes in 16 runs
 * of test_gpu_rm_threads).  On 24 small buffers suballocated from one
 * chunk:
 *  - a pin of one buffer exports only that buffer's page; its window
 *    still reaches over the chunk from RM's size of the object, so the
 *    neighbours read through it;
 *  - a pin of the whole 64 KiB window (UCX's) costs one export: once
 *    the object is known, the other buffers' pages are covered from it;
 *  - every export's range lies within the pages of an allocation the
 *    pin asked for;
 *  - a buffer of several pages whose first and last pages it shares
 *    with small neighbours exports only its whole pages, and maps and
 *    moves every byte, the shared pages covered from the object;
 *  - an object found by one pin serves the next pins inside it with no
 *    export at all (lib/backends/rm_known.h) while the allocation it was
 *    found with lives, or one of the last buffers pinned through it (its
 *    witnesses): the second and third buffer and the window export
 *    nothing, nor a pin after the first witness is freed; once every
 *    witness is freed, the next pin exports again, and its buffer is the
 *    new witness.
 */
#include "rm_pins.h"

#define NSMALL	24
#define WIN	(64UL << 10)

static CUdeviceptr small[NSMALL];	/* 0: freed */
static int nfreed;
static CUdeviceptr asked_lo, asked_hi;
static size_t page;
static int exports, outside;
/* When set, the one range every export must lie in. */
static CUdeviceptr only_lo, only_hi;

/* The fake's export hook: is [va, +len) within the pages of a buffer
 * holding asked-for bytes? */
static void seen_export(CUdeviceptr va, uint64_t len)
{
	int i;

	exports++;
	if (only_hi) {
		if (va >= only_lo && va + len <= only_hi)
			return;
		i = NSMALL;
	}
	for (i = 0; i < NSMALL && !only_hi; i++) {
		CUdeviceptr lo = small[i] & ~(CUdeviceptr)(page - 1);
		CUdeviceptr hi = (small[i] + 8 + page - 1) &
				 ~(CUdeviceptr)(page - 1);

		if (small[i] < asked_hi && small[i] + 8 > asked_lo &&
		    va >= lo && va + len <= hi)
			return;
	}
	outside++;
	fprintf(stderr, "export of [0x%llx, +%llu) holds no asked-for buffer's page alone\n",
		(unsigned long long)va, (unsigned long long)len);
}

/* Pin and map [va, +n) counting the exports: one, none beyond the
 * asked-for pages (what names the pin in the message). */
static char *pin_counted(gdr_t g, CUdeviceptr va, size_t n, gdr_mh_t *mh,
			 char **base, gdr_info_t *info, int want,
			 const char *what)
{
	char *m;

	exports = outside = 0;
	m = rm_pin_map(g, va, n, mh, base, info);
	CHECK(exports == want && outside == 0,
	      "a pin of %s: %d exports (want %d), %d beyond its asked-for pages",
	      what, exports, want, outside);
	return m;
}

/* Pin buffer k (want: the exports it should make), check it and its
 * neighbours through the mapping. */
static void pin_one(gdr_t g, int k, int want)
{
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m, what[32];
	int inside = 0;

	asked_lo = small[k];
	asked_hi = small[k] + 8;
	snprintf(what, sizeof(what), "buffer %d", k);
	m = pin_counted(g, small[k], 8, &mh, &base, &info, want, what);
	if (m) {
		rm_both_ways(mh, m, small[k], 8, 30 + k, "the buffer");
		inside = rm_neighbour_reads(mh, base, &info, small, NSMALL,
					    k);
	}
	CHECK(inside == NSMALL - 1 - nfreed,
	      "the window of buffer %d holds %d of its %d neighbours", k,
	      inside, NSMALL - 1 - nfreed);
	rm_unmap_unpin(g, mh, base, info.mapped_size);
}

/* 8 bytes, 3 pages + 100 bytes, 8 bytes, side by side after the small
 * buffers, in their chunk, which no pin has found yet: the big one shares
 * its first and last pages.  The big one is returned, still allocated:
 * the witness of the chunk's object. */
static CUdeviceptr whole_pages(gdr_t g)
{
	const size_t big_n = 3 * page + 100;
	CUdeviceptr before, big, after;
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m;

	fake_suballoc_max = 64 << 10;
	before = legacy_alloc(1, 8);
	big = legacy_alloc(1, big_n);
	after = legacy_alloc(1, 8);
	fake_suballoc_max = 0;
	CHECK(before < big && big % page && big + big_n < after &&
	      after / page == (big + big_n) / page,
	      "the big buffer shares its first and last pages");
	only_lo = (big + page - 1) & ~(CUdeviceptr)(page - 1);
	only_hi = (big + big_n) & ~(CUdeviceptr)(page - 1);
	m = pin_counted(g, big, big_n, &mh, &base, &info, 1,
			"3 pages + 100 bytes (its whole pages only)");
	if (m)
		rm_both_ways(mh, m, big, big_n, 91, "3 pages + 100 bytes");
	rm_unmap_unpin(g, mh, base, info.mapped_size);
	only_lo = only_hi = 0;
	return big;
}

int main(void)
{
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m;
	static const int gone[4] = { 0, 12, NSMALL - 1, 5 };
	CUdeviceptr win, witness;
	int k;
	gdr_t g;

	page = (size_t)sysconf(_SC_PAGESIZE);
	fake_rm_install();
	fake_enter_start(START_OWN_PRIMARY, 1);
	g = rm_open();
	if (!g)
		return test_done();
	suballocated(1, small, NSMALL, 8);
	fake_rm_after_export = seen_export;

	/* The first pin in the chunk exports (its whole pages); the next
	 * ones find the object it found. */
	witness = whole_pages(g);
	pin_one(g, 0, 0);
	pin_one(g, 12, 0);
	pin_one(g, NSMALL - 1, 0);

	/* UCX's window over all of them: asked for, exported once. */
	win = small[0] & ~(CUdeviceptr)(WIN - 1);
	CHECK(small[NSMALL - 1] + 8 <= win + WIN, "one window holds them");
	asked_lo = win;
	asked_hi = win + WIN;
	m = pin_counted(g, win, WIN, &mh, &base, &info, 0, "the window");
	if (m)
		rm_both_ways(mh, m + (small[5] - win), small[5], 8, 77,
			     "buffer 5 in the window");
	rm_unmap_unpin(g, mh, base, info.mapped_size);

	/* The first witness freed: the buffers pinned since are witnesses
	 * too.  All of them freed: the object is not trusted on its word;
	 * exported again, buffer 3 the new witness. */
	CHECK(fake_MemFree(witness) == CUDA_SUCCESS, "free the first witness");
	pin_one(g, 5, 0);
	for (k = 0; k < 4; k++) {
		CHECK(fake_MemFree(small[gone[k]]) == CUDA_SUCCESS,
		      "free buffer %d", gone[k]);
		small[gone[k]] = 0;
		nfreed++;
	}
	pin_one(g, 3, 1);
	pin_one(g, 7, 0);

	fake_rm_after_export = NULL;
	CHECK_RET(gdr_close(g), 0);
	fake_leave_start(START_OWN_PRIMARY, 1);
	return rm_done(1);
}
