// SPDX-License-Identifier: MIT
/*
 * dma-buf export of simulated device memory (cuMemGetHandleForAddressRange)
 * and CPU mmap of it, inside the VM.  Turns nvsim's dmabuf and dmabuf_mmap
 * parameters on and off itself (root in the VM) and restores them.
 */
#include <sys/mman.h>

#include "vm_sim.h"

static int export(CUdeviceptr p, size_t n, unsigned long long flags,
		  CUresult *res)
{
	int fd = -1;

	*res = cuMemGetHandleForAddressRange(&fd, p, n,
					     CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
					     flags);
	return *res == CUDA_SUCCESS ? fd : -1;
}

int main(void)
{
	int was_on = sim_get_param("dmabuf"), was_mmap = sim_get_param("dmabuf_mmap");
	long used0, dmabufs0;
	const size_t len = 2 * SIM_MIB;
	uint8_t *buf = malloc(len);
	volatile uint8_t *m;
	CUdeviceptr d, small;
	CUresult res;
	int fd, v;

	if (was_on < 0) {
		SKIP("no nvsim dmabuf parameter");
		return test_done();
	}
	REQUIRE(buf, "malloc");
	sim_cuda_init();
	used0 = nvsim_count("used_pages");
	dmabufs0 = nvsim_count("dmabufs");
	CU_OK(cuMemAlloc(&d, len));

	/* Off: the attribute says so and export is not supported. */
	REQUIRE(sim_set_param("dmabuf", 0) == 0, "cannot set dmabuf=0");
	CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0));
	CHECK(v == 0, "DMA_BUF_SUPPORTED %d with dmabuf=0", v);
	CHECK(export(d, len, 0, &res) < 0 && res == CUDA_ERROR_NOT_SUPPORTED,
	      "export with dmabuf=0: %d", res);

	REQUIRE(sim_set_param("dmabuf", 1) == 0 && sim_set_param("dmabuf_mmap", 1) == 0,
		"cannot set dmabuf=1");
	CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, 0));
	CHECK(v == 1, "DMA_BUF_SUPPORTED %d with dmabuf=1", v);

	/* Bad requests. */
	CHECK(export(d, len, CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE, &res) < 0 &&
	      res == CUDA_ERROR_NOT_SUPPORTED, "PCIe mapping type: %d", res);
	CHECK(export(d + 100, 4096, 0, &res) < 0 && res == CUDA_ERROR_INVALID_VALUE,
	      "unaligned: %d", res);
	CHECK(export(d, len + 4096, 0, &res) < 0 && res == CUDA_ERROR_INVALID_VALUE,
	      "past the end: %d", res);
	CHECK(export(d, 0, 0, &res) < 0 && res == CUDA_ERROR_INVALID_VALUE,
	      "size 0: %d", res);

	/* Export, map, both directions. */
	sim_fill(buf, len, 0, 21);
	CU_OK(cuMemcpyHtoD(d, buf, len));
	fd = export(d, len, 0, &res);
	REQUIRE(fd >= 0, "export: %d", res);
	CHECK(nvsim_count("dmabufs") == dmabufs0 + 1, "dmabufs count");
	CHECK(mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED,
	      "MAP_PRIVATE of a dma-buf");
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(sim_mismatch((const uint8_t *)m, len, 0, 21) < 0,
	      "read through the dma-buf differs at %ld",
	      sim_mismatch((const uint8_t *)m, len, 0, 21));
	for (size_t i = 0; i < 4096; i++)
		m[SIM_PAGE + i] = sim_pattern(i, 22);
	CU_OK(cuMemcpyDtoH(buf, d + SIM_PAGE, 4096));
	CHECK(sim_mismatch(buf, 4096, 0, 22) < 0, "write through the dma-buf");
	/* An mmap at an offset. */
	{
		volatile uint8_t *m2 = mmap(NULL, 8192, PROT_READ, MAP_SHARED,
					    fd, 3 * SIM_PAGE);

		CHECK(m2 != MAP_FAILED && m2[1] == sim_pattern(3 * SIM_PAGE + 1, 21),
		      "mmap at an offset");
		if (m2 != MAP_FAILED)
			munmap((void *)m2, 8192);
	}

	/* The dma-buf holds the memory after cuMemFree. */
	CU_OK(cuMemFree(d));
	CHECK(m[5] == sim_pattern(5, 21), "after cuMemFree");
	CHECK(nvsim_count("used_pages") == used0 + (long)(len / SIM_PAGE),
	      "pages released under a live dma-buf");
	munmap((void *)m, len);
	close(fd);
	CHECK(nvsim_count("dmabufs") == dmabufs0 && nvsim_count("used_pages") == used0,
	      "after close: dmabufs %ld, used_pages %ld (was %ld)",
	      nvsim_count("dmabufs"), nvsim_count("used_pages"), used0);

	/* A sub-allocated pointer: export the host pages around it. */
	CU_OK(cuMemAlloc(&small, 100));
	fd = export(small & ~4095ULL, 4096, 0, &res);
	CHECK(fd >= 0, "export around a small allocation: %d", res);
	if (fd >= 0)
		close(fd);

	/* Drivers before 580: export works, mmap fails with ENOTSUPP. */
	REQUIRE(sim_set_param("dmabuf_mmap", 0) == 0, "cannot set dmabuf_mmap=0");
	fd = export(small & ~4095ULL, 4096, 0, &res);
	REQUIRE(fd >= 0, "export: %d", res);
	errno = 0;
	CHECK(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
	      MAP_FAILED && errno == 524, "mmap with dmabuf_mmap=0: errno %d",
	      errno);
	close(fd);
	CU_OK(cuMemFree(small));

	sim_set_param("dmabuf_mmap", was_mmap);
	sim_set_param("dmabuf", was_on);
	free(buf);
	return test_done();
}
