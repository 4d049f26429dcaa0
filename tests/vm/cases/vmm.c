/* SPDX-License-Identifier: MIT */
/*
 * GPU memory from the virtual memory management API (cuMemCreate +
 * cuMemMap, as NCCL allocates): one physical allocation mapped at two
 * device addresses, pinned and CPU-mapped through both, is the same memory;
 * a pin may not span two cuMemMap mappings; cuMemUnmap of one address
 * invalidates only that one's pin (non-persistent mode).
 */
#include "vmtest.h"

#define VMM_SIZE (4 * MiB)

int main(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
		.allocFlags = { .gpuDirectRDMACapable = 1 },
	};
	CUmemAccessDesc access = {
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	long used0 = nvsim_count("used_pages");
	CUmemGenericAllocationHandle mem;
	volatile uint8_t *m1, *m2;
	CUdeviceptr va;
	uint32_t flag;
	uint64_t h1, h2, hx;
	size_t gran = 0;
	int fd, persistent;

	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	CU_OK(cuMemGetAllocationGranularity(&gran, &prop,
					    CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	REQUIRE(gran && VMM_SIZE % gran == 0, "granularity %zu", gran);
	CU_OK(cuMemCreate(&mem, VMM_SIZE, &prop, 0));
	CU_OK(cuMemAddressReserve(&va, 2 * VMM_SIZE, 0, 0, 0));
	CU_OK(cuMemMap(va, VMM_SIZE, 0, mem, 0));
	CU_OK(cuMemMap(va + VMM_SIZE, VMM_SIZE, 0, mem, 0));
	CU_OK(cuMemSetAccess(va, 2 * VMM_SIZE, &access, 1));
	/* The mappings hold the memory now. */
	CU_OK(cuMemRelease(mem));
	gpu_fill(va, VMM_SIZE, 101);

	REQUIRE(gdrdrv_pin(fd, va, VMM_SIZE, &h1) == 0, "pin of map 1");
	REQUIRE(gdrdrv_pin(fd, va + VMM_SIZE, VMM_SIZE, &h2) == 0,
		"pin of map 2");
	CHECK(gdrdrv_pin(fd, va + VMM_SIZE - GPU_PAGE, 2 * GPU_PAGE, &hx) != 0,
	      "a pin across two cuMemMap mappings worked");
	m1 = gdrdrv_mmap(fd, h1, VMM_SIZE);
	m2 = gdrdrv_mmap(fd, h2, VMM_SIZE);
	REQUIRE(m1 != MAP_FAILED && m2 != MAP_FAILED, "mmap: %s",
		strerror(errno));
	CHECK(map_mismatch(m2, VMM_SIZE, 101) < 0,
	      "second address shows other data than the first");
	map_fill(m2, VMM_SIZE, 102);
	CHECK(map_mismatch(m1, VMM_SIZE, 102) < 0,
	      "write through one alias not seen through the other");
	CHECK(gpu_mismatch(va, VMM_SIZE, 102) < 0, "GPU view of the alias");

	/* Unmapping the second address invalidates only its pin. */
	CU_OK(cuMemUnmap(va + VMM_SIZE, VMM_SIZE));
	CHECK_RET(gdrdrv_cb_flag(fd, h2, &flag), 0);
	CHECK(flag == !persistent, "pin 2's flag %u after its cuMemUnmap",
	      flag);
	CHECK_RET(gdrdrv_cb_flag(fd, h1, &flag), 0);
	CHECK(flag == 0, "pin 1's flag %u after the other's cuMemUnmap", flag);
	CHECK(map_mismatch(m1, VMM_SIZE, 102) < 0,
	      "pin 1 lost its data when the other address went");

	munmap((void *)m1, VMM_SIZE);
	munmap((void *)m2, VMM_SIZE);
	CHECK_RET(gdrdrv_unpin(fd, h1), 0);
	CHECK_RET(gdrdrv_unpin(fd, h2), 0);
	CU_OK(cuMemUnmap(va, VMM_SIZE));
	CU_OK(cuMemAddressFree(va, 2 * VMM_SIZE));
	close(fd);
	CHECK(nvsim_count("outstanding_pins") == 0, "outstanding_pins %ld",
	      nvsim_count("outstanding_pins"));
	CHECK(nvsim_count("used_pages") == used0,
	      "used_pages %ld, was %ld: the allocation leaked",
	      nvsim_count("used_pages"), used0);
	return test_done();
}
