// SPDX-License-Identifier: MIT
/*
 * GDRMAP_COPY_PATH (lib/paths/path_auto.c): dma sends every best-path copy to
 * the copy engine, threads every read large enough to split to the
 * helpers (writes, which threads do not serve, stay on the mapping), and
 * a value that is not a path is reported and ignored.  Every copy
 * checked byte by byte.  The variable is read when a device, mapping type
 * and direction is first used, so each case uses a device of its own.
 */
#include <stdlib.h>

#include "fake_vulkan.h"
#include "owner_pins.h"
#include "paths/threads.h"

#define AREA	(2UL << 20)

static unsigned char *out, *in;

static void one_device(gdr_t g, int dev, const char *value, int want_read,
		       int want_write)
{
	CUdeviceptr p = vmm_alloc(dev, AREA,
				  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	int k, got, dma = atomic_load(&fake_dma_copies), bad = 0;
	gdr_info_t info;
	gdr_mh_t mh;
	void *va = NULL;
	char *map;

	setenv("GDRMAP_COPY_PATH", value, 1);
	LIB(gdr_pin_buffer(g, p, AREA, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, &va, AREA), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	if (!va)
		return;
	map = (char *)va + (p - info.va);
	for (k = 0; k < 10; k++) {
		pattern(out, 70000, (unsigned int)(dev * 10 + k));
		memset(in, POISON, 70000);
		LIB(gdrmap_copy_to_mapping(mh, map + 3, out, 70000), 0);
		if (k == 0 && want_read < 0)
			CHECK(strstr(gdrmap_last_error(), value) != NULL,
			      "GDRMAP_COPY_PATH=%s is reported: %s", value,
			      gdrmap_last_error());
		LIB(gdrmap_copy_from_mapping(mh, in, map + 3, 70000), 0);
		bad += memcmp(in, out, 70000) != 0;
		CHECK(fake_gpu_rw(p + 3, in, 70000, 0) == 0, "GPU view");
		bad += memcmp(in, out, 70000) != 0;
	}
	CHECK(bad == 0, "GDRMAP_COPY_PATH=%s: %d copies wrong", value, bad);
	CHECK_RET(gdrmap_copy_path(mh, 0, 70000, &got), 0);
	CHECK(got == want_read || want_read < 0, "GDRMAP_COPY_PATH=%s: reads by %d, not %d",
	      value, got, want_read);
	CHECK_RET(gdrmap_copy_path(mh, 1, 70000, &got), 0);
	CHECK(got == want_write || want_write < 0, "GDRMAP_COPY_PATH=%s: writes by %d, not %d",
	      value, got, want_write);
	if (want_read == GDRMAP_COPY_PATH_DMA)
		CHECK(atomic_load(&fake_dma_copies) - dma == 20,
		      "GDRMAP_COPY_PATH=dma: 20 copies by DMA (%d)",
		      atomic_load(&fake_dma_copies) - dma);
	else if (want_read > 0)
		CHECK(atomic_load(&fake_dma_copies) == dma,
		      "GDRMAP_COPY_PATH=%s: no DMA", value);
	LIB(gdr_unmap(g, mh, va, AREA), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
}

int main(void)
{
	gdr_t g;
	int threads;

	out = malloc(AREA);
	in = malloc(AREA);
	if (!out || !in)
		return 1;
	gdr_cuda_use_syms(&fake_syms);
	g = open_dmabuf();
	if (!g)
		return test_done();
	threads = gdr_threads_helpers() > 0 ? GDRMAP_COPY_PATH_THREADS :
					      GDRMAP_COPY_PATH_MAPPING;
	one_device(g, 0, "dma", GDRMAP_COPY_PATH_DMA, GDRMAP_COPY_PATH_DMA);
	one_device(g, 1, "threads", threads, threads);
	/* Not a path: said, and the paths are measured. */
	one_device(g, 2, "fastest", -1, -1);
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}
