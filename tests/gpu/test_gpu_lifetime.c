// SPDX-License-Identifier: MIT
/*
 * What the module-free backends refuse, and what happens when memory is
 * freed under a pin.
 *  - legacy cuMemAlloc memory and host memory: EINVAL (the log says to
 *    load gdrdrv or allocate with gdrmap_mem_alloc / cuMemCreate);
 *  - a range across the end of an allocation: EINVAL;
 *  - CUDA memory freed while pinned: the pin keeps it alive, the mapping
 *    keeps working until unpin, and unpin succeeds (as gdrdrv's persistent
 *    mode does);
 *  - many pins of one allocation share one import: unpinning one leaves
 *    the others working.
 */
#include <stdio.h>

#include "gpu.h"

int main(void)
{
	unsigned long base;
	uint64_t v = 0x1122334455667788ULL, back = 0;
	gdr_mh_t a, b, c;
	gdr_info_t info;
	CUdeviceptr legacy;
	char *va, *vb;
	static char host[4096];
	int backend = 0;
	gdr_t g;

	if (gpu_setup())
		return test_done();
	g = gpu_gdr_open();
	if (!g)
		return test_done();
	gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &backend);
	if (backend != GDRMAP_BACKEND_VULKAN) {
		SKIP("these cases are for the vulkan backend (this is %d)",
		     backend);
		gdr_close(g);
		return test_done();
	}

	CU_OK(cu.MemAlloc(&legacy, 1 << 20));
	CHECK_RET(gdr_pin_buffer(g, legacy, 4096, 0, 0, &a), EINVAL);
	CU_OK(cu.MemFree(legacy));
	CHECK_RET(gdr_pin_buffer(g, (unsigned long)host, 4096, 0, 0, &a),
		  EINVAL);

	CHECK_RET(gdrmap_mem_alloc(0, 2 << 20, &base), 0);
	CHECK_RET(gdr_pin_buffer(g, base + (2 << 20) - 16, 4096, 0, 0, &a),
		  EINVAL);

	/* Shared import: a and b in one allocation, c too. */
	CHECK_RET(gdr_pin_buffer(g, base + 100, 8, 0, 0, &a), 0);
	CHECK_RET(gdr_pin_buffer(g, base + (1 << 20), 8, 0, 0, &b), 0);
	CHECK_RET(gdr_pin_buffer(g, base, 2 << 20, 0, 0, &c), 0);
	CHECK_RET(gdr_map(g, a, (void **)&va, 8), 0);
	CHECK_RET(gdr_map(g, b, (void **)&vb, 8), 0);
	CHECK_RET(gdr_unmap(g, a, va, 8), 0);
	CHECK_RET(gdr_unpin_buffer(g, a), 0);
	CHECK_RET(gdr_get_info(g, b, &info), 0);
	vb += base + (1 << 20) - info.va;
	CHECK_RET(gdr_copy_to_mapping(b, vb, &v, 8), 0);
	CHECK_RET(gdr_copy_from_mapping(b, &back, vb, 8), 0);
	CHECK(back == v, "b works after a's unpin");
	CU_OK(cu.MemcpyDtoH(&back, base + (1 << 20), 8));
	CHECK(back == v, "the GPU sees what b wrote");

	/* Free the memory under b and c. */
	CHECK_RET(gdrmap_mem_free(base), 0);
	v = ~v;
	CHECK_RET(gdr_copy_to_mapping(b, vb, &v, 8), 0);
	CHECK_RET(gdr_copy_from_mapping(b, &back, vb, 8), 0);
	CHECK(back == v, "mapping still works after the memory was freed");
	CHECK_RET(gdr_unmap(g, b, vb - (base + (1 << 20) - info.va), 8), 0);
	CHECK_RET(gdr_unpin_buffer(g, b), 0);
	CHECK_RET(gdr_unpin_buffer(g, c), 0);
	CHECK_RET(gdr_close(g), 0);
	return test_done();
}
