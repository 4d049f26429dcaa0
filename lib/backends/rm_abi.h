/* SPDX-License-Identifier: MIT */
/*
 * The parts of nvidia.ko's user-space interface (the "resource manager",
 * RM) that the rm backend uses, declared here from NVIDIA's published
 * headers in open-gpu-kernel-modules:
 *
 *   kernel-open/common/inc/nv-ioctl.h, nv-ioctl-numbers.h  card info,
 *       fd registration, version query, dma-buf export argument
 *   src/nvidia/arch/nvalloc/unix/include/nv_escape.h        RM escapes
 *   src/nvidia/arch/nvalloc/unix/include/
 *       nv-unix-nvos-params-wrappers.h                       map with fd
 *   src/common/sdk/nvidia/inc/nvos.h                         NVOS00/21/33/
 *                                                            34/54/55
 *   src/common/sdk/nvidia/inc/class/cl0080.h, cl2080.h       device allocs
 *   src/common/sdk/nvidia/inc/ctrl/ctrl0000/ctrl0000gpu.h    GET_ID_INFO_V2
 *   src/common/sdk/nvidia/inc/ctrl/ctrl0041.h                GET_SURFACE_INFO
 *   src/common/sdk/nvidia/inc/nvstatuscodes.h                status values
 *
 * Every declaration below is the same, byte for byte, in every tag from
 * 570.86.15 to 595.45.04 (the first and last tag of each of the 570, 575,
 * 580, 590 and 595 branches, compared when this file was written; 580
 * added a byte, bAllowMmap, in what was padding of the export argument,
 * which the library only reads).  Before 570 the export argument had no
 * mappingType byte, so its handles sat 4 bytes lower.  NVIDIA does not
 * promise this interface to third parties, so rm_client.c reads the
 * driver's version first and uses these layouts only inside that range
 * (RM_ABI_FIRST .. RM_ABI_LAST).  nvidia.ko checks the size of every
 * argument (nv.c's nvidia_ioctl takes it from the ioctl number, escape.c's
 * RmIoctl compares it with its own struct): a layout that drifted fails
 * with EINVAL rather than being misread.  The sizes and offsets asserted
 * below are x86-64's and arm64's (LP64), the only ABIs the driver ships.
 */
#ifndef GDRMAP_RM_ABI_H
#define GDRMAP_RM_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>

/* The driver versions whose headers were compared (inclusive; a version
 * is major * 1000000 + minor * 1000 + patch, "580.65.06" -> 580065006). */
#define RM_ABI_FIRST		570086015u
#define RM_ABI_LAST_MAJOR	595u
#define RM_ABI_RANGE_TEXT	"570.86.15 to 595.x"

/* nv-ioctl-numbers.h */
#define NV_IOCTL_MAGIC			'F'
#define NV_IOCTL_BASE			200
#define NV_ESC_CARD_INFO		(NV_IOCTL_BASE + 0)
#define NV_ESC_REGISTER_FD		(NV_IOCTL_BASE + 1)
#define NV_ESC_CHECK_VERSION_STR	(NV_IOCTL_BASE + 10)
#define NV_ESC_IOCTL_XFER_CMD		(NV_IOCTL_BASE + 11)
#define NV_ESC_EXPORT_TO_DMABUF_FD	(NV_IOCTL_BASE + 17)

/* nv_escape.h */
#define NV_ESC_RM_FREE			0x29
#define NV_ESC_RM_CONTROL		0x2A
#define NV_ESC_RM_ALLOC			0x2B
#define NV_ESC_RM_DUP_OBJECT		0x34
#define NV_ESC_RM_MAP_MEMORY		0x4E
#define NV_ESC_RM_UNMAP_MEMORY		0x4F

/* nvidia.ko reads the command from _IOC_NR and the argument's size from
 * _IOC_SIZE; the direction bits are not checked (libcuda sets both). */
#define NV_IOCTL_REQ(nr, size) \
	_IOC(_IOC_READ | _IOC_WRITE, NV_IOCTL_MAGIC, (nr), (size))

/* nvlimits.h: NV_ESC_CARD_INFO fails unless the array holds every GPU. */
#define NV_MAX_DEVICES			32

/* Classes (nvos.h, cl0080.h, cl2080.h). */
#define NV01_ROOT_CLIENT		0x00000041u
#define NV01_DEVICE_0			0x00000080u
#define NV20_SUBDEVICE_0		0x00002080u

