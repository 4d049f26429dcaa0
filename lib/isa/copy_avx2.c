/* SPDX-License-Identifier: MIT */
/*
 * The AVX2 set (built with -mavx2): 32-byte non-temporal stores for
 * writes, two 32-byte streaming loads (VMOVNTDQA) per 64-byte line for
 * reads.
 */
#include <immintrin.h>

#include "copy.h"
#include "cpu.h"
#include "walk.h"

static GDR_COPY_INLINE void avx2_store(unsigned char *map,
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
	default:
		__builtin_unreachable();
	}
}

static void avx2_to_mapping(void *map_dst, const void *host_src, size_t n)
{
	gdr_walk_to_mapping(map_dst, host_src, n, 32, avx2_store);
}

static GDR_COPY_INLINE void avx2_line_copy(unsigned char *host,
					   const unsigned char *map_line)
{
	const __m256i *line = (const void *)map_line;
	__m256i lo = _mm256_stream_load_si256(line);
	__m256i hi = _mm256_stream_load_si256(line + 1);

	_mm256_storeu_si256((void *)host, lo);
	_mm256_storeu_si256((void *)(host + 32), hi);
}

static void avx2_from_mapping(void *host_dst, const void *map_src, size_t n)
{
	gdr_walk_from_mapping(host_dst, map_src, n, avx2_line_copy);
}

const struct gdr_copy_impl gdr_copy_avx2 = {
	.name = "avx2",
	.supported = gdr_cpu_has_avx2,
	.to_mapping = avx2_to_mapping,
	.from_mapping = avx2_from_mapping,
};
