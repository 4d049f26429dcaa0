/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The gdrdrv character device ABI: ioctl numbers and argument layouts of
 * GDRCopy 2.x, shared by the kernel module and the library.
 *
 * Every struct has explicit padding so that its layout is the same in any
 * compiler, and the sizes and offsets are checked by tests/unit/test_abi.c.
 *
 * Several commands of the original ABI were defined with a pointer type as
 * their size argument, so their command value encodes 8 (sizeof(void *) on
 * LP64) rather than the size of the struct.  Both sides copy the whole
 * struct regardless; the numbers below must stay exactly as they are.
 */
#ifndef _UAPI_GDRDRV_IOCTL_H
#define _UAPI_GDRDRV_IOCTL_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define GDRDRV_DEVICE_PATH		"/dev/gdrdrv"

/* Versions are (major << 16) | minor. */
#define GDRDRV_VERSION_SHIFT		16
#define GDRDRV_MKVER(maj, min)		(((maj) << GDRDRV_VERSION_SHIFT) | (min))
#define GDRDRV_VERSION			GDRDRV_MKVER(2, 6)
#define GDRDRV_MINIMUM_API_VERSION	GDRDRV_MKVER(2, 0)

/* The first driver version that has each newer ioctl. */
#define GDRDRV_VERSION_WITH_GET_INFO_V2		GDRDRV_MKVER(2, 4)
#define GDRDRV_VERSION_WITH_GET_ATTR		GDRDRV_MKVER(2, 5)
#define GDRDRV_VERSION_WITH_PIN_BUFFER_V2	GDRDRV_MKVER(2, 5)
#define GDRDRV_VERSION_WITH_REQ_MAPPING_TYPE	GDRDRV_MKVER(2, 5)

#define GDRDRV_IOC_MAGIC		0xDA

/* Mapping types, as GET_INFO_V2 reports and REQ_MAPPING_TYPE takes them. */
#define GDRDRV_MAPPING_TYPE_NONE	0
#define GDRDRV_MAPPING_TYPE_WC		1
#define GDRDRV_MAPPING_TYPE_CACHING	2
#define GDRDRV_MAPPING_TYPE_DEVICE	3

/* GET_ATTR attributes. */
#define GDRDRV_ATTR_USE_PERSISTENT_MAPPING	1
#define GDRDRV_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE	2

/* PIN_BUFFER_V2 flags. */
#define GDRDRV_PIN_BUFFER_FLAG_DEFAULT		0
#define GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE	1

struct gdrdrv_pin_buffer_params {
	__u64 addr;		/* in: GPU virtual address */
	__u64 size;		/* in */
	__u64 p2p_token;	/* in: deprecated, 0 */
	__u32 va_space;		/* in: deprecated, 0 */
	__u32 pad;
	__u64 handle;		/* out */
};

struct gdrdrv_unpin_buffer_params {
	__u64 handle;		/* in */
};

struct gdrdrv_get_cb_flag_params {
	__u64 handle;		/* in */
	__u32 flag;		/* out: 1 once the free callback ran */
	__u32 pad;
};

struct gdrdrv_get_info_params {
	__u64 handle;		/* in */
	__u64 va;		/* out: pinned start, 64 KiB aligned */
	__u64 mapped_size;	/* out: pinned size, 64 KiB multiple */
	__u32 page_size;	/* out: GPU page size */
	__u32 tsc_khz;		/* out */
	__u64 tm_cycles;	/* out: cycles spent pinning */
	__u32 mapped;		/* out: a CPU mapping exists */
	__u32 wc_mapping;	/* out: that mapping is write-combined */
};

struct gdrdrv_get_info_v2_params {
	__u64 handle;
	__u64 va;
	__u64 mapped_size;
	__u32 page_size;
	__u32 tsc_khz;
	__u64 tm_cycles;
	__u32 mapping_type;	/* out: GDRDRV_MAPPING_TYPE_* */
	__u32 pad;
};

struct gdrdrv_get_attr_params {
	__u32 attr;		/* in: GDRDRV_ATTR_* */
	__u32 val;		/* out */
};

struct gdrdrv_pin_buffer_v2_params {
	__u64 addr;		/* in */
	__u64 size;		/* in */
	__u32 flags;		/* in: GDRDRV_PIN_BUFFER_FLAG_* */
	__u32 pad;		/* in: 0 */
	__u64 handle;		/* out */
};

struct gdrdrv_req_mapping_type_params {
	__u64 handle;		/* in */
	__u32 mapping_type;	/* in: GDRDRV_MAPPING_TYPE_* */
	__u32 pad;
};

struct gdrdrv_get_version_params {
	__u32 gdrdrv_version;		/* out */
	__u32 minimum_gdr_api_version;	/* out */
};

/* Commands whose encoded size is the struct's. */
#define GDRDRV_IOC_PIN_BUFFER \
	_IOWR(GDRDRV_IOC_MAGIC, 1, struct gdrdrv_pin_buffer_params)
#define GDRDRV_IOC_PIN_BUFFER_V2 \
	_IOWR(GDRDRV_IOC_MAGIC, 7, struct gdrdrv_pin_buffer_v2_params)

/* Commands whose encoded size is a pointer's (8), whatever the struct's. */
#define GDRDRV_IOWR_PTR(nr) \
	_IOC(_IOC_READ | _IOC_WRITE, GDRDRV_IOC_MAGIC, (nr), 8)
#define GDRDRV_IOC_UNPIN_BUFFER		GDRDRV_IOWR_PTR(2)
#define GDRDRV_IOC_GET_CB_FLAG		GDRDRV_IOWR_PTR(3)
#define GDRDRV_IOC_GET_INFO		GDRDRV_IOWR_PTR(4)
#define GDRDRV_IOC_GET_INFO_V2		GDRDRV_IOWR_PTR(5)
#define GDRDRV_IOC_GET_ATTR		GDRDRV_IOWR_PTR(6)
#define GDRDRV_IOC_REQ_MAPPING_TYPE	GDRDRV_IOWR_PTR(8)
#define GDRDRV_IOC_GET_VERSION		GDRDRV_IOWR_PTR(0xff)

#endif /* _UAPI_GDRDRV_IOCTL_H */
