/* SPDX-License-Identifier: MIT */
/*
 * The generic set: portable C, naturally aligned scalar accesses only.
 * It serves device (uncached) mappings, where wider or streaming accesses
 * are not allowed, and any CPU without a better set.
 */
#include <stdint.h>
#include <string.h>

#include "copy.h"
#include "walk.h"

static int generic_supported(void)
{
	return 1;
}

static void generic_to_mapping(void *map_dst, const void *host_src, size_t n)
{
	gdr_walk_to_mapping(map_dst, host_src, n, 8, NULL);
}

/*
 * Each naturally aligned 8-byte word covering [map_src, map_src + n) is
 * loaded exactly once; words lie inside the covering lines, so nothing
 * outside them is touched.  The word's bytes are kept in memory order by
 * copying them out of its in-memory image, whatever the endianness.
 */
static void generic_from_mapping(void *host_dst, const void *map_src, size_t n)
{
	unsigned char *d = host_dst;
	uintptr_t skip = (uintptr_t)map_src & 7;
	const volatile uint64_t *word =
		(const volatile uint64_t *)((uintptr_t)map_src - skip);

	gdr_fence_before_read();
	while (n) {
		uint64_t v = *word++;
		size_t part = 8 - skip;

		if (part > n)
			part = n;
		memcpy(d, (unsigned char *)&v + skip, part);
		d += part;
		n -= part;
		skip = 0;
	}
}

const struct gdr_copy_impl gdr_copy_generic = {
	.name = "generic",
	.supported = generic_supported,
	.to_mapping = generic_to_mapping,
	.from_mapping = generic_from_mapping,
};
