// SPDX-License-Identifier: MIT
/*
 * A program written for GDRCopy's API: it calls every function and uses
 * every type, enum value and macro of gdrapi.h.  It is compiled as C and
 * as C++ with -Wall -Wextra -Werror, linked with -lgdrapi and run; with
 * no GPU it exercises what works without one and exits 0.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gdrapi.h>

static int use_gpu(gdr_t g, unsigned long dptr, size_t size)
{
	gdr_mh_t mh;
	gdr_info_t info;
	int flag = 0, ret;
	void *va = NULL;
	char buf[64];

	ret = gdr_pin_buffer(g, dptr, size, 0, 0, &mh);
	if (ret)
		return ret;
	ret = gdr_map(g, mh, &va, size);
	if (!ret) {
		gdr_get_info(g, mh, &info);
		memset(buf, 0x5a, sizeof(buf));
		gdr_copy_to_mapping(mh, (char *)va + (dptr - info.va), buf, 8);
		gdr_copy_from_mapping(mh, buf, (char *)va + (dptr - info.va), 8);
		gdr_unmap(g, mh, va, size);
	}
	gdr_get_callback_flag(g, mh, &flag);
	gdr_unpin_buffer(g, mh);
	ret = gdr_pin_buffer_v2(g, dptr, size, GDR_PIN_FLAG_DEFAULT, &mh);
	if (!ret) {
		if (!gdr_map_v2(g, mh, &va, size, GDR_MAP_FLAG_DEFAULT))
			gdr_unmap(g, mh, va, size);
		gdr_unpin_buffer(g, mh);
	}
	return ret;
}

int main(void)
{
	static const gdr_mapping_type_t types[] = {
		GDR_MAPPING_TYPE_NONE, GDR_MAPPING_TYPE_WC,
		GDR_MAPPING_TYPE_CACHING, GDR_MAPPING_TYPE_DEVICE,
	};
	static const gdr_map_flags_t map_flags[] = {
		GDR_MAP_FLAG_DEFAULT, GDR_MAP_FLAG_REQ_WC_MAPPING,
		GDR_MAP_FLAG_REQ_CACHE_MAPPING, GDR_MAP_FLAG_REQ_DEVICE_MAPPING,
	};
	static const gdr_attr_t attrs[] = {
		GDR_ATTR_USE_PERSISTENT_MAPPING,
		GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE,
		GDR_ATTR_USING_DMA_BUF_MMAP,
	};
	gdr_info_v2_t info2;
	gdr_pin_flags_t pin_flag = GDR_PIN_FLAG_FORCE_PCIE;
	int major = 0, minor = 0, v = 0;
	unsigned int i;
	const char *name;
	gdr_t g;

	memset(&info2, 0, sizeof(info2));
	gdr_runtime_get_version(&major, &minor);
	if (major != GDR_API_MAJOR_VERSION || minor < GDR_API_MINOR_VERSION ||
	    ((major << MAJOR_VERSION_SHIFT) | minor) < GDR_API_VERSION) {
		fprintf(stderr, "runtime %d.%d older than header %d.%d\n", major,
			minor, GDR_API_MAJOR_VERSION, GDR_API_MINOR_VERSION);
		return 1;
	}
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (gdr_get_mapping_type_string(types[i], &name)) {
			fprintf(stderr, "no name for type %d\n", (int)types[i]);
			return 1;
		}
	}
	if (GPU_PAGE_SIZE != (1UL << GPU_PAGE_SHIFT) ||
	    (GPU_PAGE_OFFSET & GPU_PAGE_MASK) != 0 ||
	    MINIMUM_GDRDRV_VERSION != ((MINIMUM_GDRDRV_MAJOR_VERSION <<
					MAJOR_VERSION_SHIFT) |
				       MINIMUM_GDRDRV_MINOR_VERSION) ||
	    (MINOR_VERSION_MASK & 0xffffu) != 0xffffu ||
	    map_flags[3] != 3 || pin_flag != 1 ||
	    GDR_MAPPING_TYPE_MAX != 4 || GDR_ATTR_MAX != 4) {
		fprintf(stderr, "header constants differ from GDRCopy's\n");
		return 1;
	}

	/* gdrmap's extensions answer cleanly even without CUDA. */
	{
		unsigned long d = 0;

		if (!gdrmap_mem_alloc(0, 4096, &d))
			gdrmap_mem_free(d);
		if (gdrmap_mem_free(0) != EINVAL) {
			fprintf(stderr, "gdrmap_mem_free(0) did not refuse\n");
			return 1;
		}
	}

	g = gdr_open();
	if (!g) {
		printf("consumer: gdr_open found no backend (errno %d); API calls without one work\n",
		       errno);
		return 0;
	}
	gdr_driver_get_version(g, &major, &minor);
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		gdr_get_attribute(g, attrs[i], &v);
	use_gpu(g, 0, 0);
	gdr_close(g);
	printf("consumer: all calls made\n");
	return 0;
}
