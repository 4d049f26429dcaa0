/* SPDX-License-Identifier: MIT */
/*
 * The AVX-512 set (built with -mavx512f -mavx512bw -mavx512vl): a whole
 * 64-byte line per instruction both ways, a non-temporal store
 * (VMOVNTDQ zmm) for writes and one streaming load (VMOVNTDQA zmm) for
 * reads, so a line is one request on the bus.
 */
#include <immintrin.h>

#include "copy.h"
#include "cpu.h"
#include "walk.h"

static GDR_COPY_INLINE void avx512_store(unsigned char *map,
					 const unsigned char *host, size_t size)
{
	switch (size) {
	case 16:
		_mm_stream_si128((void *)map,
				 _mm_loadu_si128((const void *)host));
		break;
	case 32:
		_mm256_stream_si256((void *)map,
				    _mm256_loadu_si256((const void *)host));
		break;
	case 64:
		_mm512_stream_si512((void *)map,
				    _mm512_loadu_si512((const void *)host));
		break;
	default:
		__builtin_unreachable();
	}
}

static void avx512_to_mapping(void *map_dst, const void *host_src, size_t n)
{
	gdr_walk_to_mapping(map_dst, host_src, n, 64, avx512_store);
}

static GDR_COPY_INLINE void avx512_line_copy(unsigned char *host,
					     const unsigned char *map_line)
{
	__m512i line = _mm512_stream_load_si512((void *)(uintptr_t)map_line);

	_mm512_storeu_si512((void *)host, line);
}

static void avx512_from_mapping(void *host_dst, const void *map_src, size_t n)
{
	gdr_walk_from_mapping(host_dst, map_src, n, avx512_line_copy);
}

const struct gdr_copy_impl gdr_copy_avx512 = {
	.name = "avx512",
	.supported = gdr_cpu_has_avx512,
	.to_mapping = avx512_to_mapping,
	.from_mapping = avx512_from_mapping,
};
