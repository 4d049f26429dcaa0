// SPDX-License-Identifier: MIT
/*
 * The user API's binary layout and values, as GDRCopy 2.6 defines them
 * (docs/abi.md section 2).
 */
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "gdrapi.h"
#include "base/internal.h"

#define OFF(type, field, want)						\
	CHECK(offsetof(type, field) == (want), #type "." #field		\
	      " at %zu, want %d", offsetof(type, field), (want))

int main(void)
{
	gdr_info_v2_t info;
	unsigned char raw[sizeof(info)];
	struct gdr_info_v1 v1;

	CHECK(sizeof(gdr_info_v2_t) == 48, "gdr_info_v2 is 48 bytes (%zu)",
	      sizeof(gdr_info_v2_t));
	CHECK(_Alignof(gdr_info_v2_t) == 8, "8-byte aligned");
	OFF(gdr_info_v2_t, va, 0);
	OFF(gdr_info_v2_t, mapped_size, 8);
	OFF(gdr_info_v2_t, page_size, 16);
	OFF(gdr_info_v2_t, tm_cycles, 24);
	OFF(gdr_info_v2_t, cycles_per_ms, 32);
	OFF(gdr_info_v2_t, mapping_type, 40);

	/* mapped is bit 0 and wc_mapping bit 1 of the word at offset 36. */
	memset(&info, 0, sizeof(info));
	info.mapped = 1;
	memcpy(raw, &info, sizeof(info));
	CHECK(raw[36] == 0x01, "mapped is bit 0 at offset 36 (0x%02x)",
	      raw[36]);
	memset(&info, 0, sizeof(info));
	info.wc_mapping = 1;
	memcpy(raw, &info, sizeof(info));
	CHECK(raw[36] == 0x02, "wc_mapping is bit 1 at offset 36 (0x%02x)",
	      raw[36]);

	CHECK(sizeof(v1) == 40, "v1 gdr_info is 40 bytes (%zu)", sizeof(v1));
	OFF(struct gdr_info_v1, cycles_per_ms, 32);
	CHECK(sizeof(gdr_info_t) == sizeof(gdr_info_v2_t),
	      "gdr_info_t is gdr_info_v2_t");

	CHECK(sizeof(gdr_mh_t) == 8, "gdr_mh_t is 8 bytes");
	CHECK(sizeof(gdr_mapping_type_t) == 4 && sizeof(gdr_attr_t) == 4 &&
	      sizeof(gdr_pin_flags_t) == 4 && sizeof(gdr_map_flags_t) == 4,
	      "enums are 4 bytes");

	CHECK(MAJOR_VERSION_SHIFT == 16 && MINOR_VERSION_MASK == 0xffff,
	      "version shift and mask");
	CHECK(GDR_API_MAJOR_VERSION == 2 && GDR_API_MINOR_VERSION == 6 &&
	      GDR_API_VERSION == 0x00020006, "API version 2.6");
	CHECK(MINIMUM_GDRDRV_MAJOR_VERSION == 2 &&
	      MINIMUM_GDRDRV_MINOR_VERSION == 0 &&
	      MINIMUM_GDRDRV_VERSION == 0x00020000, "minimum driver 2.0");
	CHECK(GPU_PAGE_SHIFT == 16 && GPU_PAGE_SIZE == 65536UL &&
	      sizeof(GPU_PAGE_SIZE) == sizeof(unsigned long) &&
	      GPU_PAGE_OFFSET == 65535UL && GPU_PAGE_MASK == ~65535UL,
	      "GPU page macros");

	CHECK(GDR_PIN_FLAG_DEFAULT == 0 && GDR_PIN_FLAG_FORCE_PCIE == 1,
	      "pin flags");
	CHECK(GDR_MAPPING_TYPE_NONE == 0 && GDR_MAPPING_TYPE_WC == 1 &&
	      GDR_MAPPING_TYPE_CACHING == 2 && GDR_MAPPING_TYPE_DEVICE == 3 &&
	      GDR_MAPPING_TYPE_MAX == 4, "mapping types");
	CHECK(GDR_MAP_FLAG_DEFAULT == 0 && GDR_MAP_FLAG_REQ_WC_MAPPING == 1 &&
	      GDR_MAP_FLAG_REQ_CACHE_MAPPING == 2 &&
	      GDR_MAP_FLAG_REQ_DEVICE_MAPPING == 3, "map flags");
	CHECK(GDR_ATTR_USE_PERSISTENT_MAPPING == 1 &&
	      GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE == 2 &&
	      GDR_ATTR_USING_DMA_BUF_MMAP == 3 && GDR_ATTR_MAX == 4,
	      "attributes");
	return test_done();
}
