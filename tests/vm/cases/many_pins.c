/* SPDX-License-Identifier: MIT */
/*
 * A thousand pins on one fd: distinct handles below 2^32 whose mmap
 * offset ranges never overlap, each mapping showing its own 64 KiB, unpin
 * in a scattered order, and close releasing the ones left.
 */
#include "vmtest.h"

#define NPINS 1024

int main(void)
{
	const size_t len = NPINS * GPU_PAGE;
	const long pg = sysconf(_SC_PAGESIZE);
	static uint64_t h[NPINS];
	long pins0 = nvsim_count("outstanding_pins");
	uint64_t lo = ~0ULL, hi = 0;
	CUdeviceptr d;
	int fd, bad = 0;

	vm_cuda_init();
	fd = gdrdrv_open();
	d = vm_alloc(len);
	for (int i = 0; i < NPINS; i++)
		gpu_fill(d + i * GPU_PAGE, 64, 1000 + i);

	for (int i = 0; i < NPINS; i++) {
		if (gdrdrv_pin(fd, d + i * GPU_PAGE, GPU_PAGE, &h[i])) {
			CHECK(0, "pin %d failed", i);
			bad = 1;
			break;
		}
		lo = h[i] < lo ? h[i] : lo;
		hi = h[i] > hi ? h[i] : hi;
	}
	REQUIRE(!bad, "could not pin %d x 64 KiB", NPINS);
	CHECK(nvsim_count("outstanding_pins") == pins0 + NPINS,
	      "outstanding_pins %ld, want %ld",
	      nvsim_count("outstanding_pins"), pins0 + NPINS);
	CHECK(hi < (1ULL << 32), "handle %#llx not below 2^32",
	      (unsigned long long)hi);
	/* Each handle's range is GPU_PAGE / page size offsets wide. */
	for (int i = 0; i < NPINS && !bad; i++)
		for (int j = i + 1; j < NPINS; j++) {
			uint64_t a = h[i], b = h[j];
			uint64_t w = GPU_PAGE / (uint64_t)pg;

			if (a < b + w && b < a + w) {
				CHECK(0, "handles %d and %d overlap", i, j);
				bad = 1;
				break;
			}
		}

	/* Every 37th pin: mapped, its data is its own. */
	for (int i = 0; i < NPINS; i += 37) {
		volatile uint8_t *m = gdrdrv_mmap(fd, h[i], GPU_PAGE);

		CHECK(m != MAP_FAILED, "mmap of pin %d: %s", i,
		      strerror(errno));
		if (m == MAP_FAILED)
			continue;
		CHECK(map_mismatch(m, 64, 1000 + i) < 0,
		      "pin %d maps another page", i);
		munmap((void *)m, GPU_PAGE);
	}

	/* Unpin two thirds in a scattered order; close takes the rest. */
	for (int k = 0, i = 0; k < NPINS; k++, i = (i + 389) % NPINS)
		if (i % 3)
			CHECK_RET(gdrdrv_unpin(fd, h[i]), 0);
	CHECK(close(fd) == 0, "close: %s", strerror(errno));
	CHECK(nvsim_count("outstanding_pins") == pins0,
	      "outstanding_pins %ld after close, want %ld",
	      nvsim_count("outstanding_pins"), pins0);
	CU_OK(cuMemFree(d));
	return test_done();
}
