/* SPDX-License-Identifier: MIT */
/*
 * The NEON set for arm64: write-combined mappings there are Normal
 * non-cacheable memory.  Writes use 16-byte stores up to a 64-byte
 * boundary, then whole lines as one four-register store (ST1); reads load
 * each line with one four-register load (LD1), after `dmb osh`, and end
 * writes with `dmb oshst` (fence.h).
 */
#include <arm_neon.h>

#include "copy.h"
#include "cpu.h"
#include "walk.h"

static GDR_COPY_INLINE void neon_store(unsigned char *map,
				       const unsigned char *host, size_t size)
{
	switch (size) {
	case 16:
		vst1q_u8(map, vld1q_u8(host));
		break;
	case 32:
		vst1q_u8_x2(map, vld1q_u8_x2(host));
		break;
	case 64:
		vst1q_u8_x4(map, vld1q_u8_x4(host));
		break;
	default:
		__builtin_unreachable();
	}
}

static void neon_to_mapping(void *map_dst, const void *host_src, size_t n)
{
	gdr_walk_to_mapping(map_dst, host_src, n, 64, neon_store);
}

static GDR_COPY_INLINE void neon_line_copy(unsigned char *host,
					   const unsigned char *map_line)
{
	vst1q_u8_x4(host, vld1q_u8_x4(map_line));
}

static void neon_from_mapping(void *host_dst, const void *map_src, size_t n)
{
	gdr_walk_from_mapping(host_dst, map_src, n, neon_line_copy);
}

const struct gdr_copy_impl gdr_copy_neon = {
	.name = "neon",
	.supported = gdr_cpu_has_neon,
	.to_mapping = neon_to_mapping,
	.from_mapping = neon_from_mapping,
};
