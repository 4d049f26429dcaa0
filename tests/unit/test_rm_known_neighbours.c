// SPDX-License-Identifier: MIT
/*
 * An RM object found by an export is vouched for by the allocations that
 * lay beside the pinned buffer and at the object's first byte, not only
 * by the buffers pinned (lib/backends/rm_known.h): a program that pins a
 * fresh buffer each time and frees the last one keeps finding its chunk
 * with no export while a neighbour lives.  Eight small buffers of one
 * chunk:
 *  - a pin of buffer 5 exports;
 *  - buffer 5 freed, a pin of a fresh buffer exports nothing (buffers 4
 *    and 6 vouch);
 *  - buffers 4 and 6 and that one freed too, a pin of another fresh one
 *    exports nothing (buffer 0, at the chunk's first byte, vouches);
 *  - that one freed, a pin of the next fresh one exports nothing: the
 *    witnesses found dead gave their places to the pinned buffers, and
 *    buffer 0 stays one;
 *  - buffer 0 freed as well, no witness lives: the next pin exports.
 * Every pin moves its bytes both ways and each is checked.
 */
#include "rm_pins.h"

#define NBUF	8

/* A fresh 8-byte buffer in the chunk of the buffers a. */
static CUdeviceptr fresh(const CUdeviceptr *a)
{
	CUdeviceptr p;

	fake_suballoc_max = 4096;
	p = legacy_alloc(1, 8);
	fake_suballoc_max = 0;
	CHECK(p / FAKE_GRAN == a[0] / FAKE_GRAN,
	      "the fresh buffer 0x%llx is in the chunk of 0x%llx",
	      (unsigned long long)p, (unsigned long long)a[0]);
	return p;
}

static void free_buf(CUdeviceptr *p, const char *what)
{
	CHECK(fake_MemFree(*p) == CUDA_SUCCESS, "free %s", what);
	*p = 0;
}

int main(void)
{
	CUdeviceptr a[NBUF], y, z, v, w;
	int i, n;
	gdr_t g;

	g = rm_start_counting();
	if (!g)
		return test_done();

	suballocated(1, a, NBUF, 8);
	CHECK(a[0] % FAKE_GRAN == 0, "buffer 0 starts the chunk");
	n = rm_pin_check8(g, a[5], 21, "buffer 5");
	CHECK(n == 1, "the first pin in the chunk exports: %d", n);

	free_buf(&a[5], "buffer 5");
	y = fresh(a);
	n = rm_pin_check8(g, y, 22, "a fresh buffer");
	CHECK(n == 0, "buffer 5 freed, its neighbours vouch for the chunk: %d exports",
	      n);

	free_buf(&a[4], "buffer 4");
	free_buf(&a[6], "buffer 6");
	free_buf(&y, "the fresh buffer");
	z = fresh(a);
	n = rm_pin_check8(g, z, 23, "another fresh buffer");
	CHECK(n == 0, "the buffer at the chunk's first byte vouches: %d exports",
	      n);

	/* The pin of z found three witnesses dead: z took a dead one's
	 * place, not buffer 0's. */
	free_buf(&z, "the second fresh buffer");
	v = fresh(a);
	n = rm_pin_check8(g, v, 25, "a fresh buffer after it");
	CHECK(n == 0, "buffer 0 still vouches: %d exports", n);

	free_buf(&v, "the fourth fresh buffer");
	free_buf(&a[0], "buffer 0");
	w = fresh(a + 1);
	n = rm_pin_check8(g, w, 24, "a third fresh buffer");
	CHECK(n == 1, "no witness lives: the pin exports (%d)", n);

	free_buf(&w, "the third fresh buffer");
	for (i = 0; i < NBUF; i++)
		if (a[i])
			free_buf(&a[i], "a buffer");
	return rm_stop_counting(g);
}