/* Controls. */
#define NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2	0x00000205u
#define NV0041_CTRL_CMD_GET_SURFACE_INFO	0x00410110u
/* In 4 KiB units: the one size index every version has (580 added a
 * 64-bit pair beside it). */
#define NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE 7u
#define NV0041_CTRL_SURFACE_INFO_PHYS_SIZE_SCALE 4096u

/* nvstatuscodes.h: the statuses the backend words itself. */
#define NV_OK					0x00u
#define NV_ERR_GPU_IS_LOST			0x0Fu
#define NV_ERR_INSUFFICIENT_RESOURCES		0x1Au
#define NV_ERR_INSUFFICIENT_PERMISSIONS		0x1Bu
#define NV_ERR_INVALID_ARGUMENT			0x1Fu
#define NV_ERR_INVALID_BASE			0x20u
#define NV_ERR_INVALID_CLASS			0x22u
#define NV_ERR_INVALID_CLIENT			0x23u
#define NV_ERR_INVALID_DEVICE			0x26u
#define NV_ERR_INVALID_LIMIT			0x2Eu
#define NV_ERR_INVALID_OBJECT_HANDLE		0x33u
#define NV_ERR_INVALID_OBJECT_PARENT		0x36u
#define NV_ERR_NO_MEMORY			0x51u
#define NV_ERR_NOT_SUPPORTED			0x56u
#define NV_ERR_OBJECT_NOT_FOUND			0x57u
#define NV_ERR_STATE_IN_USE			0x63u

/* nv-ioctl.h */
struct nv_pci_info {
	uint32_t domain;
	uint8_t bus;
	uint8_t slot;
	uint8_t function;
	uint16_t vendor_id;
	uint16_t device_id;
};

struct nv_card_info {
	uint8_t valid;
	struct nv_pci_info pci_info;
	uint32_t gpu_id;
	uint16_t interrupt_line;
	uint64_t reg_address __attribute__((aligned(8)));
	uint64_t reg_size __attribute__((aligned(8)));
	uint64_t fb_address __attribute__((aligned(8)));
	uint64_t fb_size __attribute__((aligned(8)));
	uint32_t minor_number;
	uint8_t dev_name[10];
};

#define NV_RM_API_VERSION_STRING_LENGTH	64
#define NV_RM_API_VERSION_CMD_QUERY	'2'
struct nv_rm_api_version {
	uint32_t cmd;
	uint32_t reply;
	char version[NV_RM_API_VERSION_STRING_LENGTH];
};

struct nv_register_fd {
	int ctl_fd;
};

struct nv_ioctl_xfer {
	uint32_t cmd;
	uint32_t size;
	uint64_t ptr __attribute__((aligned(8)));
};

#define NV_DMABUF_EXPORT_MAX_HANDLES	128
struct nv_export_dmabuf {
	int fd;
	uint32_t hClient;
	uint32_t totalObjects;
	uint32_t numObjects;
	uint32_t index;
	uint64_t totalSize __attribute__((aligned(8)));
	uint8_t mappingType;
	uint8_t bAllowMmap;
	uint32_t handles[NV_DMABUF_EXPORT_MAX_HANDLES];
	uint64_t offsets[NV_DMABUF_EXPORT_MAX_HANDLES]
		__attribute__((aligned(8)));
	uint64_t sizes[NV_DMABUF_EXPORT_MAX_HANDLES]
		__attribute__((aligned(8)));
	uint32_t status;
};

/* nvos.h: NVOS00 (free), NVOS21 (alloc), NVOS33/34 (CPU map, unmap),
 * NVOS54 (control), NVOS55 (dup). */
struct nvos00_free {
	uint32_t hRoot;
	uint32_t hObjectParent;
	uint32_t hObjectOld;
	uint32_t status;
};

struct nvos21_alloc {
	uint32_t hRoot;
	uint32_t hObjectParent;
	uint32_t hObjectNew;
	uint32_t hClass;
	uint64_t pAllocParms __attribute__((aligned(8)));
	uint32_t paramsSize;
	uint32_t status;
};

struct nvos33_map {
	uint32_t hClient;
	uint32_t hDevice;
	uint32_t hMemory;
	uint64_t offset __attribute__((aligned(8)));
	uint64_t length __attribute__((aligned(8)));
	uint64_t pLinearAddress __attribute__((aligned(8)));
	uint32_t status;
	uint32_t flags;
};

/* nv-unix-nvos-params-wrappers.h: the /dev/nvidiaN fd the next mmap of
 * which gets the mapping. */
