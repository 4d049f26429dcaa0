// SPDX-License-Identifier: MIT
/*
 * gdr_get_callback_flag without a module (lib/backends/buffer_id.c), on a fake
 * CUDA that gives every allocation and every cuMemMap a new buffer ID, as
 * CUDA does: under the vulkan and dmabuf backends and for copy-only pins,
 * the flag is 0 while the memory is the one pinned, and 1 once it was
 * freed, unmapped or mapped anew at the same address; the pin's own
 * mapping (or copies) keep working on the memory it holds; a new pin of
 * what is there now starts at 0 again.
 */
#include "fake_vulkan.h"
#include "owner_pins.h"

static int flag_of(gdr_t g, gdr_mh_t mh)
{
	int flag = -1;

	LIB(gdr_get_callback_flag(g, mh, &flag), 0);
	return flag;
}

/* A write and a read through the pin, checked: it still works. */
static void still_works(gdr_mh_t mh, char *p, unsigned int seed,
			const char *what)
{
	unsigned char out[64], in[64];

	pattern(out, sizeof(out), seed);
	memset(in, POISON, sizeof(in));
	LIB(gdr_copy_to_mapping(mh, p, out, sizeof(out)), 0);
	LIB(gdr_copy_from_mapping(mh, in, p, sizeof(in)), 0);
	CHECK(!memcmp(in, out, sizeof(in)), "%s: the pin still moves the right bytes",
	      what);
}

static char *pin_map(gdr_t g, CUdeviceptr addr, gdr_mh_t *mh, char **base)
{
	gdr_info_t info;

	*base = NULL;
	LIB(gdr_pin_buffer(g, addr, 4096, 0, 0, mh), 0);
	LIB(gdr_map(g, *mh, (void **)base, 4096), 0);
	LIB(gdr_get_info(g, *mh, &info), 0);
	return *base ? *base + (addr - info.va) : NULL;
}

static void unmap_unpin(gdr_t g, gdr_mh_t mh, char *base)
{
	LIB(gdr_unmap(g, mh, base, 4096), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
}

/* cuMemAlloc memory freed under a pin (mapped by dmabuf, copy-only by
 * vulkan).  A copy-only pin has nothing left to copy to afterwards. */
static void legacy_freed(gdr_t g, int dev, int mapped, const char *what)
{
	CUdeviceptr p = legacy_alloc(dev, 1 << 20);
	gdr_mh_t mh;
	char *base, *cpu;

	cpu = pin_map(g, p, &mh, &base);
	if (!cpu)
		return;
	CHECK(flag_of(g, mh) == 0, "%s: 0 while the memory lives", what);
	still_works(mh, cpu, 1, what);
	fake_ctx_create(dev, 2);
	CHECK(fake_MemFree(p) == CUDA_SUCCESS, "free");
	fake_cur = NULL;
	CHECK(flag_of(g, mh) == 1, "%s: 1 once the memory was freed", what);
	CHECK(flag_of(g, mh) == 1, "%s: and it stays 1", what);
	if (mapped)
		still_works(mh, cpu, 2, what);
	unmap_unpin(g, mh, base);
}

/* VMM memory unmapped and mapped anew at the same address. */
static void vmm_remapped(gdr_t g, int dev, const char *what)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
	CUmemGenericAllocationHandle h;
	CUdeviceptr p = vmm_alloc(dev, 2 << 20,
				  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	gdr_mh_t mh, again;
	char *base, *cpu, *base2;

	cpu = pin_map(g, p + 4096, &mh, &base);
	if (!cpu)
		return;
	CHECK(flag_of(g, mh) == 0, "%s: 0 while mapped", what);
	fake_DevicePrimaryCtxRetain(&fake_cur, dev);
	CHECK(fake_MemUnmap(p, 2 << 20) == CUDA_SUCCESS, "unmap");
	fake_cur = NULL;
	CHECK(flag_of(g, mh) == 1, "%s: 1 once unmapped", what);
	fake_DevicePrimaryCtxRetain(&fake_cur, dev);
	CHECK(fake_MemCreate(&h, 2 << 20, &prop, 0) == CUDA_SUCCESS &&
	      fake_MemMap(p, 2 << 20, 0, h, 0) == CUDA_SUCCESS,
	      "map new memory at the same address");
	fake_MemRelease(h);
	fake_primary_release(dev);
	fake_primary_release(dev);
	fake_cur = NULL;
	CHECK(flag_of(g, mh) == 1, "%s: still 1 with new memory there", what);
	still_works(mh, cpu, 3, what);
	if (pin_map(g, p + 4096, &again, &base2)) {
		CHECK(flag_of(g, again) == 0, "%s: a new pin of the new memory: 0",
		      what);
		unmap_unpin(g, again, base2);
	}
	unmap_unpin(g, mh, base);
}

int main(void)
{
	char why[512];
	gdr_t g;
	int err = 0;

	gdr_cuda_use_syms(&fake_syms);
	g = gdr_open_backend(&gdr_backend_vulkan, why, sizeof(why), &err);
	CHECK(g != NULL, "vulkan opens: %s", why);
	if (g) {
		vmm_remapped(g, 1, "vulkan, VMM");
		legacy_freed(g, 2, 0, "vulkan, copy-only cuMemAlloc");
		CHECK_RET(gdr_close(g), 0);
	}
	g = open_dmabuf();
	if (g) {
		legacy_freed(g, 0, 1, "dmabuf, cuMemAlloc");
		vmm_remapped(g, 0, "dmabuf, VMM");
		CHECK_RET(gdr_close(g), 0);
	}
	return owner_done();
}
