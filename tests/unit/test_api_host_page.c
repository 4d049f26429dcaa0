// SPDX-License-Identifier: MIT
/*
 * gdr_map on hosts whose CPU pages are 4, 16 or 64 KiB (x86, arm64 with
 * Debian's 16K kernel, Grace with 64K kernels): the mapping is a whole
 * number of host pages, never beyond the 64 KiB window that was pinned,
 * and reaches every pinned byte.  The instance is told its page size, so
 * every size is tested on any host.
 */
#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR 0x7f0000000000UL

static const size_t page_sizes[] = { 4096, 16384, 65536 };

/* Pin [addr, +size), map map_size bytes, and write and read the last
 * pinned byte through the mapping. */
static void check_map(gdr_t g, unsigned long addr, size_t size,
		      size_t map_size)
{
	const size_t pg = g->host_page_size;
	unsigned long start = addr & GPU_PAGE_MASK;
	unsigned long end = (addr + size + GPU_PAGE_SIZE - 1) & GPU_PAGE_MASK;
	unsigned char byte = 0xc3, back = 0x5a;
	char *va;
	gdr_mh_t mh;

	CHECK_RET(gdr_pin_buffer(g, addr, size, 0, 0, &mh), 0);
	CHECK_RET(gdr_map(g, mh, (void **)&va, map_size), 0);
	CHECK(mock_last_map_len % pg == 0,
	      "%zu KiB pages: map of [0x%lx, +%zu) is %zu bytes, not whole pages",
	      pg >> 10, addr, size, mock_last_map_len);
	CHECK(mock_last_map_len <= end - start,
	      "%zu KiB pages: map of %zu bytes beyond the %lu pinned",
	      pg >> 10, mock_last_map_len, end - start);
	CHECK(mock_last_map_len >= addr + size - start,
	      "%zu KiB pages: map of %zu bytes misses pinned bytes (%lu)",
	      pg >> 10, mock_last_map_len, addr + size - start);
	CHECK_RET(gdr_copy_to_mapping(mh, va + (addr - start) + size - 1,
				      &byte, 1), 0);
	CHECK_RET(gdr_copy_from_mapping(mh, &back,
					va + (addr - start) + size - 1, 1), 0);
	CHECK(back == byte, "%zu KiB pages: last pinned byte read 0x%x",
	      pg >> 10, back);
	CHECK_RET(gdr_unmap(g, mh, va, map_size), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
}

int main(void)
{
	gdr_t g = mock_open_gdr();

	CHECK(g != NULL, "mock backend opens");
	if (!g)
		return test_done();
	for (size_t i = 0; i < sizeof(page_sizes) / sizeof(page_sizes[0]); i++) {
		g->host_page_size = page_sizes[i];
		g->host_page_shift = __builtin_ctzl(page_sizes[i]);
		/* A few bytes at the start, middle and end of a GPU page. */
		check_map(g, GPU_ADDR, 8, 8);
		check_map(g, GPU_ADDR + 0x4200, 8, 8);
		check_map(g, GPU_ADDR + GPU_PAGE_SIZE - 8, 8, 8);
		/* Across GPU pages, with a small or a host-page map size. */
		check_map(g, GPU_ADDR + 0x200, GPU_PAGE_SIZE, 1);
		check_map(g, GPU_ADDR + 0x3ff0, 3 * GPU_PAGE_SIZE, 4096);
		/* A map size that is no multiple of the host page. */
		check_map(g, GPU_ADDR, 2 * GPU_PAGE_SIZE, GPU_PAGE_SIZE + 1);
	}
	CHECK(mock_pins == 0 && mock_maps == 0, "pins %d, maps %d left",
	      mock_pins, mock_maps);
	CHECK_RET(gdr_close(g), 0);
	return test_done();
}
