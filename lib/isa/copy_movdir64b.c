/* SPDX-License-Identifier: MIT */
/*
 * The MOVDIR64B set (built with -mmovdir64b -msse2): whole 64-byte lines
 * written with MOVDIR64B, a direct store of the full line with 64-byte
 * write atomicity: the device sees each line as one write, never split.
 * It always writes all 64 bytes, so it is used only for aligned lines
 * wholly inside the range; the head and tail use 16-byte non-temporal
 * stores and scalars.  MOVDIR64B cannot read, so reads use
 * the SSE4.1 routine (gdr_cpu_has_movdir64b requires SSE4.1 too).
 */
#include <immintrin.h>

#include "copy.h"
#include "cpu.h"
#include "walk.h"

static GDR_COPY_INLINE void movdir64b_store(unsigned char *map,
					    const unsigned char *host,
					    size_t size)
{
	switch (size) {
	case 16:
		_mm_stream_si128((void *)map,
				 _mm_loadu_si128((const void *)host));
		break;
	case 32:
		_mm_stream_si128((void *)map,
				 _mm_loadu_si128((const void *)host));
		_mm_stream_si128((void *)(map + 16),
				 _mm_loadu_si128((const void *)(host + 16)));
		break;
	case 64:
		_movdir64b(map, host);
		break;
	default:
		__builtin_unreachable();
	}
}

static void movdir64b_to_mapping(void *map_dst, const void *host_src, size_t n)
{
	gdr_walk_to_mapping(map_dst, host_src, n, 64, movdir64b_store);
}

const struct gdr_copy_impl gdr_copy_movdir64b = {
	.name = "movdir64b",
	.supported = gdr_cpu_has_movdir64b,
	.to_mapping = movdir64b_to_mapping,
	.from_mapping = gdr_copy_sse41_from_mapping,
};