struct nvos33_map_with_fd {
	struct nvos33_map params;
	int fd;
};

struct nvos34_unmap {
	uint32_t hClient;
	uint32_t hDevice;
	uint32_t hMemory;
	uint64_t pLinearAddress __attribute__((aligned(8)));
	uint32_t status;
	uint32_t flags;
};

struct nvos54_control {
	uint32_t hClient;
	uint32_t hObject;
	uint32_t cmd;
	uint32_t flags;
	uint64_t params __attribute__((aligned(8)));
	uint32_t paramsSize;
	uint32_t status;
};

struct nvos55_dup {
	uint32_t hClient;
	uint32_t hParent;
	uint32_t hObject;
	uint32_t hClientSrc;
	uint32_t hObjectSrc;
	uint32_t flags;
	uint32_t status;
};

/* cl0080.h, cl2080.h */
struct nv0080_alloc {
	uint32_t deviceId;
	uint32_t hClientShare;
	uint32_t hTargetClient;
	uint32_t hTargetDevice;
	uint32_t flags;
	uint64_t vaSpaceSize __attribute__((aligned(8)));
	uint64_t vaStartInternal __attribute__((aligned(8)));
	uint64_t vaLimitInternal __attribute__((aligned(8)));
	uint32_t vaMode;
};

struct nv2080_alloc {
	uint32_t subDeviceId;
};

/* ctrl0000gpu.h */
struct nv0000_gpu_id_info_v2 {
	uint32_t gpuId;
	uint32_t gpuFlags;
	uint32_t deviceInstance;
	uint32_t subDeviceInstance;
	uint32_t sliStatus;
	uint32_t boardId;
	uint32_t gpuInstance;
	int32_t numaId;
};

/* ctrl0041.h, ctrlxxxx.h: a list of (index, data) that RM copies in and
 * out itself (embedded_param_copy.c). */
struct nv0041_surface_info {
	uint32_t index;
	uint32_t data;
};

struct nv0041_get_surface_info {
	uint32_t surfaceInfoListSize;
	uint64_t surfaceInfoList __attribute__((aligned(8)));
};

/* The sizes nvidia.ko compares against, from the headers' layouts. */
_Static_assert(sizeof(struct nv_card_info) == 72, "nv_ioctl_card_info_t");
_Static_assert(offsetof(struct nv_card_info, gpu_id) == 16, "card gpu_id");
_Static_assert(offsetof(struct nv_card_info, minor_number) == 56,
	       "card minor_number");
_Static_assert(sizeof(struct nv_rm_api_version) == 72,
	       "nv_ioctl_rm_api_version_t");
_Static_assert(sizeof(struct nv_register_fd) == 4, "nv_ioctl_register_fd_t");
_Static_assert(sizeof(struct nv_ioctl_xfer) == 16, "nv_ioctl_xfer_t");
_Static_assert(sizeof(struct nv_export_dmabuf) == 2608,
	       "nv_ioctl_export_to_dma_buf_fd_t");
_Static_assert(offsetof(struct nv_export_dmabuf, handles) == 36,
	       "export handles");
_Static_assert(offsetof(struct nv_export_dmabuf, offsets) == 552,
	       "export offsets");
_Static_assert(offsetof(struct nv_export_dmabuf, status) == 2600,
	       "export status");
_Static_assert(sizeof(struct nvos00_free) == 16, "NVOS00_PARAMETERS");
_Static_assert(sizeof(struct nvos21_alloc) == 32, "NVOS21_PARAMETERS");
_Static_assert(sizeof(struct nvos33_map) == 48, "NVOS33_PARAMETERS");
_Static_assert(sizeof(struct nvos33_map_with_fd) == 56,
	       "nv_ioctl_nvos33_parameters_with_fd");
_Static_assert(sizeof(struct nvos34_unmap) == 32, "NVOS34_PARAMETERS");
_Static_assert(sizeof(struct nvos54_control) == 32, "NVOS54_PARAMETERS");
_Static_assert(sizeof(struct nvos55_dup) == 28, "NVOS55_PARAMETERS");
_Static_assert(sizeof(struct nv0080_alloc) == 56, "NV0080_ALLOC_PARAMETERS");
_Static_assert(sizeof(struct nv0000_gpu_id_info_v2) == 32,
	       "NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS");
_Static_assert(sizeof(struct nv0041_get_surface_info) == 16,
	       "NV0041_CTRL_GET_SURFACE_INFO_PARAMS");

#endif /* GDRMAP_RM_ABI_H */
