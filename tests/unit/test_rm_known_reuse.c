// SPDX-License-Identifier: MIT
/*
 * An RM object an earlier pin found is used again without an export only
 * while the allocation it was found with lives (lib/backends/rm_known.h).
 * Freed memory's addresses and handles come back: here a chunk of small
 * cudaMalloc buffers is pinned (its object remembered), all its buffers
 * are freed, and then
 *  - a new chunk takes the freed chunk's addresses, and
 *  - another chunk, elsewhere, takes the freed chunk's RM handle,
 * so that the remembered handle duplicates again, as big as before, but
 * names memory at other addresses.  A pin of a buffer of the new chunk
 * must export and map the new chunk: what the CPU writes through the
 * mapping is on the GPU in that buffer, and what the GPU wrote there is
 * what the CPU reads.  A remembered object used on its handle's word
 * would move the bytes to and from the other chunk instead.
 */
#include "rm_pins.h"

#define NBUF	4

int main(void)
{
	CUdeviceptr a[NBUF], b, c;
	uint32_t handle;
	int i, n;
	gdr_t g;

	g = rm_start_counting();
	if (!g)
		return test_done();

	handle = fake_next_rm_handle;
	suballocated(1, a, NBUF, 8);
	n = rm_pin_check8(g, a[1], 11, "a buffer of the first chunk");
	CHECK(n == 1, "the first pin in a chunk exports: %d", n);
	n = rm_pin_check8(g, a[2], 12, "another buffer of the first chunk");
	CHECK(n == 0, "the next pin in it uses the object found: %d exports",
	      n);

	/* The first chunk gone; its addresses to a new chunk, its handle
	 * to a third one elsewhere. */
	for (i = 0; i < NBUF; i++)
		CHECK(fake_MemFree(a[i]) == CUDA_SUCCESS, "free buffer %d", i);
	fake_va_reuse = a[0];
	fake_suballoc_max = 4096;
	b = legacy_alloc(1, 8);
	fake_suballoc_max = 0;
	fake_next_rm_handle = handle;
	c = legacy_alloc(1, FAKE_GRAN);	/* its own object, as big */
	fake_next_rm_handle = handle + 0x1000;
	CHECK(b == a[0], "the new chunk took the old addresses (0x%llx, 0x%llx)",
	      (unsigned long long)b, (unsigned long long)a[0]);
	CHECK(c != 0, "the third chunk was made");

	n = rm_pin_check8(g, b, 13, "a buffer of the chunk at the old addresses");
	CHECK(n == 1, "a pin in it exports, the old object not trusted: %d",
	      n);
	n = rm_pin_check8(g, b, 14, "the same buffer again");
	CHECK(n == 0, "and the new object is remembered: %d exports", n);

	CHECK(fake_MemFree(b) == CUDA_SUCCESS, "free the new buffer");
	CHECK(fake_MemFree(c) == CUDA_SUCCESS, "free the third chunk");
	return rm_stop_counting(g);
}
