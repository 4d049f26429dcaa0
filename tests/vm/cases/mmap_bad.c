/* SPDX-License-Identifier: MIT */
/*
 * mmap requests gdrdrv must refuse: an offset that names no handle (or the
 * middle of one), a size beyond the pin, a second mapping of one handle, a
 * private mapping, executable protection; and what it must allow after
 * the refusals: the one good mapping, with the right data.
 */
#include "vmtest.h"

static void refused(int fd, size_t size, int prot, int flags, off_t off,
		    const char *what)
{
	void *m = mmap(NULL, size, prot, flags, fd, off);

	CHECK(m == MAP_FAILED, "mmap %s succeeded", what);
	if (m != MAP_FAILED)
		munmap(m, size);
}

int main(void)
{
	const long pg = sysconf(_SC_PAGESIZE);
	const size_t len = 4 * GPU_PAGE;
	CUdeviceptr d;
	uint64_t h;
	volatile uint8_t *m;
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	d = vm_alloc(len);
	gpu_fill(d, len, 21);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");

	refused(fd, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		(off_t)((h + 1) * pg), "at the handle's second page");
	refused(fd, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		(off_t)((h + 0x100000) * pg), "of an unknown handle");
	refused(fd, len + GPU_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		(off_t)(h * pg), "beyond the pin");
	refused(fd, 64 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED,
		(off_t)(h * pg), "far beyond the pin");
	refused(fd, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, (off_t)(h * pg),
		"MAP_PRIVATE");
	refused(fd, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED,
		(off_t)(h * pg), "PROT_EXEC");

	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "the good mmap failed: %s", strerror(errno));
	CHECK(map_mismatch(m, len, 21) < 0, "data of the good mapping");
	refused(fd, len, PROT_READ | PROT_WRITE, MAP_SHARED, (off_t)(h * pg),
		"a second time");
	/* Executable later is no better than executable at once. */
	CHECK(mprotect((void *)m, len, PROT_READ | PROT_EXEC) != 0,
	      "mprotect PROT_EXEC succeeded");
	/* A mapping that covers part of the pin is fine: it is still the
	 * handle's one mapping. */
	CHECK(munmap((void *)m, len) == 0, "munmap: %s", strerror(errno));
	m = gdrdrv_mmap(fd, h, GPU_PAGE);
	CHECK(m != MAP_FAILED, "mmap of the pin's first 64 KiB: %s",
	      strerror(errno));
	if (m != MAP_FAILED) {
		CHECK(map_mismatch(m, GPU_PAGE, 21) < 0, "data of 64 KiB map");
		munmap((void *)m, GPU_PAGE);
	}

	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	refused(fd, len, PROT_READ | PROT_WRITE, MAP_SHARED, (off_t)(h * pg),
		"after unpin");
	CU_OK(cuMemFree(d));
	close(fd);
	return test_done();
}
