// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): cuGetProcAddress, the
 * shim's functions by base name ("cuMemAlloc" -> cuMemAlloc_v2).
 */
#include <string.h>

#include "shim.h"

struct proc_entry {
	const char *name;
	void *fn;
	int min_version;	/* used from this cudaVersion on */
};

#define PROC(n, f, v) { #n, (void *)f, v }

/* Several entries of one name: the last whose min_version fits wins. */
static const struct proc_entry shim_procs[] = {
	PROC(cuInit, cuInit, 0),
	PROC(cuDriverGetVersion, cuDriverGetVersion, 0),
	PROC(cuDeviceGet, cuDeviceGet, 0),
	PROC(cuDeviceGetCount, cuDeviceGetCount, 0),
	PROC(cuDeviceGetName, cuDeviceGetName, 0),
	PROC(cuDeviceGetAttribute, cuDeviceGetAttribute, 0),
	PROC(cuDeviceGetUuid, cuDeviceGetUuid, 0),
	PROC(cuDeviceGetUuid, cuDeviceGetUuid_v2, 11040),
	PROC(cuDeviceTotalMem, cuDeviceTotalMem_v2, 0),
	PROC(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId, 0),
	PROC(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 0),
	PROC(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, 0),
	PROC(cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState, 0),
	PROC(cuCtxCreate, cuCtxCreate_v2, 0),
	PROC(cuCtxCreate, cuCtxCreate_v4, 13000),
	PROC(cuCtxCreate_v3, cuCtxCreate_v3, 0),
	PROC(cuCtxDestroy, cuCtxDestroy_v2, 0),
	PROC(cuCtxSetCurrent, cuCtxSetCurrent, 0),
	PROC(cuCtxGetCurrent, cuCtxGetCurrent, 0),
	PROC(cuCtxPushCurrent, cuCtxPushCurrent_v2, 0),
	PROC(cuCtxPopCurrent, cuCtxPopCurrent_v2, 0),
	PROC(cuCtxGetDevice, cuCtxGetDevice, 0),
	PROC(cuCtxSynchronize, cuCtxSynchronize, 0),
	PROC(cuMemAlloc, cuMemAlloc_v2, 0),
	PROC(cuMemFree, cuMemFree_v2, 0),
	PROC(cuMemAllocHost, cuMemAllocHost_v2, 0),
	PROC(cuMemFreeHost, cuMemFreeHost, 0),
	PROC(cuMemHostAlloc, cuMemHostAlloc, 0),
	PROC(cuStreamCreate, cuStreamCreate, 0),
	PROC(cuStreamDestroy, cuStreamDestroy_v2, 0),
	PROC(cuStreamSynchronize, cuStreamSynchronize, 0),
	PROC(cuEventCreate, cuEventCreate, 0),
	PROC(cuEventDestroy, cuEventDestroy_v2, 0),
	PROC(cuEventRecord, cuEventRecord, 0),
	PROC(cuEventSynchronize, cuEventSynchronize, 0),
	PROC(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, 0),
	PROC(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, 0),
	PROC(cuMemsetD8, cuMemsetD8_v2, 0),
	PROC(cuMemsetD16, cuMemsetD16_v2, 0),
	PROC(cuMemsetD32, cuMemsetD32_v2, 0),
	PROC(cuMemcpy, cuMemcpy, 0),
	PROC(cuMemcpyHtoD, cuMemcpyHtoD_v2, 0),
	PROC(cuMemcpyDtoH, cuMemcpyDtoH_v2, 0),
	PROC(cuMemcpyDtoD, cuMemcpyDtoD_v2, 0),
	PROC(cuMemGetAddressRange, cuMemGetAddressRange_v2, 0),
	PROC(cuPointerGetAttribute, cuPointerGetAttribute, 0),
	PROC(cuPointerGetAttributes, cuPointerGetAttributes, 0),
	PROC(cuPointerSetAttribute, cuPointerSetAttribute, 0),
	PROC(cuMemCreate, cuMemCreate, 0),
	PROC(cuMemRelease, cuMemRelease, 0),
	PROC(cuMemAddressReserve, cuMemAddressReserve, 0),
	PROC(cuMemAddressFree, cuMemAddressFree, 0),
	PROC(cuMemMap, cuMemMap, 0),
	PROC(cuMemUnmap, cuMemUnmap, 0),
	PROC(cuMemSetAccess, cuMemSetAccess, 0),
	PROC(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity, 0),
	PROC(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, 0),
	PROC(cuMemGetAllocationPropertiesFromHandle,
	     cuMemGetAllocationPropertiesFromHandle, 0),
	PROC(cuMemExportToShareableHandle, cuMemExportToShareableHandle, 0),
	PROC(cuMemGetHandleForAddressRange, cuMemGetHandleForAddressRange, 0),
	PROC(cuMemAllocManaged, cuMemAllocManaged, 0),
	PROC(cuGetErrorName, cuGetErrorName, 0),
	PROC(cuGetErrorString, cuGetErrorString, 0),
	PROC(cuGetProcAddress, cuGetProcAddress, 0),
	PROC(cuGetProcAddress, cuGetProcAddress_v2, 12000),
};

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
			     cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus)
{
	void *found = NULL;
	size_t i;

	if (!symbol || !pfn ||
	    (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
				   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < sizeof(shim_procs) / sizeof(shim_procs[0]); i++)
		if (!strcmp(shim_procs[i].name, symbol) &&
		    cudaVersion >= shim_procs[i].min_version)
			found = shim_procs[i].fn;
	*pfn = found;
	if (symbolStatus)
		*symbolStatus = found ? CU_GET_PROC_ADDRESS_SUCCESS :
					CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return found ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
			  cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
