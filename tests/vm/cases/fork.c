/* SPDX-License-Identifier: MIT */
/*
 * After fork the child inherits the gdrdrv fd but may not use it (every
 * ioctl and mmap gives EACCES), does not inherit the mapping (VM_DONTCOPY),
 * and its exit, closing the inherited fd, leaves the parent's pins and
 * mapping alone.
 */
#include <sys/wait.h>

#include "vmtest.h"

static int child(int fd, uint64_t h, volatile uint8_t *m, size_t len)
{
	struct gdrdrv_get_version_params v;
	struct gdrdrv_get_info_v2_params info;
	uint64_t h2;
	uint8_t byte;
	void *m2;

	CHECK_RET(gioctl(fd, GDRDRV_IOC_GET_VERSION, &v), -EACCES);
	CHECK_RET(gdrdrv_info(fd, h, &info), -EACCES);
	CHECK_RET(gdrdrv_pin(fd, 0x7f0000000000ULL, GPU_PAGE, &h2), -EACCES);
	CHECK_RET(gdrdrv_unpin(fd, h), -EACCES);
	m2 = gdrdrv_mmap(fd, h, len);
	CHECK(m2 == MAP_FAILED && errno == EACCES, "mmap in the child: %s",
	      m2 == MAP_FAILED ? strerror(errno) : "succeeded");
	CHECK(read_faults(m, &byte) == SIGSEGV,
	      "the parent's mapping reached the child: %s",
	      fault_sig ? strsignal(fault_sig) : "readable");
	return test_done();
}

int main(void)
{
	const size_t len = 2 * GPU_PAGE;
	struct gdrdrv_get_info_v2_params info;
	volatile uint8_t *m;
	CUdeviceptr d;
	uint64_t h;
	int fd, status;
	pid_t pid;

	vm_cuda_init();
	fd = gdrdrv_open();
	d = vm_alloc(len);
	gpu_fill(d, len, 71);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		_exit(child(fd, h, m, len));
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child checks failed (status %#x)", status);

	CHECK_RET(gdrdrv_info(fd, h, &info), 0);
	CHECK(info.mapping_type == GDRDRV_MAPPING_TYPE_WC,
	      "mapping type %u after the child left", info.mapping_type);
	CHECK(map_mismatch(m, len, 71) < 0, "parent's data after fork");
	map_fill(m, len, 72);
	CHECK(gpu_mismatch(d, len, 72) < 0, "parent's write after fork");
	munmap((void *)m, len);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	close(fd);
	CU_OK(cuMemFree(d));
	return test_done();
}
