/* SPDX-License-Identifier: MIT */
/*
 * How a copy is cut into pieces, shared by every routine set.  Each ISA
 * file includes this header and hands the walks its own primitives; the
 * walks are always inlined, so they are compiled with that file's flags
 * and the primitives fold into straight-line code.
 */
#ifndef GDRMAP_COPY_WALK_H
#define GDRMAP_COPY_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fence.h"

#define GDR_COPY_LINE		64
#define GDR_COPY_INLINE		inline __attribute__((always_inline))

/*
 * Naturally aligned scalar stores into the mapping.  The host side may be
 * unaligned, so it is read with memcpy; the volatile store keeps the
 * compiler from merging, splitting or widening the access.
 */
static GDR_COPY_INLINE void gdr_store1(unsigned char *map,
					const unsigned char *host)
{
	*(volatile uint8_t *)map = *host;
}

static GDR_COPY_INLINE void gdr_store2(unsigned char *map,
					const unsigned char *host)
{
	uint16_t v;

	memcpy(&v, host, sizeof(v));
	*(volatile uint16_t *)(void *)map = v;
}

static GDR_COPY_INLINE void gdr_store4(unsigned char *map,
					const unsigned char *host)
{
	uint32_t v;

	memcpy(&v, host, sizeof(v));
	*(volatile uint32_t *)(void *)map = v;
}

static GDR_COPY_INLINE void gdr_store8(unsigned char *map,
					const unsigned char *host)
{
	uint64_t v;

	memcpy(&v, host, sizeof(v));
	*(volatile uint64_t *)(void *)map = v;
}

/*
 * A vector store of `size` bytes (16, 32 or 64, never more than the walk's
 * width) to a mapping address aligned to `size`, from unaligned host memory.
 * Only called with constant sizes, so its switch folds away.
 */
typedef void gdr_vec_store_fn(unsigned char *map, const unsigned char *host,
			      size_t size);

/*
 * One piece of the head: store `size` bytes if the destination is not yet
 * aligned to 2 * size.  Returns 0 when fewer than `size` bytes are left: the
 * destination is then aligned to `size`, and the tail finishes with smaller
 * pieces, still aligned.
 */
static GDR_COPY_INLINE int gdr_head_piece(unsigned char **d,
					  const unsigned char **s, size_t *n,
					  size_t size, gdr_vec_store_fn *vec)
{
	if (!((uintptr_t)*d & size))
		return 1;
	if (*n < size)
		return 0;
	switch (size) {
	case 1: gdr_store1(*d, *s); break;
	case 2: gdr_store2(*d, *s); break;
	case 4: gdr_store4(*d, *s); break;
	case 8: gdr_store8(*d, *s); break;
	default: vec(*d, *s, size); break;
	}
	*d += size;
	*s += size;
	*n -= size;
	return 1;
}

/*
 * host -> mapping: naturally aligned pieces of 1, 2, 4, ... bytes until the
 * destination is aligned to `width`, then `width`-byte stores (8: scalar,
 * else `vec`), then the tail in decreasing aligned pieces; a store fence
 * last.  Every byte of [map_dst, map_dst + n) is stored once, nothing else.
 *
 * On x86 the vector primitives use non-temporal stores.  On a
 * write-combined mapping plain and non-temporal stores combine alike
 * (both reach ~20 GB/s on the H200:
 * bench/results/h200/2026-11-21-bar1.md); a non-temporal store also stays
 * write-combining if a page ends up cacheable by mistake, where a plain
 * store would first read the line from the device.  Their alignment rule
 * is met by the walk.
 */
static GDR_COPY_INLINE void gdr_walk_to_mapping(void *map_dst,
						const void *host_src, size_t n,
						size_t width,
						gdr_vec_store_fn *vec)
{
	unsigned char *d = map_dst;
	const unsigned char *s = host_src;

	if (gdr_head_piece(&d, &s, &n, 1, vec) &&
	    gdr_head_piece(&d, &s, &n, 2, vec) &&
	    gdr_head_piece(&d, &s, &n, 4, vec) &&
	    (width <= 8 || gdr_head_piece(&d, &s, &n, 8, vec)) &&
	    (width <= 16 || gdr_head_piece(&d, &s, &n, 16, vec)) &&
	    (width <= 32 || gdr_head_piece(&d, &s, &n, 32, vec))) {
		for (; n >= width; d += width, s += width, n -= width) {
			if (width == 8)
				gdr_store8(d, s);
			else
				vec(d, s, width);
		}
	}
	/* n < width here; its bits, largest first, keep d aligned. */
	if (width > 32 && (n & 32)) {
		vec(d, s, 32);
		d += 32;
		s += 32;
	}
	if (width > 16 && (n & 16)) {
		vec(d, s, 16);
		d += 16;
		s += 16;
	}
	if (width > 8 && (n & 8)) {
		gdr_store8(d, s);
		d += 8;
		s += 8;
	}
	if (n & 4) {
		gdr_store4(d, s);
		d += 4;
		s += 4;
	}
	if (n & 2) {
		gdr_store2(d, s);
		d += 2;
		s += 2;
	}
	if (n & 1)
		gdr_store1(d, s);
	gdr_fence_after_write();
}

/*
 * Load the whole 64-byte line at `map_line` (64-byte aligned), each of its
 * bytes exactly once, and store it to `host_dst` (any alignment).
 */
typedef void gdr_line_copy_fn(unsigned char *host_dst,
			      const unsigned char *map_line);

/*
 * mapping -> host, a line at a time: a full fence, then every 64-byte line
 * covering [map_src, map_src + n) is loaded once, whole.  Lines only partly
 * wanted go through a buffer on the stack, from which just the wanted bytes
 * are copied, so the destination gets exactly its n bytes.
 */
static GDR_COPY_INLINE void gdr_walk_from_mapping(void *host_dst,
						  const void *map_src, size_t n,
						  gdr_line_copy_fn *line_copy)
{
	unsigned char *d = host_dst;
	const unsigned char *s = map_src;
	size_t skip = (uintptr_t)s & (GDR_COPY_LINE - 1);
	unsigned char line[GDR_COPY_LINE]
		__attribute__((aligned(GDR_COPY_LINE)));

	gdr_fence_before_read();
	if (!n)
		return;
	if (skip) {
		size_t part = GDR_COPY_LINE - skip;

		if (part > n)
			part = n;
		line_copy(line, s - skip);
		memcpy(d, line + skip, part);
		d += part;
		s += part;
		n -= part;
	}
	for (; n >= GDR_COPY_LINE; d += GDR_COPY_LINE, s += GDR_COPY_LINE,
	     n -= GDR_COPY_LINE)
		line_copy(d, s);
	if (n) {
		line_copy(line, s);
		memcpy(d, line, n);
	}
}

#endif /* GDRMAP_COPY_WALK_H */
