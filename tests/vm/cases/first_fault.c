/* SPDX-License-Identifier: MIT */
/*
 * The first access to a big mapping: a fault inserts one chunk of the
 * mapping (2 MiB), not all of it, so it neither takes time in proportion
 * to the mapping nor holds the region locked (and the free callback, and
 * NVIDIA behind it, waiting) for millions of PTE inserts.  Pins most of
 * the simulated GPU, maps it, and times the first access against that to
 * a one-chunk mapping; reads at each chunk's edges check the data.  It prints the
 * times (a simulator's: only their ratio means something); with
 * GDRMAP_VM_GPUMEM=4G it is the measurement of bench/results/vm/.
 */
#include <time.h>

#include "vmtest.h"

#define CHUNK	(2 * MiB)
#define TRIES	3

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* A word of pattern at the start and the end of every chunk. */
static void mark(CUdeviceptr d, size_t len)
{
	uint32_t w[2];

	for (size_t off = 0; off < len; off += CHUNK) {
		w[0] = (uint32_t)(off / CHUNK) * 2654435761u | 1;
		w[1] = ~w[0];
		CU_OK(cuMemcpyHtoD(d + off, &w[0], 4));
		CU_OK(cuMemcpyHtoD(d + off + CHUNK - 4, &w[1], 4));
	}
}

static long check_marks(const volatile uint8_t *m, size_t len)
{
	for (size_t off = 0; off < len; off += CHUNK) {
		uint32_t want = (uint32_t)(off / CHUNK) * 2654435761u | 1;

		if (*(const volatile uint32_t *)(m + off) != want ||
		    *(const volatile uint32_t *)(m + off + CHUNK - 4) != ~want)
			return (long)off;
	}
	return -1;
}

/* Best of TRIES: the first access to a fresh len-byte mapping of h. */
static double first_access_ms(int fd, uint64_t h, size_t len)
{
	double best = 1e30, t;
	volatile uint8_t *m;

	for (int i = 0; i < TRIES; i++) {
		m = gdrdrv_mmap(fd, h, len);
		REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
		t = now_ms();
		(void)m[len / 2];
		t = now_ms() - t;
		if (t < best)
			best = t;
		munmap((void *)m, len);
	}
	return best;
}

int main(void)
{
	double small, big, all;
	size_t total = 0, len;
	volatile uint8_t *m;
	CUdeviceptr d = 0;
	CUdevice dev;
	uint64_t h;
	int fd;

	vm_cuda_init();
	CU_OK(cuDeviceGet(&dev, 0));
	CU_OK(cuDeviceTotalMem(&total, dev));
	/* Most of the GPU, leaving room for what other cases hold. */
	for (len = total / 4 * 3 / CHUNK * CHUNK; len >= 8 * CHUNK; len /= 2)
		if (cuMemAlloc(&d, len) == CUDA_SUCCESS)
			break;
	REQUIRE(d && len >= 8 * CHUNK, "no room for a mapping of 8 chunks");
	mark(d, len);
	fd = gdrdrv_open();
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin of %zu MiB", len / MiB);

	small = first_access_ms(fd, h, CHUNK);
	big = first_access_ms(fd, h, len);
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	all = now_ms();
	for (size_t off = 0; off < len; off += 4096)
		(void)m[off];
	all = now_ms() - all;
	CHECK(check_marks(m, len) < 0, "data at chunk +%#lx",
	      check_marks(m, len));
	munmap((void *)m, len);
	printf("first_fault: first access to a %zu MiB mapping %.3f ms, to a 2 MiB one %.3f ms (best of %d); touching every page of the big one %.1f ms\n",
	       len / MiB, big, small, TRIES, all);
	fflush(stdout);
	/* One chunk per fault: the size of the mapping does not matter. */
	CHECK(big < 20 * small + 20,
	      "the first access to %zu MiB took %.3f ms, to 2 MiB %.3f: it mapped more than a chunk",
	      len / MiB, big, small);

	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	close(fd);
	CU_OK(cuMemFree(d));
	return test_done();
}
