/* SPDX-License-Identifier: MIT */
/*
 * Handles belong to the fd that pinned them: another fd of the same
 * process can neither query, map, re-type nor unpin them, and closing that
 * other fd leaves them alone.
 */
#include "vmtest.h"

int main(void)
{
	struct gdrdrv_get_info_v2_params info;
	struct gdrdrv_req_mapping_type_params rq = { 0 };
	const long pg = sysconf(_SC_PAGESIZE);
	const size_t len = 2 * GPU_PAGE;
	CUdeviceptr d;
	uint64_t ha, hb;
	uint32_t flag;
	void *m;
	int a, b;

	vm_cuda_init();
	a = gdrdrv_open();
	b = gdrdrv_open();
	d = vm_alloc(2 * len);
	gpu_fill(d, 2 * len, 31);
	REQUIRE(gdrdrv_pin(a, d, len, &ha) == 0, "pin on fd a failed");

	/* fd b has no pins at all, so ha cannot name one of its own. */
	CHECK_RET(gdrdrv_info(b, ha, &info), -EINVAL);
	CHECK_RET(gdrdrv_cb_flag(b, ha, &flag), -EINVAL);
	rq.handle = ha;
	CHECK_RET(gioctl(b, GDRDRV_IOC_REQ_MAPPING_TYPE, &rq), -EINVAL);
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b,
		 (off_t)(ha * pg));
	CHECK(m == MAP_FAILED, "mmap of fd a's handle through fd b worked");
	if (m != MAP_FAILED)
		munmap(m, len);
	CHECK_RET(gdrdrv_unpin(b, ha), -EINVAL);

	/* Pins of b are b's: each fd sees only its own handles, even where
	 * the numbers coincide. */
	REQUIRE(gdrdrv_pin(b, d + len, len, &hb) == 0, "pin on fd b failed");
	CHECK_RET(gdrdrv_info(b, hb, &info), 0);
	CHECK(info.va == d + len, "fd b's pin reports va %#llx",
	      (unsigned long long)info.va);
	CHECK_RET(gdrdrv_info(a, ha, &info), 0);
	CHECK(info.va == d, "fd a's pin reports va %#llx after fd b pinned",
	      (unsigned long long)info.va);

	CHECK(close(b) == 0, "close b: %s", strerror(errno));
	m = gdrdrv_mmap(a, ha, len);
	CHECK(m != MAP_FAILED, "mmap on fd a after closing b: %s",
	      strerror(errno));
	if (m != MAP_FAILED) {
		CHECK(map_mismatch(m, len, 31) < 0, "data through fd a");
		munmap(m, len);
	}
	CHECK_RET(gdrdrv_unpin(a, ha), 0);
	close(a);
	CU_OK(cuMemFree(d));
	CHECK(nvsim_count("outstanding_pins") == 0,
	      "nvsim outstanding_pins %ld at the end",
	      nvsim_count("outstanding_pins"));
	return test_done();
}
