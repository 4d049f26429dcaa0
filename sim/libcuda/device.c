// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): device queries.  Every
 * simulated GPU has the same name and attributes; UUID, PCI address and
 * memory are each its own.
 */
#include <stdio.h>
#include <string.h>

#include "shim.h"

#define SHIM_DEVICE_NAME "gdrmap simulated GPU (nvsim, not real hardware)"

CUresult cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	*count = shim_ndevs;
	return CUDA_SUCCESS;
}

/* Ordinals are nvsim's device indexes: the order it found the GPUs in. */
CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(ordinal);
	*dev = ordinal;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	snprintf(name, (size_t)len, "%s", SHIM_DEVICE_NAME);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	memcpy(uuid->bytes, shim_devs[dev].info.uuid, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid(uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	*bytes = shim_devs[dev].info.bar_size;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char *busid, int len, CUdevice dev)
{
	const struct nvsim_info *info;

	if (!busid || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	info = &shim_devs[dev].info;
	snprintf(busid, (size_t)len, "%08x:%02x:%02x.%x", info->pci_domain,
		 info->pci_bus, info->pci_device, info->pci_function);
	return CUDA_SUCCESS;
}

/* The CU_DEVICE_ATTRIBUTE_* enum ends below this (CUDA 13 has ~140). */
#define SHIM_ATTR_LIMIT 256

CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev)
{
	const struct nvsim_info *info;
	int v = 0;

	if (!value || attrib <= 0 || attrib >= SHIM_ATTR_LIMIT)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	info = &shim_devs[dev].info;
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		v = 1024;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		v = 64;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		v = 2147483647;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		v = 65535;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		v = 49152;
		break;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
		v = 65536;
		break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		v = 32;
		break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
		v = 1000000;	/* kHz; meaningless on a simulator */
		break;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
		v = 64;
		break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		v = 1;
		break;
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		v = nvsim_caps(dev) & NVSIM_CAP_DMABUF ? 1 : 0;
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		v = info->pci_bus;
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
		v = info->pci_device;
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
		v = (int)info->pci_domain;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		v = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
		v = 1;
		break;
	default:
		/* Everything else, e.g. DMA_BUF_SUPPORTED, INTEGRATED,
		 * PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, MANAGED_MEMORY,
		 * HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
		 * COMPUTE_MODE (default), GPU_DIRECT_RDMA_WRITES_ORDERING. */
		v = 0;
		break;
	}
	*value = v;
	return CUDA_SUCCESS;
}

SHIM_ALIAS(cuDeviceTotalMem, cuDeviceTotalMem_v2, CUresult,
	   (size_t *, CUdevice));
