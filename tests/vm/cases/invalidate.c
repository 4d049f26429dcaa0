/* SPDX-License-Identifier: MIT */
/*
 * Freeing GPU memory under a pin.  Non-persistent mode: the free callback
 * sets the callback flag and zaps the mapping, so the next CPU access gets
 * SIGBUS, no new mapping is allowed, and unpin is still clean.  Persistent
 * mode: the pin keeps the memory, data stays readable through the mapping
 * until unpin, and the flag stays 0.
 */
#include "vmtest.h"

static void non_persistent(int fd, int mapped)
{
	const size_t len = 4 * GPU_PAGE;
	long fired0 = nvsim_count("callbacks_fired");
	volatile uint8_t *m = MAP_FAILED;
	CUdeviceptr d = vm_alloc(len);
	uint32_t flag = 7;
	uint64_t h;
	uint8_t byte;
	void *m2;

	gpu_fill(d, len, 41);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");
	if (mapped) {
		m = gdrdrv_mmap(fd, h, len);
		REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
		CHECK(map_mismatch(m, len, 41) < 0, "data before the free");
	}
	CHECK_RET(gdrdrv_cb_flag(fd, h, &flag), 0);
	CHECK(flag == 0, "callback flag %u before the free", flag);

	CU_OK(cuMemFree(d));
	CHECK(nvsim_count("callbacks_fired") == fired0 + 1,
	      "callbacks_fired went from %ld to %ld", fired0,
	      nvsim_count("callbacks_fired"));
	CHECK_RET(gdrdrv_cb_flag(fd, h, &flag), 0);
	CHECK(flag == 1, "callback flag %u after the free", flag);
	if (mapped) {
		CHECK(read_faults(m, &byte) == SIGBUS,
		      "read after the free: %s",
		      fault_sig ? strsignal(fault_sig) : "no fault");
		CHECK(read_faults(m + len - 1, &byte) == SIGBUS,
		      "read of the last byte after the free: %s",
		      fault_sig ? strsignal(fault_sig) : "no fault");
		munmap((void *)m, len);
	}
	m2 = gdrdrv_mmap(fd, h, len);
	CHECK(m2 == MAP_FAILED, "mmap of an invalidated pin succeeded");
	if (m2 != MAP_FAILED)
		munmap(m2, len);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CHECK(nvsim_count("outstanding_pins") == 0,
	      "nvsim outstanding_pins %ld", nvsim_count("outstanding_pins"));
}

/* Unmapping after unpin, and the callback racing nothing: the order
 * munmap-after-free above is covered; here the mapping outlives unpin. */
static void unpin_while_mapped(int fd)
{
	const size_t len = 2 * GPU_PAGE;
	CUdeviceptr d = vm_alloc(len);
	volatile uint8_t *m;
	uint64_t h;
	uint8_t byte;

	gpu_fill(d, len, 43);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CHECK(read_faults(m, &byte) == SIGBUS, "read after unpin: %s",
	      fault_sig ? strsignal(fault_sig) : "no fault");
	CHECK(munmap((void *)m, len) == 0, "munmap after unpin");
	CU_OK(cuMemFree(d));
}

static void persistent(int fd)
{
	const size_t len = 4 * GPU_PAGE;
	long used0 = nvsim_count("used_pages");
	volatile uint8_t *m;
	CUdeviceptr d = vm_alloc(len);
	uint32_t flag = 7;
	uint64_t h;

	gpu_fill(d, len, 42);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));

	CU_OK(cuMemFree(d));
	/* Other allocations must not get the pinned pages. */
	d = vm_alloc(len);
	gpu_fill(d, len, 44);
	CHECK(map_mismatch(m, len, 42) < 0,
	      "a persistent pin's data changed after cuMemFree");
	map_fill(m, len, 45);
	CHECK(map_mismatch(m, len, 45) < 0, "write after cuMemFree");
	CHECK(gpu_mismatch(d, len, 44) < 0,
	      "a new allocation shares pages with a freed, pinned one");
	CHECK_RET(gdrdrv_cb_flag(fd, h, &flag), 0);
	CHECK(flag == 0, "callback flag %u in persistent mode", flag);

	munmap((void *)m, len);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CU_OK(cuMemFree(d));
	CHECK(nvsim_count("used_pages") == used0,
	      "nvsim used_pages %ld after unpin, was %ld",
	      nvsim_count("used_pages"), used0);
}

int main(void)
{
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	if (gdrdrv_persistent(fd)) {
		persistent(fd);
	} else {
		non_persistent(fd, 1);
		non_persistent(fd, 0);
	}
	unpin_while_mapped(fd);
	close(fd);
	return test_done();
}
