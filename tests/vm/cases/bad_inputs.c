/* SPDX-License-Identifier: MIT */
/*
 * Pins gdrdrv must refuse without leaking anything: address 0, size 0,
 * huge and wrapping ranges, host memory, memory already freed, ranges that
 * run past their allocation; and unaligned pins it must take, widened to
 * whole GPU pages.
 */
#include "vmtest.h"

static void refused(int fd, uint64_t addr, uint64_t size, const char *what)
{
	struct gdrdrv_pin_buffer_v2_params p = { .addr = addr, .size = size };
	int rc = gioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, &p);
	uint64_t h;

	CHECK(rc == -EINVAL || rc == -EFAULT || rc == -ENOMEM,
	      "PIN_BUFFER_V2 %s (%#llx + %#llx): %s", what,
	      (unsigned long long)addr, (unsigned long long)size,
	      rc ? strerror(-rc) : "pinned");
	if (!rc)
		gdrdrv_unpin(fd, p.handle);
	rc = gdrdrv_pin(fd, addr, size, &h);
	CHECK(rc != 0, "PIN_BUFFER %s pinned", what);
	if (!rc)
		gdrdrv_unpin(fd, h);
}

int main(void)
{
	struct gdrdrv_get_info_v2_params info;
	const size_t len = 4 * GPU_PAGE;
	long pins0 = nvsim_count("outstanding_pins");
	static char host[4 * 64 * 1024] __attribute__((aligned(65536)));
	CUdeviceptr d, gone;
	uint64_t h;
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	d = vm_alloc(len);
	gone = vm_alloc(len);
	CU_OK(cuMemFree(gone));
	memset(host, 0x5a, sizeof(host));

	refused(fd, 0, GPU_PAGE, "address 0");
	refused(fd, d, 0, "size 0");
	refused(fd, d, 1ULL << 62, "huge size");
	refused(fd, d, ~0ULL, "size 2^64-1");
	refused(fd, d, ~0ULL - d + 2, "wrapping past 2^64");
	refused(fd, ~0ULL & ~(GPU_PAGE - 1), GPU_PAGE, "the last GPU page");
	refused(fd, ~0ULL - 10, 5, "inside the last GPU page");
	refused(fd, (uint64_t)(uintptr_t)host, sizeof(host), "host memory");
	refused(fd, gone, len, "freed memory");
	refused(fd, d, len + GPU_PAGE, "beyond the allocation");
	refused(fd, d + len, GPU_PAGE, "just after the allocation");
	refused(fd, d - GPU_PAGE, 2 * GPU_PAGE, "starting before it");
	CHECK(nvsim_count("outstanding_pins") == pins0,
	      "refused pins left %ld outstanding, was %ld",
	      nvsim_count("outstanding_pins"), pins0);

	/* Unaligned start and size: widened to the GPU pages they touch. */
	CHECK_RET(gdrdrv_pin(fd, d + GPU_PAGE + 123, 2 * GPU_PAGE, &h), 0);
	CHECK_RET(gdrdrv_info(fd, h, &info), 0);
	CHECK(info.va == d + GPU_PAGE && info.mapped_size == 3 * GPU_PAGE,
	      "unaligned pin: va +%#llx size %#llx",
	      (unsigned long long)(info.va - d),
	      (unsigned long long)info.mapped_size);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CHECK_RET(gdrdrv_unpin(fd, h), -EINVAL);
	CHECK_RET(gdrdrv_unpin(fd, 0xffffffffULL), -EINVAL);
	CHECK_RET(gdrdrv_unpin(fd, ~0ULL), -EINVAL);
	CHECK_RET(gdrdrv_info(fd, ~0ULL, &info), -EINVAL);

	CU_OK(cuMemFree(d));
	close(fd);
	CHECK(nvsim_count("outstanding_pins") == pins0,
	      "nvsim outstanding_pins %ld at the end, was %ld",
	      nvsim_count("outstanding_pins"), pins0);
	return test_done();
}
