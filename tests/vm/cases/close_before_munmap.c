/* SPDX-License-Identifier: MIT */
/*
 * Closing /dev/gdrdrv while a mapping exists: the mapping keeps the file
 * open, so it must go on working until munmap, and the last munmap must
 * then release every pin of the fd, mapped or not.
 */
#include "vmtest.h"

int main(void)
{
	const size_t len = 4 * GPU_PAGE;
	long pins0 = nvsim_count("outstanding_pins");
	volatile uint8_t *m;
	CUdeviceptr d;
	uint64_t h, h2;
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	d = vm_alloc(2 * len);
	gpu_fill(d, len, 51);
	gpu_fill(d + len, len, 53);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");
	REQUIRE(gdrdrv_pin(fd, d + len, len, &h2) == 0, "second pin failed");
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));

	CHECK(close(fd) == 0, "close: %s", strerror(errno));
	CHECK(nvsim_count("outstanding_pins") == pins0 + 2,
	      "pins released while the mapping holds the file: %ld, want %ld",
	      nvsim_count("outstanding_pins"), pins0 + 2);
	CHECK(map_mismatch(m, len, 51) < 0, "read after close");
	map_fill(m, len, 52);
	CHECK(gpu_mismatch(d, len, 52) < 0, "write after close");

	CHECK(munmap((void *)m, len) == 0, "munmap: %s", strerror(errno));
	CHECK(nvsim_count("outstanding_pins") == pins0,
	      "nvsim outstanding_pins %ld after the last munmap, want %ld",
	      nvsim_count("outstanding_pins"), pins0);
	CHECK(gpu_mismatch(d + len, len, 53) < 0,
	      "memory of the released pins changed");
	CU_OK(cuMemFree(d));
	return test_done();
}
