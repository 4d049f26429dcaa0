/* SPDX-License-Identifier: MIT */
/*
 * gdr_get_callback_flag without a module (lib/backends/buffer_id.c) on the
 * simulated GPU, whose CUDA gives every allocation and every cuMemMap a
 * buffer ID never reused, as CUDA does: with the dmabuf backend
 * (GDRMAP_BACKEND=dmabuf, nvsim's dmabuf=1, set and restored), a pin of
 * cuMemAlloc memory reads 0, then 1 once the memory is freed, and its
 * mapping still reads what it held; a pin of VMM memory reads 1 once the
 * range is unmapped, and stays 1 when new memory is mapped at the same
 * address, while a new pin there reads 0.
 */
#include "gdrapi.h"
#include "vmtest.h"

static int flag_of(gdr_t g, gdr_mh_t mh)
{
	int flag = -1;

	CHECK_RET(gdr_get_callback_flag(g, mh, &flag), 0);
	return flag;
}

static char *pin_map(gdr_t g, CUdeviceptr d, size_t n, gdr_mh_t *mh,
		     void **base)
{
	gdr_info_t info;

	*base = NULL;
	CHECK_RET(gdr_pin_buffer(g, d, n, 0, 0, mh), 0);
	CHECK_RET(gdr_map(g, *mh, base, n), 0);
	CHECK_RET(gdr_get_info(g, *mh, &info), 0);
	return *base ? (char *)*base + (d - info.va) : NULL;
}

int main(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAccessDesc access = {
		.location = prop.location,
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	uint8_t buf[256];
	CUdeviceptr d, v;
	gdr_mh_t mh, again;
	void *base, *base2;
	char *p;
	gdr_t g;

	vm_cuda_init();
	vm_use_dmabuf_backend();
	g = gdr_open();
	REQUIRE(g, "gdr_open (dmabuf): %s", gdrmap_last_error());

	/* cuMemAlloc memory, freed under its pin. */
	d = vm_alloc(2 * MiB);
	gpu_fill(d, 4096, 11);
	p = pin_map(g, d, 4096, &mh, &base);
	REQUIRE(p, "mapped");
	CHECK(flag_of(g, mh) == 0, "0 while the memory lives");
	CU_OK(cuMemFree(d));
	CHECK(flag_of(g, mh) == 1, "1 once cuMemFree freed it");
	CHECK_RET(gdr_copy_from_mapping(mh, buf, p, sizeof(buf)), 0);
	CHECK(find_mismatch(buf, sizeof(buf), 11) < 0,
	      "the mapping still reads the memory it held");
	CHECK_RET(gdr_unmap(g, mh, base, 4096), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);

	/* VMM memory, unmapped and mapped anew at the same address. */
	v = vmm_alloc(0, 2 * MiB);
	p = pin_map(g, v, 2 * MiB, &mh, &base);
	REQUIRE(p, "mapped");
	CHECK(flag_of(g, mh) == 0, "VMM: 0 while mapped");
	CU_OK(cuMemUnmap(v, 2 * MiB));
	CHECK(flag_of(g, mh) == 1, "VMM: 1 once unmapped");
	CU_OK(cuMemCreate(&h, 2 * MiB, &prop, 0));
	CU_OK(cuMemMap(v, 2 * MiB, 0, h, 0));
	CU_OK(cuMemRelease(h));
	CU_OK(cuMemSetAccess(v, 2 * MiB, &access, 1));
	CHECK(flag_of(g, mh) == 1, "VMM: still 1 with new memory there");
	if (pin_map(g, v, 2 * MiB, &again, &base2)) {
		CHECK(flag_of(g, again) == 0, "VMM: a new pin of it: 0");
		CHECK_RET(gdr_unmap(g, again, base2, 2 * MiB), 0);
		CHECK_RET(gdr_unpin_buffer(g, again), 0);
	}
	CHECK_RET(gdr_unmap(g, mh, base, 2 * MiB), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	vmm_free(v, 2 * MiB);
	CHECK_RET(gdr_close(g), 0);
	return test_done();
}
