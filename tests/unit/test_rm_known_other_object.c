// SPDX-License-Identifier: MIT
/*
 * Only allocations inside a known RM object vouch for it
 * (lib/backends/rm_known.c): a buffer at the end of one chunk has its
 * next neighbour in the chunk that follows, another object, which may
 * live on when the first chunk is freed.  Were that neighbour a witness,
 * the freed chunk's remembered handle would be trusted on its word, and
 * freed memory's addresses and handles come back (as in
 * test_rm_known_reuse).  Here:
 *  - chunk A ends with an 8-byte buffer; chunk B starts right after it,
 *    and lives throughout;
 *  - the pin of A's last buffer exports (A remembered);
 *  - A freed, a new chunk takes A's addresses and a third object A's RM
 *    handle, as big;
 *  - a pin of a buffer of the new chunk must export and map the new
 *    chunk: every byte checked both ways.
 */
#include "rm_pins.h"

int main(void)
{
	CUdeviceptr fill, last, next, b, c;
	uint32_t handle;
	int n;
	gdr_t g;

	g = rm_start_counting();
	if (!g)
		return test_done();

	handle = fake_next_rm_handle;
	fake_suballoc_max = FAKE_GRAN;
	fill = legacy_alloc(1, FAKE_GRAN - FAKE_SUBALLOC_ALIGN);
	last = legacy_alloc(1, 8);
	fake_suballoc_max = 0;
	CHECK(fill % FAKE_GRAN == 0 &&
	      last == fill + FAKE_GRAN - FAKE_SUBALLOC_ALIGN,
	      "the 8-byte buffer ends chunk A (0x%llx, 0x%llx)",
	      (unsigned long long)fill, (unsigned long long)last);
	fake_va_reuse = fill + FAKE_GRAN;
	next = legacy_alloc(1, FAKE_GRAN);
	CHECK(next == fill + FAKE_GRAN, "chunk B starts where A ends");

	n = rm_pin_check8(g, last, 41, "the last buffer of chunk A");
	CHECK(n == 1, "the first pin in chunk A exports: %d", n);

	CHECK(fake_MemFree(fill) == CUDA_SUCCESS, "free A's first buffer");
	CHECK(fake_MemFree(last) == CUDA_SUCCESS, "free A's last buffer");
	fake_va_reuse = fill;
	fake_suballoc_max = 4096;
	b = legacy_alloc(1, 8);
	fake_suballoc_max = 0;
	fake_next_rm_handle = handle;
	c = legacy_alloc(1, FAKE_GRAN);	/* its own object, as big as A */
	fake_next_rm_handle = handle + 0x1000;
	CHECK(b == fill, "a new chunk took A's addresses");
	CHECK(c != 0, "a third object took A's handle");

	n = rm_pin_check8(g, b, 42, "a buffer of the chunk at A's addresses");
	CHECK(n == 1, "chunk B's buffer does not vouch for A: %d exports", n);

	CHECK(fake_MemFree(b) == CUDA_SUCCESS, "free the new buffer");
	CHECK(fake_MemFree(c) == CUDA_SUCCESS, "free the third object");
	CHECK(fake_MemFree(next) == CUDA_SUCCESS, "free chunk B");
	return rm_stop_counting(g);
}
