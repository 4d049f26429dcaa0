// SPDX-License-Identifier: MIT
/*
 * Pinning any address, what get_info reports, the extent of a mapping,
 * range checks of the copy functions, and data through every mapping type.
 */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR 0x7f0000000000UL

/* Pin [addr, +size), map with map_size, and check the window and extent. */
static void check_window(gdr_t g, unsigned long addr, size_t size,
			 size_t map_size)
{
	unsigned long start = addr & GPU_PAGE_MASK;
	unsigned long end = (addr + size + GPU_PAGE_SIZE - 1) & GPU_PAGE_MASK;
	gdr_info_t info;
	gdr_mh_t mh;
	char *va;
	unsigned char byte = 0x3c, back = 0;

	CHECK_RET(gdr_pin_buffer(g, addr, size, 0, 0, &mh), 0);
	CHECK(mock_last_pin_addr == start && mock_last_pin_size == end - start,
	      "[0x%lx, +%zu) pins the 64 KiB window [0x%lx, 0x%lx)", addr,
	      size, start, end);
	CHECK_RET(gdr_get_info(g, mh, &info), 0);
	CHECK(info.va == start && info.mapped_size == end - start,
	      "info reports the window as GDRCopy does");
	CHECK(!info.mapped && info.mapping_type == GDR_MAPPING_TYPE_NONE,
	      "not mapped yet");

	CHECK_RET(gdr_map(g, mh, (void **)&va, map_size), 0);
	CHECK(mock_last_map_len >= addr + size - start,
	      "mapping of %zu bytes still covers the pinned range (%zu)",
	      map_size, mock_last_map_len);
	CHECK(mock_last_map_len % 4096 == 0 &&
	      mock_last_map_len <= end - start, "mapping length sane");
	/* The last pinned byte is reachable from the returned pointer. */
	CHECK_RET(gdr_copy_to_mapping(mh, va + (addr - start) + size - 1,
				      &byte, 1), 0);
	CHECK_RET(gdr_copy_from_mapping(mh, &back,
					va + (addr - start) + size - 1, 1), 0);
	CHECK(back == byte, "last pinned byte written and read");
	CHECK_RET(gdr_get_info(g, mh, &info), 0);
	CHECK(info.mapped && info.wc_mapping &&
	      info.mapping_type == GDR_MAPPING_TYPE_WC, "mapped WC");
	CHECK_RET(gdr_unmap(g, mh, va, map_size), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
}

static void check_ranges(gdr_t g)
{
	gdr_mh_t mh;
	char *va, buf[64];
	size_t len;

	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 8192, 0, 0, &mh), 0);
	CHECK_RET(gdr_map(g, mh, (void **)&va, 8192), 0);
	len = mock_last_map_len;
	CHECK_RET(gdr_copy_to_mapping(mh, va - 1, buf, 1), EINVAL);
	CHECK_RET(gdr_copy_to_mapping(mh, va + len - 1, buf, 2), EINVAL);
	CHECK_RET(gdr_copy_to_mapping(mh, va + len, buf, 1), EINVAL);
	CHECK_RET(gdr_copy_from_mapping(mh, buf, va + len - 8, 9), EINVAL);
	CHECK_RET(gdr_copy_from_mapping(mh, buf, va, ~(size_t)0), EINVAL);
	CHECK_RET(gdr_copy_to_mapping(mh, va + len - 1, buf, 1), 0);
	CHECK_RET(gdr_copy_from_mapping(mh, buf, va + len - 64, 64), 0);
	CHECK_RET(gdr_unmap(g, mh, va, 8192), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
}

/* Round trip through a mapping of the given type, with unaligned ends. */
static void check_type(gdr_t g, gdr_mapping_type_t type)
{
	enum { LEN = 3 * 4096 };
	unsigned char src[LEN], dst[LEN];
	gdr_info_t info;
	size_t i, off = 13, n = LEN - 40;
	unsigned char *va;
	gdr_mh_t mh;
	int ok = 1;

	for (i = 0; i < LEN; i++)
		src[i] = (unsigned char)(rand() | 1);
	memset(dst, 0x5a, sizeof(dst));
	mock_map_type = type;
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, LEN, 0, 0, &mh), 0);
	CHECK_RET(gdr_map(g, mh, (void **)&va, LEN), 0);
	CHECK_RET(gdr_get_info(g, mh, &info), 0);
	CHECK(info.mapping_type == type, "type %d reported", type);
	CHECK_RET(gdr_copy_to_mapping(mh, va + off, src, n), 0);
	ok &= !memcmp(va + off, src, n);
	for (i = 0; i < off; i++)
		ok &= va[i] == 0xA5;
	for (i = off + n; i < LEN; i++)
		ok &= va[i] == 0xA5;
	CHECK(ok, "type %d: write exact, nothing outside touched", type);
	CHECK_RET(gdr_copy_from_mapping(mh, dst + 7, va + off, n), 0);
	ok = !memcmp(dst + 7, src, n);
	for (i = 0; i < 7; i++)
		ok &= dst[i] == 0x5a;
	for (i = 7 + n; i < LEN; i++)
		ok &= dst[i] == 0x5a;
	CHECK(ok, "type %d: read exact, nothing outside touched", type);
	CHECK_RET(gdr_unmap(g, mh, va, LEN), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	mock_map_type = GDR_MAPPING_TYPE_WC;
}

int main(void)
{
	gdr_t g = mock_open_gdr();

	CHECK(g != NULL, "mock backend opens");
	if (!g)
		return test_done();
	srand(7);
	check_window(g, GPU_ADDR, GPU_PAGE_SIZE, GPU_PAGE_SIZE);
	check_window(g, GPU_ADDR + 0x200, 8, 8);
	check_window(g, GPU_ADDR + 0x1600, 4, 4);
	check_window(g, GPU_ADDR + 0xfff0, 32, 32);
	check_window(g, GPU_ADDR + 0xfff0, 32, 4096);
	check_window(g, GPU_ADDR + 3, 5 * GPU_PAGE_SIZE, 4096);
	check_window(g, GPU_ADDR + GPU_PAGE_SIZE - 1, 2, 1);
	check_ranges(g);
	check_type(g, GDR_MAPPING_TYPE_WC);
	check_type(g, GDR_MAPPING_TYPE_CACHING);
	check_type(g, GDR_MAPPING_TYPE_DEVICE);
	CHECK_RET(gdr_close(g), 0);
	return test_done();
}
