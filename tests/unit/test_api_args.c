// SPDX-License-Identifier: MIT
/* Bad arguments to every API function get the documented error. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR 0x7f0000000000UL

int main(void)
{
	gdr_t g = mock_open_gdr();
	gdr_mh_t mh, none = { 0 };
	gdr_info_t info;
	const char *s = NULL;
	int v = -1, major = -1, minor = -1, flag = -1;
	char buf[16];
	void *va;

	CHECK(g != NULL, "mock backend opens");
	if (!g)
		return test_done();

	/* NULL instance */
	CHECK_RET(gdr_close(NULL), EINVAL);
	CHECK_RET(gdr_pin_buffer(NULL, GPU_ADDR, 4096, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer_v2(NULL, GPU_ADDR, 4096, 0, &mh), EINVAL);
	CHECK_RET(gdr_unpin_buffer(NULL, none), EINVAL);
	CHECK_RET(gdr_get_callback_flag(NULL, none, &flag), EINVAL);
	CHECK_RET(gdr_get_info(NULL, none, &info), EINVAL);
	CHECK_RET(gdr_map(NULL, none, &va, 4096), EINVAL);
	CHECK_RET(gdr_unmap(NULL, none, buf, 4096), EINVAL);
	CHECK_RET(gdr_driver_get_version(NULL, &major, &minor), EINVAL);
	CHECK_RET(gdr_get_attribute(NULL, GDR_ATTR_USE_PERSISTENT_MAPPING, &v),
		  EINVAL);

	/* Bad pin arguments */
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 4096, 0, 0, NULL), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 0, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, 0, 4096, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, ~0UL - 100, 4096, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, ~(size_t)0, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer(g, ~0UL - 60000, 4096, 0, 0, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer_v2(g, GPU_ADDR, 4096, 2, &mh), EINVAL);
	CHECK_RET(gdr_pin_buffer_v2(g, GPU_ADDR, 4096, 0x80000000u, &mh),
		  EINVAL);
	CHECK(atomic_load(&mock_pins) == 0, "no pin reached the backend");

	/* A failure of the backend is returned as is, and leaks nothing. */
	mock_fail_pin = EFAULT;
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 4096, 0, 0, &mh), EFAULT);
	mock_fail_pin = 0;
	CHECK(atomic_load(&mock_pins) == 0, "failed pin left nothing");

	/* Unknown handles */
	CHECK_RET(gdr_unpin_buffer(g, none), EINVAL);
	mh.h = 12345;
	CHECK_RET(gdr_unpin_buffer(g, mh), EINVAL);
	mh.h = 0xdeadbeef00000001UL;
	CHECK_RET(gdr_unpin_buffer(g, mh), EINVAL);
	CHECK_RET(gdr_get_callback_flag(g, mh, &flag), EINVAL);
	CHECK_RET(gdr_get_info(g, mh, &info), EINVAL);
	CHECK_RET(gdr_map(g, mh, &va, 4096), EINVAL);
	CHECK_RET(gdr_unmap(g, mh, buf, 4096), EINVAL);
	CHECK_RET(gdr_copy_to_mapping(mh, buf, "x", 1), EINVAL);
	CHECK_RET(gdr_copy_from_mapping(mh, buf, buf + 8, 1), EINVAL);
	CHECK_RET(gdr_copy_to_mapping(none, buf, "x", 1), EINVAL);

	/* NULL out-pointers on a valid handle */
	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 4096, 0, 0, &mh), 0);
	CHECK_RET(gdr_get_info(g, mh, NULL), EINVAL);
	CHECK_RET(gdr_get_callback_flag(g, mh, NULL), EINVAL);
	CHECK_RET(gdr_map(g, mh, NULL, 4096), EINVAL);
	CHECK_RET(gdr_driver_get_version(g, NULL, &minor), EINVAL);
	CHECK_RET(gdr_driver_get_version(g, &major, NULL), EINVAL);
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_USE_PERSISTENT_MAPPING, NULL),
		  EINVAL);

	/* Map arguments */
	CHECK_RET(gdr_map(g, mh, &va, 0), EINVAL);
	CHECK_RET(gdr_map(g, mh, &va, GPU_PAGE_SIZE + 1), EINVAL);
	CHECK_RET(gdr_map_v2(g, mh, &va, 4096, -1), EINVAL);
	CHECK_RET(gdr_map_v2(g, mh, &va, 4096, 4), EINVAL);
	/* The mock maps WC: asking for caching must fail as GDRCopy does
	 * (EOPNOTSUPP, callers fall back on it) and leave no mapping. */
	CHECK_RET(gdr_map_v2(g, mh, &va, 4096, GDR_MAP_FLAG_REQ_CACHE_MAPPING),
		  EOPNOTSUPP);
	CHECK(atomic_load(&mock_maps) == 0, "refused map left no mapping");

	/* Copies on a pinned but unmapped handle, and zero sizes */
	CHECK_RET(gdr_copy_to_mapping(mh, buf, "abc", 3), EINVAL);
	CHECK_RET(gdr_copy_from_mapping(mh, buf, buf + 4, 3), EINVAL);
	CHECK_RET(gdr_copy_to_mapping(mh, buf, "abc", 0), 0);
	CHECK_RET(gdr_unmap(g, mh, buf, 4096), EINVAL);

	CHECK_RET(gdr_map(g, mh, &va, 4096), 0);
	CHECK_RET(gdr_copy_to_mapping(mh, va, NULL, 8), EINVAL);
	CHECK_RET(gdr_copy_from_mapping(mh, NULL, va, 8), EINVAL);
	CHECK_RET(gdr_unmap(g, mh, va, 0), EINVAL);
	CHECK_RET(gdr_unmap(g, mh, (char *)va + 4096, 4096), EINVAL);
	CHECK_RET(gdr_unmap(g, mh, va, 4096), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);

	/* Attributes */
	v = -1;
	CHECK_RET(gdr_get_attribute(g, (gdr_attr_t)0, &v), EINVAL);
	CHECK(v == 0, "v is zeroed even on error (%d)", v);
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_MAX, &v), EINVAL);
	CHECK_RET(gdr_get_attribute(g, (gdr_attr_t)-1, &v), EINVAL);
	CHECK_RET(gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &v), 0);
	CHECK(v == 99, "backend attribute names the mock (%d)", v);
	CHECK_RET(gdr_get_attribute(g, GDR_ATTR_USING_DMA_BUF_MMAP, &v), 0);

	/* Mapping type names */
	CHECK_RET(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_MAX, &s), EINVAL);
	CHECK_RET(gdr_get_mapping_type_string((gdr_mapping_type_t)-1, &s),
		  EINVAL);
	CHECK_RET(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_WC, NULL),
		  EINVAL);
	CHECK_RET(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_NONE, &s), 0);
	CHECK(s && !strcmp(s, "None"), "NONE is \"None\"");
	CHECK_RET(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_WC, &s), 0);
	CHECK(s && !strcmp(s, "Write Combining"), "WC name");
	CHECK_RET(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_CACHING, &s), 0);
	CHECK(s && !strcmp(s, "Caching"), "CACHING name");
	CHECK_RET(gdr_get_mapping_type_string(GDR_MAPPING_TYPE_DEVICE, &s), 0);
	CHECK(s && !strcmp(s, "Device"), "DEVICE name");

	/* Versions */
	gdr_runtime_get_version(NULL, NULL);
	gdr_runtime_get_version(&major, &minor);
	CHECK(major == 2 && minor == 6, "runtime version 2.6 (%d.%d)", major,
	      minor);
	CHECK_RET(gdr_driver_get_version(g, &major, &minor), 0);
	CHECK(major == 2 && minor >= 5,
	      "module-free backends report driver 2.6 (%d.%d)", major, minor);

	CHECK_RET(gdr_close(g), 0);
	CHECK(atomic_load(&mock_pins) == 0 && atomic_load(&mock_maps) == 0,
	      "nothing outstanding after close");
	return test_done();
}
