/* SPDX-License-Identifier: MIT */
/*
 * The SSE4.1 set (built with -msse4.1): 16-byte non-temporal stores
 * (MOVNTDQ) for writes; reads load each 64-byte line with four
 * back-to-back streaming loads (MOVNTDQA), which a write-combined line
 * serves from one fill of the streaming-load buffer.
 */
#include <immintrin.h>

#include "copy.h"
#include "cpu.h"
#include "walk.h"

static GDR_COPY_INLINE void sse41_store(unsigned char *map,
					const unsigned char *host, size_t size)
{
	(void)size;	/* the walk's width is 16: never more */
	_mm_stream_si128((void *)map, _mm_loadu_si128((const void *)host));
}

static void sse41_to_mapping(void *map_dst, const void *host_src, size_t n)
{
	gdr_walk_to_mapping(map_dst, host_src, n, 16, sse41_store);
}

static GDR_COPY_INLINE void sse41_line_copy(unsigned char *host,
					    const unsigned char *map_line)
{
	__m128i *line = (__m128i *)(uintptr_t)map_line;
	__m128i a = _mm_stream_load_si128(line);
	__m128i b = _mm_stream_load_si128(line + 1);
	__m128i c = _mm_stream_load_si128(line + 2);
	__m128i d = _mm_stream_load_si128(line + 3);

	_mm_storeu_si128((void *)host, a);
	_mm_storeu_si128((void *)(host + 16), b);
	_mm_storeu_si128((void *)(host + 32), c);
	_mm_storeu_si128((void *)(host + 48), d);
}

void gdr_copy_sse41_from_mapping(void *host_dst, const void *map_src, size_t n)
{
	gdr_walk_from_mapping(host_dst, map_src, n, sse41_line_copy);
}

const struct gdr_copy_impl gdr_copy_sse41 = {
	.name = "sse41",
	.supported = gdr_cpu_has_sse41,
	.to_mapping = sse41_to_mapping,
	.from_mapping = gdr_copy_sse41_from_mapping,
};
