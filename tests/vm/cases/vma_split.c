/* SPDX-License-Identifier: MIT */
/*
 * A mapping cut in pieces is still the handle's one mapping: punching a
 * hole (munmap of a middle page) or changing the protection of part of it
 * splits the VMA; every piece keeps the right data, a new mmap stays
 * refused until the last piece is gone, unpin zaps all pieces, and the
 * mapping cannot grow with mremap (VM_DONTEXPAND).
 */
#include "vmtest.h"

int main(void)
{
	const long pg = sysconf(_SC_PAGESIZE);
	const size_t len = 4 * GPU_PAGE;
	struct gdrdrv_get_info_v2_params info;
	volatile uint8_t *m, *hi;
	CUdeviceptr d;
	uint8_t byte;
	uint64_t h;
	void *m2;
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	d = vm_alloc(len);
	gpu_fill(d, len, 91);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));

	/* Growing is refused; shrinking in place is fine. */
	m2 = mremap((void *)m, len, 2 * len, MREMAP_MAYMOVE);
	CHECK(m2 == MAP_FAILED, "mremap grew a gdrdrv mapping");
	if (m2 != MAP_FAILED)
		m = m2;

	/* Hole in the middle: two VMAs, one mapping. */
	CHECK(munmap((void *)(m + GPU_PAGE), pg) == 0, "punch: %s",
	      strerror(errno));
	CHECK(map_mismatch(m, GPU_PAGE, 91) < 0, "low piece data");
	hi = m + GPU_PAGE + pg;
	for (size_t i = 0; i < len - GPU_PAGE - pg; i++)
		if (hi[i] != pattern_byte(GPU_PAGE + pg + i, 91)) {
			CHECK(0, "high piece differs at +%#zx", i);
			break;
		}
	/* Read-only on a third piece. */
	CHECK(mprotect((void *)(m + 3 * GPU_PAGE), GPU_PAGE, PROT_READ) == 0,
	      "mprotect read-only: %s", strerror(errno));
	CHECK(m[3 * GPU_PAGE] == pattern_byte(3 * GPU_PAGE, 91),
	      "read-only piece data");

	CHECK_RET(gdrdrv_info(fd, h, &info), 0);
	CHECK(info.mapping_type == GDRDRV_MAPPING_TYPE_WC,
	      "mapping type %u with pieces", info.mapping_type);
	m2 = gdrdrv_mmap(fd, h, len);
	CHECK(m2 == MAP_FAILED, "second mmap while pieces remain");
	if (m2 != MAP_FAILED)
		munmap(m2, len);

	/* Unmapping the low piece leaves the others mapped. */
	CHECK(munmap((void *)m, GPU_PAGE) == 0, "munmap low piece");
	CHECK_RET(gdrdrv_info(fd, h, &info), 0);
	CHECK(info.mapping_type == GDRDRV_MAPPING_TYPE_WC,
	      "mapping type %u with the high pieces left", info.mapping_type);
	m2 = gdrdrv_mmap(fd, h, len);
	CHECK(m2 == MAP_FAILED, "second mmap while the high pieces remain");
	if (m2 != MAP_FAILED)
		munmap(m2, len);

	/* Unpin zaps every piece. */
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CHECK(read_faults(hi, &byte) == SIGBUS, "high piece after unpin: %s",
	      fault_sig ? strsignal(fault_sig) : "readable");
	CHECK(read_faults(m + 3 * GPU_PAGE, &byte) == SIGBUS,
	      "read-only piece after unpin: %s",
	      fault_sig ? strsignal(fault_sig) : "readable");
	CHECK(munmap((void *)hi, len - GPU_PAGE - pg) == 0,
	      "munmap high pieces");
	CHECK(nvsim_count("outstanding_pins") == 0, "outstanding_pins %ld",
	      nvsim_count("outstanding_pins"));

	/* And a fresh pin maps again, whole; moved elsewhere by mremap it
	 * keeps its data, and unpin still finds it there. */
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "second pin failed");
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap after all pieces went: %s",
		strerror(errno));
	CHECK(map_mismatch(m, len, 91) < 0, "data of the new mapping");
	m2 = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(m2 != MAP_FAILED, "reserve: %s", strerror(errno));
	m2 = mremap((void *)m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
		    (char *)m2 + len);
	CHECK(m2 != MAP_FAILED, "mremap move: %s", strerror(errno));
	if (m2 != MAP_FAILED) {
		m = m2;
		CHECK(map_mismatch(m, len, 91) < 0, "data after mremap");
	}
	m2 = gdrdrv_mmap(fd, h, len);
	CHECK(m2 == MAP_FAILED, "second mmap after mremap");
	if (m2 != MAP_FAILED)
		munmap(m2, len);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CHECK(read_faults(m, &byte) == SIGBUS, "moved mapping after unpin: %s",
	      fault_sig ? strsignal(fault_sig) : "readable");
	munmap((void *)m, len);
	close(fd);
	CU_OK(cuMemFree(d));
	return test_done();
}
