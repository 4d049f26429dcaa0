/* SPDX-License-Identifier: MIT */
/*
 * The set for cached, coherent mappings (GPU memory reached over a
 * coherent link, e.g. Grace Hopper's C2C): the CPU caches keep it coherent
 * with the GPU, so plain memcpy is both correct and the fastest; streaming
 * accesses would only bypass caches that are right to use.
 *
 * The fences stay: they are not needed for coherence but for order.  The
 * one after a write keeps the copied data ahead of any later store (the
 * flag that tells the GPU to look); the one before a read keeps its loads
 * from being satisfied ahead of an earlier read on weakly ordered CPUs.
 * Both cost little next to the copy.
 */
#include <string.h>

#include "copy.h"
#include "fence.h"

static int memcpy_supported(void)
{
	return 1;
}

static void memcpy_to_mapping(void *map_dst, const void *host_src, size_t n)
{
	if (n)	/* memcpy's pointers must be valid even for 0 bytes */
		memcpy(map_dst, host_src, n);
	gdr_fence_after_write();
}

static void memcpy_from_mapping(void *host_dst, const void *map_src, size_t n)
{
	gdr_fence_before_read();
	if (n)
		memcpy(host_dst, map_src, n);
}

const struct gdr_copy_impl gdr_copy_memcpy = {
	.name = "memcpy",
	.supported = memcpy_supported,
	.to_mapping = memcpy_to_mapping,
	.from_mapping = memcpy_from_mapping,
};
