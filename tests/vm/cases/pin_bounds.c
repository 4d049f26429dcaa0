/* SPDX-License-Identifier: MIT */
/*
 * Pins larger than any GPU memory are refused with EINVAL before NVIDIA is
 * called: NVIDIA sizes its page arrays from the request before it looks
 * the range up, so a 2^44-byte pin of a valid address made the kernel
 * allocate (and warn about) gigabytes.  Sizes between the allocation and
 * the handle space limit (16 TiB of 4 KiB pages on a fresh fd), in both
 * pin ioctls: those above the GPU's memory never reach nvsim, those below
 * it reach it and are refused there without a large allocation.  The
 * runner fails the case on any kernel warning.
 */
#include <sys/sysinfo.h>

#include "vmtest.h"

static int fd;

/* Both pin ioctls refuse [d, +size) with EINVAL; whether nvsim was asked. */
static void refused(CUdeviceptr d, uint64_t size, int reaches_nvsim)
{
	struct gdrdrv_pin_buffer_v2_params p = { .addr = d, .size = size };
	long calls = nvsim_stat("get_pages_requests");
	uint64_t h;
	int rc;

	rc = gioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, &p);
	CHECK(rc == -EINVAL, "PIN_BUFFER_V2 of %#llx bytes: %s",
	      (unsigned long long)size, rc ? strerror(-rc) : "pinned");
	if (!rc)
		gdrdrv_unpin(fd, p.handle);
	rc = gdrdrv_pin(fd, d, size, &h);
	CHECK(rc == -EINVAL, "PIN_BUFFER of %#llx bytes: %s",
	      (unsigned long long)size, rc ? strerror(-rc) : "pinned");
	if (!rc)
		gdrdrv_unpin(fd, h);
	if (reaches_nvsim)
		CHECK(nvsim_stat("get_pages_requests") == calls + 2,
		      "%#llx bytes: nvsim was not asked", (unsigned long long)size);
	else
		CHECK(nvsim_stat("get_pages_requests") == calls,
		      "%#llx bytes: NVIDIA was called for more than the GPU has",
		      (unsigned long long)size);
}

/* gdrdrv's largest pin, given the largest BAR (kernel/gdrdrv/limits.c). */
static uint64_t pin_bound(uint64_t bar)
{
	uint64_t bound = bar;
#if defined(__aarch64__) || defined(__powerpc64__)
	struct sysinfo si;

	if (sysinfo(&si) == 0 && (uint64_t)si.totalram * si.mem_unit > bound)
		bound = (uint64_t)si.totalram * si.mem_unit;
#endif
	return (bound + GPU_PAGE - 1) / GPU_PAGE * GPU_PAGE;
}

int main(void)
{
	const size_t len = 4 * GPU_PAGE;
	long pins0 = nvsim_count("outstanding_pins");
	long held0 = gdrdrv_refcount();
	size_t total = 0;
	CUdeviceptr d;
	CUdevice dev;
	uint64_t h;

	vm_cuda_init();
	fd = gdrdrv_open();
	CU_OK(cuDeviceGet(&dev, 0));
	CU_OK(cuDeviceTotalMem(&total, dev));
	REQUIRE(total >= 16 * GPU_PAGE, "GPU memory %zu", total);
	d = vm_alloc(len);
	gpu_fill(d, len, 5);

	/* Beyond the allocation, within the GPU: nvsim refuses it. */
	refused(d, len + GPU_PAGE, 1);
	refused(d, total, 1);
	/*
	 * Beyond the GPU's memory (the largest PCI BAR): never asked.  On
	 * arm64 and POWER, where GPU memory may be RAM (C2C), the bound is
	 * all RAM if that is larger (limits.c): there sizes below it reach
	 * nvsim, which refuses them.
	 */
	refused(d, total + GPU_PAGE, total + GPU_PAGE <= pin_bound(total));
	refused(d, 2 * (uint64_t)total, 2 * (uint64_t)total <= pin_bound(total));
	for (int shift = 32; shift <= 44; shift += 4)
		refused(d, 1ULL << shift, 0);
	refused(d, (1ULL << 44) - GPU_PAGE, 0);
	refused(d, (1ULL << 44) + GPU_PAGE, 0);

	/* The allocation itself still pins. */
	CHECK_RET(gdrdrv_pin(fd, d, len, &h), 0);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);

	close(fd);
	CU_OK(cuMemFree(d));
	CHECK(nvsim_count("outstanding_pins") == pins0, "nvsim pins %ld, had %ld",
	      nvsim_count("outstanding_pins"), pins0);
	CHECK(gdrdrv_refcount() == held0, "gdrdrv pins %ld, had %ld",
	      gdrdrv_refcount(), held0);
	return test_done();
}
