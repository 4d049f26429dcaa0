// SPDX-License-Identifier: MIT
/*
 * The rm backend maps a window over several RM objects as one mapping:
 * two cuMemCreate allocations (no shareable handle type) mapped side by
 * side in one reservation are two RM objects; a pin across the seam is
 * one contiguous CPU mapping of both, and every byte moves both ways
 * across it, each half landing in its own allocation with the bytes
 * around the range untouched; a pin of the whole reservation too.  While
 * mapped, RM holds one mapping per object; after the unpin, none.
 */
#include "rm_pins.h"

#define GRAN	FAKE_GRAN
#define SEAM	(64UL << 10)

/* n handles of GRAN bytes each, side by side from the address returned. */
static CUdeviceptr side_by_side(int dev, int n, int types)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = types,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
	CUmemAccessDesc access = {
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h = 0;
	CUdeviceptr p = 0;
	int i, ok;

	fake_DevicePrimaryCtxRetain(&fake_cur, dev);
	ok = fake_MemAddressReserve(&p, n * GRAN, 0, 0, 0) == CUDA_SUCCESS;
	for (i = 0; ok && i < n; i++) {
		ok = fake_MemCreate(&h, GRAN, &prop, 0) == CUDA_SUCCESS &&
		     fake_MemMap(p + i * GRAN, GRAN, 0, h, 0) ==
		     CUDA_SUCCESS;
		fake_MemRelease(h);	/* the mapping keeps it */
	}
	ok = ok && fake_MemSetAccess(p, n * GRAN, &access, 1) == CUDA_SUCCESS;
	fake_primary_release(dev);
	fake_cur = NULL;
	CHECK(ok, "%d allocations side by side on device %d", n, dev);
	return p;
}

/* Pin [p, +n) of the pair at base, both halves checked in their own
 * allocations, and the GPU bytes around the range left alone. */
static void across(gdr_t g, int dev, CUdeviceptr base, CUdeviceptr p,
		   size_t n)
{
	unsigned char *data = malloc(n), *gpu = malloc(2 * GRAN + 2);
	struct fake_rm_stats before, st;
	size_t i, bad = 0;
	gdr_info_t info;
	gdr_mh_t mh;
	char *mbase, *m;

	if (!data || !gpu) {
		CHECK(0, "buffers");
		free(data);
		free(gpu);
		return;
	}
	/* The GPU side poisoned, both allocations whole. */
	memset(gpu, POISON, 2 * GRAN);
	CHECK(fake_gpu_rw(base, gpu, GRAN, 1) == 0 &&
	      fake_gpu_rw(base + GRAN, gpu, GRAN, 1) == 0, "poison");
	fake_rm_stats(&before);
	fake_enter_start(START_OWN_PRIMARY, dev);
	m = rm_pin_map(g, p, n, &mh, &mbase, &info);
	CHECK(info.va == p && info.mapped_size == n,
	      "the window is [0x%llx, +%llu), not exactly the range",
	      (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size);
	fake_rm_stats(&st);
	CHECK(st.dups == before.dups + 2 && st.rm_maps == before.rm_maps + 2,
	      "two objects duplicated and mapped (%d dups, %d mappings)",
	      st.dups - before.dups, st.rm_maps - before.rm_maps);
	CHECK(st.cpu_bytes == before.cpu_bytes + n,
	      "one range of %zu bytes mapped, not %zu", n,
	      st.cpu_bytes - before.cpu_bytes);
	if (m) {
		pattern(data, n, (unsigned int)n / 4096 + (unsigned int)dev);
		CHECK_RET(gdr_copy_to_mapping(mh, m, data, n), 0);
		memset(gpu, 0xa5, 2 * GRAN);
		CHECK(fake_gpu_rw(base, gpu, GRAN, 0) == 0 &&
		      fake_gpu_rw(base + GRAN, gpu + GRAN, GRAN, 0) == 0,
		      "read both allocations");
		for (i = 0; i < 2 * GRAN; i++)
			bad += gpu[i] != (base + i >= p && base + i < p + n ?
					  data[base + i - p] : POISON);
		CHECK(bad == 0, "device %d: %zu of %lu bytes of the two allocations wrong after a write across the seam",
		      dev, bad, 2 * GRAN);

		/* The GPU writes each half; one read gets both. */
		pattern(data, n, 99 + (unsigned int)dev);
		CHECK(fake_gpu_rw(p, data, base + GRAN - p, 1) == 0 &&
		      fake_gpu_rw(base + GRAN, data + (base + GRAN - p),
				  p + n - (base + GRAN), 1) == 0,
		      "write both halves on the GPU");
		memset(gpu, POISON, n + 2);
		CHECK_RET(gdr_copy_from_mapping(mh, gpu + 1, m, n), 0);
		bad = gpu[0] != POISON || gpu[n + 1] != POISON;
		for (i = 0; i < n; i++)
			bad += gpu[i + 1] != data[i];
		CHECK(bad == 0, "device %d: %zu of %zu bytes wrong in a read across the seam",
		      dev, bad, n);
	}
	rm_unmap_unpin(g, mh, mbase, info.mapped_size);
	fake_leave_start(START_OWN_PRIMARY, dev);
	fake_rm_stats(&st);
	CHECK(st.dups == before.dups && st.rm_maps == before.rm_maps &&
	      st.cpu_bytes == before.cpu_bytes,
	      "the unpin leaves nothing (%d dups, %d mappings, %zu bytes)",
	      st.dups - before.dups, st.rm_maps - before.rm_maps,
	      st.cpu_bytes - before.cpu_bytes);
	free(data);
	free(gpu);
}

int main(void)
{
	CUdeviceptr pair[2];
	gdr_t g;

	fake_rm_install();
	/* No shareable handle type: memory the dmabuf backend cannot map. */
	pair[0] = side_by_side(0, 2, 0);
	pair[1] = side_by_side(2, 2, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	g = rm_open();
	if (!g)
		return test_done();
	across(g, 0, pair[0], pair[0] + GRAN - SEAM, 2 * SEAM);
	across(g, 2, pair[1], pair[1] + GRAN - SEAM, 2 * SEAM);
	across(g, 0, pair[0], pair[0], 2 * GRAN);
	CHECK_RET(gdr_close(g), 0);
	return rm_done(2);
}
