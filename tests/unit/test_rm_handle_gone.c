// SPDX-License-Identifier: MIT
/*
 * The memory is freed between libcuda's export (which named its RM
 * object) and the library's dup of that object: RM answers
 * NV_ERR_OBJECT_NOT_FOUND.  The pin fails with an error that says the
 * memory is gone (the core explains it from what CUDA knows by then),
 * nothing is mapped, and the duplicates already made
 * for the window's other objects are freed: nothing is left in the fake
 * RM.  Both for cuMemAlloc memory (cuMemFree) and for the second of two
 * cuMemCreate allocations of one window (cuMemUnmap of its last
 * mapping).  Memory allocated afterwards pins as usual.
 */
#include "rm_pins.h"

#define GRAN	FAKE_GRAN
#define SEAM	(64UL << 10)

static CUdeviceptr victim;
static size_t victim_len;
static int freed;

/* Free the victim once an export has named it (in the library's scope:
 * the owner's context is current). */
static void free_after_export(CUdeviceptr va, uint64_t len)
{
	if (freed || victim < va || victim >= va + len)
		return;
	freed = victim_len ?
		fake_MemUnmap(victim, victim_len) == CUDA_SUCCESS :
		fake_MemFree(victim) == CUDA_SUCCESS;
}

static void nothing_left(const char *after)
{
	struct fake_rm_stats st;

	fake_rm_stats(&st);
	CHECK(st.dups == 0 && st.rm_maps == 0 && st.cpu_bytes == 0,
	      "after %s: %d duplicates, %d mappings, %zu bytes left", after,
	      st.dups, st.rm_maps, st.cpu_bytes);
}

int main(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, 2 },
	};
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr pair = 0, again;
	gdr_mh_t mh;
	int err, i, ok;
	gdr_t g;

	fake_rm_install();
	fake_enter_start(START_OWN_PRIMARY, 2);
	g = rm_open();
	if (!g)
		return test_done();
	fake_rm_after_export = free_after_export;

	/* cuMemAlloc memory, freed after the export. */
	victim = legacy_alloc(2, 1 << 20);
	err = gdr_pin_buffer(g, victim, 1 << 20, 0, 0, &mh);
	CHECK(freed, "the memory was freed between export and dup");
	CHECK(err == EINVAL, "the pin fails (%d)", err);
	CHECK(strstr(gdrmap_last_error(), "freed") != NULL,
	      "the error says the memory is gone: \"%s\"",
	      gdrmap_last_error());
	nothing_left("a cuMemFree between export and dup");

	/* Two allocations; the second unmapped after its export. */
	ok = fake_MemAddressReserve(&pair, 2 * GRAN, 0, 0, 0) == CUDA_SUCCESS;
	for (i = 0; ok && i < 2; i++) {
		ok = fake_MemCreate(&h, GRAN, &prop, 0) == CUDA_SUCCESS &&
		     fake_MemMap(pair + i * GRAN, GRAN, 0, h, 0) ==
		     CUDA_SUCCESS;
		fake_MemRelease(h);
	}
	CHECK(ok, "two allocations side by side");
	freed = 0;
	victim = pair + GRAN;
	victim_len = GRAN;
	err = gdr_pin_buffer(g, pair + GRAN - SEAM, 2 * SEAM, 0, 0, &mh);
	CHECK(freed, "the second allocation was unmapped after its export");
	CHECK(err != 0, "the pin fails (%d)", err);
	/* The core explains it from CUDA's state now: the range runs past
	 * the one allocation left. */
	CHECK(strstr(gdrmap_last_error(), "runs past the end of its allocation"),
	      "the error says the memory is gone: \"%s\"",
	      gdrmap_last_error());
	nothing_left("an unmap between export and dup");

	fake_rm_after_export = NULL;
	again = legacy_alloc(2, 1 << 20);
	pin_and_copy(g, 2, START_OWN_PRIMARY, again, 5, 9000);
	CHECK_RET(gdr_close(g), 0);
	fake_leave_start(START_OWN_PRIMARY, 2);
	return rm_done(1);
}
