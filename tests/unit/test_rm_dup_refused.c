// SPDX-License-Identifier: MIT
/*
 * RM refuses to duplicate CUDA's memory object into the library's client
 * (NV_ERR_INSUFFICIENT_PERMISSIONS: memory of a MIG instance the client
 * cannot join).  That is memory this backend cannot map, not a caller's
 * mistake:
 *  - refused for gdr_open's probe, the rm backend does not open on that
 *    device, and the reason names the refusal;
 *  - refused for one pin on a device that works, the pin is served
 *    copy-only (as the module-free backends serve any memory they cannot
 *    map): gdr_map gives no CPU mapping, gdr_copy_* move every byte by
 *    DMA, and the message says copy-only and names the refusal;
 *  - with GDRMAP_COPY_ONLY=0 the pin is refused instead, naming it;
 *  - once RM allows it again, the same memory maps.
 * Nothing is left in the fake RM after any of them.
 */
#include "rm_pins.h"

#define SIZE	(1UL << 20)
#define REFUSAL	"NV_ERR_INSUFFICIENT_PERMISSIONS"

static void nothing_left(const char *after)
{
	struct fake_rm_stats st;

	fake_rm_stats(&st);
	CHECK(st.dups == 0 && st.rm_maps == 0 && st.cpu_bytes == 0,
	      "after %s: %d duplicates, %d RM mappings, %zu bytes left",
	      after, st.dups, st.rm_maps, st.cpu_bytes);
}

int main(void)
{
	unsigned char data[5000], back[5002];
	char why[GDR_WHY_LEN], log[16384];
	int err = 0, dma, i, bad;
	CUdeviceptr mem;
	gdr_info_t info;
	gdr_mh_t mh;
	char *va;
	gdr_t g;

	/* The copy-only message is at the info level. */
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	setenv("GDRCOPY_LOG_LEVEL", "2", 1);
	unsetenv("GDRMAP_COPY_ONLY");
	fake_rm_install();
	mem = legacy_alloc(2, SIZE);

	/* gdr_open's probe (device 0, no current context) is refused. */
	fake_rm_dup_status = NV_ERR_INSUFFICIENT_PERMISSIONS;
	g = gdr_open_backend(&gdr_backend_rm, why, sizeof(why), &err);
	CHECK(g == NULL && err != 0, "the rm backend does not open where RM refuses the dup (%d)",
	      err);
	CHECK(strstr(why, REFUSAL) != NULL, "the reason names the refusal: \"%s\"",
	      why);
	nothing_left("a refused probe");
	if (g)
		gdr_close(g);

	/* Device 2 works. */
	fake_rm_dup_status = NV_OK;
	fake_enter_start(START_OWN_PRIMARY, 2);
	g = rm_open();
	if (!g)
		return test_done();

	/* One pin refused: copy-only, named. */
	fake_rm_dup_status = NV_ERR_INSUFFICIENT_PERMISSIONS;
	rm_capture_begin();
	err = gdr_pin_buffer(g, mem + 4096, sizeof(data), 0, 0, &mh);
	rm_capture_end(log, sizeof(log));
	CHECK(err == 0, "the pin is served copy-only, not refused (%d: %s)",
	      err, gdrmap_last_error());
	CHECK(strstr(log, "copy-only") && strstr(log, REFUSAL),
	      "the message says copy-only and names the refusal: \"%s\"",
	      log);
	nothing_left("a refused dup");
	if (err == 0) {
		info = rm_info(g, mh);
		CHECK(!info.mapped &&
		      info.mapping_type == GDR_MAPPING_TYPE_NONE,
		      "no CPU mapping (type %d)", info.mapping_type);
		CHECK_RET(gdr_map(g, mh, (void **)&va, sizeof(data)), 0);
		dma = atomic_load(&fake_dma_copies);
		memset(back, POISON, sizeof(back));
		CHECK(fake_gpu_rw(mem + 4096, back, sizeof(back), 1) == 0,
		      "poison");
		pattern(data, sizeof(data), 41);
		CHECK_RET(gdr_copy_to_mapping(mh, va + (mem + 4096 - info.va),
					      data, sizeof(data)), 0);
		memset(back, 0xa5, sizeof(back));
		CHECK(fake_gpu_rw(mem + 4096, back, sizeof(data) + 2, 0) == 0,
		      "read the GPU side");
		bad = memcmp(back, data, sizeof(data)) != 0 ||
		      back[sizeof(data)] != POISON ||
		      back[sizeof(data) + 1] != POISON;
		pattern(data, sizeof(data), 42);
		CHECK(fake_gpu_rw(mem + 4096, data, sizeof(data), 1) == 0,
		      "write the GPU side");
		memset(back, POISON, sizeof(back));
		CHECK_RET(gdr_copy_from_mapping(mh, back + 1,
						va + (mem + 4096 - info.va),
						sizeof(data)), 0);
		bad += back[0] != POISON || back[sizeof(data) + 1] != POISON;
		for (i = 0; i < (int)sizeof(data); i++)
			bad += back[i + 1] != data[i];
		CHECK(bad == 0, "%d bytes wrong through the copy-only pin", bad);
		CHECK(atomic_load(&fake_dma_copies) == dma + 2,
		      "the copies went by DMA (%d)",
		      atomic_load(&fake_dma_copies) - dma);
		CHECK_RET(gdr_unmap(g, mh, va, sizeof(data)), 0);
		CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	}

	/* GDRMAP_COPY_ONLY=0: refused, named. */
	setenv("GDRMAP_COPY_ONLY", "0", 1);
	CHECK_RET(gdr_pin_buffer(g, mem, 4096, 0, 0, &mh), EINVAL);
	CHECK(strstr(gdrmap_last_error(), REFUSAL) != NULL,
	      "the refusal names RM's: \"%s\"", gdrmap_last_error());
	unsetenv("GDRMAP_COPY_ONLY");
	nothing_left("a refused pin");

	/* RM allows it again: mapped. */
	fake_rm_dup_status = NV_OK;
	pin_and_copy(g, 2, START_OWN_PRIMARY, mem, 4096 + 3, 5000);

	CHECK_RET(gdr_close(g), 0);
	fake_leave_start(START_OWN_PRIMARY, 2);
	/* Devices 0 (gdr_open's first probe) and 2. */
	return rm_done(2);
}
