// SPDX-License-Identifier: MIT
/*
 * What the vulkan backend cannot map, and what happens when memory is
 * freed under a pin.
 *  - host memory: EINVAL;
 *  - legacy cuMemAlloc memory, and a range across the end of an
 *    allocation: pinned copy-only (no CPU mapping: test_gpu_copy_only
 *    copies through them);
 *  - CUDA memory freed while pinned: the pin keeps it alive, the mapping
 *    keeps working until unpin, and unpin succeeds (as gdrdrv's persistent
 *    mode does);
 *  - many pins of one allocation share one import: unpinning one leaves
 *    the others working.
 * On every GPU, from every kind of current context (gpu.h).
 */
#include <stdio.h>

#include "gpu.h"

static void one_case(const struct gpu_case *c)
{
	unsigned long base = 0;
	uint64_t v = 0x1122334455667788ULL ^ (uint64_t)c->dev, back = ~v;
	gdr_mh_t a, b, cc;
	gdr_info_t info;
	CUdeviceptr legacy;
	char *va, *vb;
	static char host[4096];
	gdr_t g = c->g;
	int backend = 0;

	gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &backend);
	if (backend != GDRMAP_BACKEND_VULKAN) {
		SKIP("these cases are for the vulkan backend (this is %d)",
		     backend);
		return;
	}

	CU_ON(c->dev, cu.MemAlloc(&legacy, 1 << 20));
	LIB(gdr_pin_buffer(g, legacy, 4096, 0, 0, &a), 0);
	LIB(gdr_get_info(g, a, &info), 0);
	CHECK(info.mapping_type == GDR_MAPPING_TYPE_NONE,
	      "cuMemAlloc memory is pinned copy-only");
	LIB(gdr_unpin_buffer(g, a), 0);
	CU_ON(c->dev, cu.MemFree(legacy));
	LIB(gdr_pin_buffer(g, (unsigned long)host, 4096, 0, 0, &a), EINVAL);

	LIB(gdrmap_mem_alloc(c->dev, 2 << 20, &base), 0);
	if (!base)
		return;
	LIB(gdr_pin_buffer(g, base + (2 << 20) - 16, 4096, 0, 0, &a), 0);
	LIB(gdr_get_info(g, a, &info), 0);
	CHECK(info.mapping_type == GDR_MAPPING_TYPE_NONE,
	      "a range past the allocation is pinned copy-only");
	LIB(gdr_unpin_buffer(g, a), 0);

	/* Shared import: a and b in one allocation, cc too. */
	LIB(gdr_pin_buffer(g, base + 100, 8, 0, 0, &a), 0);
	LIB(gdr_pin_buffer(g, base + (1 << 20), 8, 0, 0, &b), 0);
	LIB(gdr_pin_buffer(g, base, 2 << 20, 0, 0, &cc), 0);
	LIB(gdr_map(g, a, (void **)&va, 8), 0);
	LIB(gdr_map(g, b, (void **)&vb, 8), 0);
	LIB(gdr_unmap(g, a, va, 8), 0);
	LIB(gdr_unpin_buffer(g, a), 0);
	LIB(gdr_get_info(g, b, &info), 0);
	vb += base + (1 << 20) - info.va;
	LIB(gdr_copy_to_mapping(b, vb, &v, 8), 0);
	LIB(gdr_copy_from_mapping(b, &back, vb, 8), 0);
	CHECK(back == v, "b works after a's unpin");
	back = ~v;
	CU_ON(c->dev, cu.MemcpyDtoH(&back, base + (1 << 20), 8));
	CHECK(back == v, "the GPU sees what b wrote");

	/* Free the memory under b and cc. */
	LIB(gdrmap_mem_free(base), 0);
	v = ~v;
	back = ~v;
	LIB(gdr_copy_to_mapping(b, vb, &v, 8), 0);
	LIB(gdr_copy_from_mapping(b, &back, vb, 8), 0);
	CHECK(back == v, "mapping still works after the memory was freed");
	LIB(gdr_unmap(g, b, vb - (base + (1 << 20) - info.va), 8), 0);
	LIB(gdr_unpin_buffer(g, b), 0);
	LIB(gdr_unpin_buffer(g, cc), 0);
}

int main(void)
{
	/* The vulkan backend's cases: an environment that names a backend
	 * is kept. */
	setenv("GDRMAP_BACKEND", "vulkan", 0);
	return gpu_run(one_case);
}
