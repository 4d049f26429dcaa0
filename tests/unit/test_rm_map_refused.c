// SPDX-License-Identifier: MIT
/*
 * RM refuses to map video memory for the CPU (NV_ERR_NOT_SUPPORTED, as
 * under confidential computing):
 *  - refused for gdr_open's probe, the rm backend does not open on that
 *    device, and the reason names RM's status;
 *  - refused for a pin that is already made, gdr_map fails with a message
 *    naming RM_MAP_MEMORY and the status, and leaves nothing: no RM
 *    mapping, no address space, no open device file;
 *  - refused for the second of two objects of one window, the first
 *    object's mapping is undone too;
 *  - once RM maps again, the same pins map and move every byte.
 */
#include "rm_pins.h"

#define GRAN	FAKE_GRAN
#define SEAM	(64UL << 10)

static void nothing_mapped(const char *after, int dups)
{
	struct fake_rm_stats st;

	fake_rm_stats(&st);
	CHECK(st.rm_maps == 0 && st.cpu_bytes == 0 && st.files == 1 &&
	      st.dups == dups,
	      "after %s: %d RM mappings, %zu bytes mapped, %d files open, %d duplicates (want %d)",
	      after, st.rm_maps, st.cpu_bytes, st.files, st.dups, dups);
}

/* Two cuMemCreate allocations of dev side by side. */
static CUdeviceptr pair_of(int dev)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr p = 0;
	int i, ok;

	fake_DevicePrimaryCtxRetain(&fake_cur, dev);
	ok = fake_MemAddressReserve(&p, 2 * GRAN, 0, 0, 0) == CUDA_SUCCESS;
	for (i = 0; ok && i < 2; i++) {
		ok = fake_MemCreate(&h, GRAN, &prop, 0) == CUDA_SUCCESS &&
		     fake_MemMap(p + i * GRAN, GRAN, 0, h, 0) == CUDA_SUCCESS;
		fake_MemRelease(h);
	}
	fake_primary_release(dev);
	fake_cur = NULL;
	CHECK(ok, "two allocations side by side");
	return p;
}

int main(void)
{
	char why[GDR_WHY_LEN];
	CUdeviceptr mem, pair;
	gdr_info_t info;
	gdr_mh_t mh, mh2;
	int err = 0;
	char *va;
	gdr_t g;

	fake_rm_install();
	mem = legacy_alloc(2, 1 << 20);
	pair = pair_of(2);

	/* gdr_open's probe (device 0) is refused its mapping. */
	fake_rm_map_status = NV_ERR_NOT_SUPPORTED;
	g = gdr_open_backend(&gdr_backend_rm, why, sizeof(why), &err);
	CHECK(g == NULL && err != 0, "no rm backend where RM maps nothing (%d)",
	      err);
	CHECK(strstr(why, "NV_ERR_NOT_SUPPORTED") && strstr(why, "RM_MAP_MEMORY"),
	      "the reason names RM's refusal: \"%s\"", why);
	nothing_mapped("a refused probe", 0);
	if (g)
		gdr_close(g);

	fake_rm_map_status = NV_OK;
	fake_enter_start(START_OWN_PRIMARY, 2);
	g = rm_open();
	if (!g)
		return test_done();

	/* A pin made, its map refused. */
	CHECK_RET(gdr_pin_buffer(g, mem, 1 << 20, 0, 0, &mh), 0);
	fake_rm_map_status = NV_ERR_NOT_SUPPORTED;
	va = NULL;
	err = gdr_map(g, mh, (void **)&va, 1 << 20);
	CHECK(err != 0 && va == NULL, "gdr_map fails (%d)", err);
	CHECK(strstr(gdrmap_last_error(), "NV_ERR_NOT_SUPPORTED") &&
	      strstr(gdrmap_last_error(), "RM_MAP_MEMORY"),
	      "the message names RM_MAP_MEMORY and its status: \"%s\"",
	      gdrmap_last_error());
	info = rm_info(g, mh);
	CHECK(!info.mapped, "the pin is not mapped");
	nothing_mapped("a refused map", 1);

	/* Two objects: the first maps, the second is refused. */
	CHECK_RET(gdr_pin_buffer(g, pair + GRAN - SEAM, 2 * SEAM, 0, 0, &mh2),
		  0);
	fake_rm_map_skip = 1;
	err = gdr_map(g, mh2, (void **)&va, 2 * SEAM);
	CHECK(err != 0, "the map of the second object is refused (%d)", err);
	nothing_mapped("half a window mapped", 3);

	/* RM maps again. */
	fake_rm_map_status = NV_OK;
	fake_rm_map_skip = 0;
	CHECK_RET(gdr_map(g, mh, (void **)&va, 1 << 20), 0);
	rm_both_ways(mh, va, mem, 1 << 20, 5, "after the refusal");
	CHECK_RET(gdr_unmap(g, mh, va, 1 << 20), 0);
	CHECK_RET(gdr_map(g, mh2, (void **)&va, 2 * SEAM), 0);
	rm_both_ways(mh2, va, pair + GRAN - SEAM, SEAM, 6, "first half");
	rm_both_ways(mh2, va + SEAM, pair + GRAN, SEAM, 7, "second half");
	CHECK_RET(gdr_unmap(g, mh2, va, 2 * SEAM), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh2), 0);
	CHECK_RET(gdr_close(g), 0);
	fake_leave_start(START_OWN_PRIMARY, 2);
	/* Devices 0 (gdr_open's first probe) and 2. */
	return rm_done(2);
}
