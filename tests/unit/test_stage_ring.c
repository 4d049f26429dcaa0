// SPDX-License-Identifier: MIT
/*
 * Where the staged path puts its chunks (lib/paths/dma_stage.h,
 * gdr_stage_place).  Up to GDR_STAGE_BUFS chunks are in flight at once:
 * a chunk placed over one of the GDR_STAGE_BUFS - 1 before it would have
 * the copy engine and the CPUs in the same bytes, and the data would be
 * wrong only when the timing falls that way.  So every placement is
 * checked against those before it, for every chunk size, a copy's shorter
 * last chunk and every place the copy before may have left the ring, in
 * rings of 3-6 chunks of the largest size (the shipped one among them)
 * and in small ones (a copy that started where the last one ended, not
 * at a whole number of its chunks, failed this).  And the point of the
 * ring: chunks of one size land where none of the ring / size - 1 before
 * them lay.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "paths/dma_stage.h"

#define STEP		(64UL << 10)	/* chunks are whole 64 KiB */
#define CHUNK_MAX	(4UL << 20)
#define CHUNKS		13

struct piece {
	size_t at, len;
};

static unsigned long placed, out_of_ring, in_flight_hit, reused_early;

static int overlap(const struct piece *a, const struct piece *b)
{
	return a->at < b->at + b->len && b->at < a->at + a->len;
}

static struct piece place(size_t *at, size_t ring, size_t len)
{
	struct piece p = { gdr_stage_place(at, ring, len), len };

	placed++;
	if ((p.at + len > ring || *at != p.at + len) && !out_of_ring++)
		fprintf(stderr, "ring %zu: %zu bytes at %zu, next at %zu\n",
			ring, len, p.at, *at);
	return p;
}

/* A copy of chunks chunks of len bytes, the last of last, from at. */
static void one_copy(size_t ring, size_t at, size_t len, size_t last,
		     int chunks)
{
	struct piece p[CHUNKS];
	int c, back;

	gdr_stage_start(&at, len);
	for (c = 0; c < chunks; c++) {
		p[c] = place(&at, ring, c == chunks - 1 ? last : len);
		for (back = 1; back < GDR_STAGE_BUFS && back <= c; back++) {
			if (overlap(&p[c], &p[c - back]) && !in_flight_hit++)
				fprintf(stderr,
					"ring %zu: chunk %d (%zu at %zu) over chunk %d\n",
					ring, c, p[c].len, p[c].at, c - back);
		}
	}
}

static void every_copy(size_t ring)
{
	size_t len, last, start;
	int chunks;

	for (len = STEP; len <= ring / GDR_STAGE_BUFS; len += STEP)
		for (start = 0; start <= ring; start += STEP)
			for (last = STEP; last <= len; last += STEP)
				for (chunks = 1; chunks <= CHUNKS; chunks += 3)
					one_copy(ring, start, len, last,
						 chunks);
}

/* Chunks of len, one after the other: each clear of the ring / len - 1
 * before it, the copies' boundaries making no difference. */
static void reuse(size_t ring, size_t len)
{
	struct piece p[64];
	size_t at = 0, apart = ring / len - 1;
	unsigned int c, back;

	for (c = 0; c < 64; c++) {
		p[c] = place(&at, ring, len);
		for (back = 1; back <= apart && back <= c; back++) {
			if (overlap(&p[c], &p[c - back]) && !reused_early++)
				fprintf(stderr,
					"ring %zu: chunk %u (%zu at %zu) over chunk %u\n",
					ring, c, len, p[c].at, c - back);
		}
	}
}

int main(void)
{
	size_t ring, len, start;

	for (ring = GDR_STAGE_BUFS * STEP; ring <= 24 * STEP; ring += STEP)
		every_copy(ring);
	/* Rings of large chunks: every chunk size, from every 64 KiB. */
	for (ring = 3 * CHUNK_MAX; ring <= 6 * CHUNK_MAX; ring += CHUNK_MAX) {
		for (len = STEP; len <= CHUNK_MAX; len += STEP) {
			for (start = 0; start <= ring; start += STEP)
				one_copy(ring, start, len, len, CHUNKS);
			reuse(ring, len);
		}
	}

	CHECK(placed > 100000, "%lu placements tried", placed);
	CHECK(!out_of_ring, "%lu of %lu chunks outside the ring", out_of_ring,
	      placed);
	CHECK(!in_flight_hit, "%lu chunks over one still in flight",
	      in_flight_hit);
	CHECK(!reused_early, "%lu chunks over one placed recently",
	      reused_early);
	return test_done();
}
