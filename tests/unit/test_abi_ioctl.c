// SPDX-License-Identifier: MIT
/*
 * The gdrdrv ioctl ABI: command values, struct sizes and field offsets, as
 * GDRCopy 2.x defines them (docs/abi.md section 1.5).
 */
#include <stddef.h>

#include "check.h"
#include "uapi/gdrdrv_ioctl.h"

#define OFF(type, field, want)						\
	CHECK(offsetof(struct type, field) == (want),			\
	      #type "." #field " at %zu, want %d",			\
	      offsetof(struct type, field), (want))
#define SIZE(type, want)						\
	CHECK(sizeof(struct type) == (want), #type " is %zu bytes, want %d", \
	      sizeof(struct type), (want))
#define CMD(cmd, want)							\
	CHECK((unsigned long)(cmd) == (want), #cmd " = 0x%lx, want 0x%lx", \
	      (unsigned long)(cmd), (unsigned long)(want))

int main(void)
{
	CMD(GDRDRV_IOC_PIN_BUFFER, 0xC028DA01UL);
	CMD(GDRDRV_IOC_UNPIN_BUFFER, 0xC008DA02UL);
	CMD(GDRDRV_IOC_GET_CB_FLAG, 0xC008DA03UL);
	CMD(GDRDRV_IOC_GET_INFO, 0xC008DA04UL);
	CMD(GDRDRV_IOC_GET_INFO_V2, 0xC008DA05UL);
	CMD(GDRDRV_IOC_GET_ATTR, 0xC008DA06UL);
	CMD(GDRDRV_IOC_PIN_BUFFER_V2, 0xC020DA07UL);
	CMD(GDRDRV_IOC_REQ_MAPPING_TYPE, 0xC008DA08UL);
	CMD(GDRDRV_IOC_GET_VERSION, 0xC008DAFFUL);

	SIZE(gdrdrv_pin_buffer_params, 40);
	OFF(gdrdrv_pin_buffer_params, addr, 0);
	OFF(gdrdrv_pin_buffer_params, size, 8);
	OFF(gdrdrv_pin_buffer_params, p2p_token, 16);
	OFF(gdrdrv_pin_buffer_params, va_space, 24);
	OFF(gdrdrv_pin_buffer_params, handle, 32);

	SIZE(gdrdrv_unpin_buffer_params, 8);
	OFF(gdrdrv_unpin_buffer_params, handle, 0);

	SIZE(gdrdrv_get_cb_flag_params, 16);
	OFF(gdrdrv_get_cb_flag_params, handle, 0);
	OFF(gdrdrv_get_cb_flag_params, flag, 8);

	SIZE(gdrdrv_get_info_params, 48);
	OFF(gdrdrv_get_info_params, handle, 0);
	OFF(gdrdrv_get_info_params, va, 8);
	OFF(gdrdrv_get_info_params, mapped_size, 16);
	OFF(gdrdrv_get_info_params, page_size, 24);
	OFF(gdrdrv_get_info_params, tsc_khz, 28);
	OFF(gdrdrv_get_info_params, tm_cycles, 32);
	OFF(gdrdrv_get_info_params, mapped, 40);
	OFF(gdrdrv_get_info_params, wc_mapping, 44);

	SIZE(gdrdrv_get_info_v2_params, 48);
	OFF(gdrdrv_get_info_v2_params, handle, 0);
	OFF(gdrdrv_get_info_v2_params, va, 8);
	OFF(gdrdrv_get_info_v2_params, mapped_size, 16);
	OFF(gdrdrv_get_info_v2_params, page_size, 24);
	OFF(gdrdrv_get_info_v2_params, tsc_khz, 28);
	OFF(gdrdrv_get_info_v2_params, tm_cycles, 32);
	OFF(gdrdrv_get_info_v2_params, mapping_type, 40);

	SIZE(gdrdrv_get_attr_params, 8);
	OFF(gdrdrv_get_attr_params, attr, 0);
	OFF(gdrdrv_get_attr_params, val, 4);

	SIZE(gdrdrv_pin_buffer_v2_params, 32);
	OFF(gdrdrv_pin_buffer_v2_params, addr, 0);
	OFF(gdrdrv_pin_buffer_v2_params, size, 8);
	OFF(gdrdrv_pin_buffer_v2_params, flags, 16);
	OFF(gdrdrv_pin_buffer_v2_params, pad, 20);
	OFF(gdrdrv_pin_buffer_v2_params, handle, 24);

	SIZE(gdrdrv_req_mapping_type_params, 16);
	OFF(gdrdrv_req_mapping_type_params, handle, 0);
	OFF(gdrdrv_req_mapping_type_params, mapping_type, 8);

	SIZE(gdrdrv_get_version_params, 8);
	OFF(gdrdrv_get_version_params, gdrdrv_version, 0);
	OFF(gdrdrv_get_version_params, minimum_gdr_api_version, 4);

	CHECK(GDRDRV_VERSION == 0x00020006, "module reports 2.6");
	CHECK(GDRDRV_MINIMUM_API_VERSION == 0x00020000, "minimum API 2.0");
	CHECK(GDRDRV_VERSION_WITH_GET_INFO_V2 == 0x00020004, "GET_INFO_V2 2.4");
	CHECK(GDRDRV_VERSION_WITH_GET_ATTR == 0x00020005, "GET_ATTR 2.5");
	CHECK(GDRDRV_VERSION_WITH_PIN_BUFFER_V2 == 0x00020005, "PIN_V2 2.5");
	CHECK(GDRDRV_VERSION_WITH_REQ_MAPPING_TYPE == 0x00020005, "REQ 2.5");
	CHECK(GDRDRV_MAPPING_TYPE_NONE == 0 && GDRDRV_MAPPING_TYPE_WC == 1 &&
	      GDRDRV_MAPPING_TYPE_CACHING == 2 &&
	      GDRDRV_MAPPING_TYPE_DEVICE == 3, "mapping type values");
	CHECK(GDRDRV_ATTR_USE_PERSISTENT_MAPPING == 1 &&
	      GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE == 2, "attr values");
	CHECK(GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE == 1, "FORCE_PCIE is bit 0");
	return test_done();
}
