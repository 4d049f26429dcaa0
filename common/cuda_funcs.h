/* SPDX-License-Identifier: MIT */
/*
 * Every libcuda.so.1 function the tree calls: the field tables call it by,
 * and its symbol (the versioned one where cuda.h maps the name to one).
 * Each loader's table names the fields it wants, CUDA_FN(X, field).
 */
#ifndef GDRMAP_CUDA_FUNCS_H
#define GDRMAP_CUDA_FUNCS_H

/* X(field, symbol) for one function of the list below. */
#define CUDA_FN(X, field)	X(field, CUDA_FN_##field)
/* A struct cuda_sym (cuda_load.h) for one function, into *fieldp. */
#define CUDA_FN_SYM(field, fieldp)	CUDA_FN_SYM_(CUDA_FN_##field, fieldp)
#define CUDA_FN_SYM_(sym, fieldp)	CUDA_SYM(sym, fieldp)

#define CUDA_FN_CtxDestroy			cuCtxDestroy_v2
#define CUDA_FN_CtxGetCurrent			cuCtxGetCurrent
#define CUDA_FN_CtxGetDevice			cuCtxGetDevice
#define CUDA_FN_CtxPopCurrent			cuCtxPopCurrent_v2
#define CUDA_FN_CtxPushCurrent			cuCtxPushCurrent_v2
#define CUDA_FN_CtxSetCurrent			cuCtxSetCurrent
#define CUDA_FN_CtxSynchronize			cuCtxSynchronize
#define CUDA_FN_DeviceGet			cuDeviceGet
#define CUDA_FN_DeviceGetAttribute		cuDeviceGetAttribute
#define CUDA_FN_DeviceGetCount			cuDeviceGetCount
#define CUDA_FN_DeviceGetName			cuDeviceGetName
#define CUDA_FN_DeviceGetPCIBusId		cuDeviceGetPCIBusId
#define CUDA_FN_DeviceGetUuid			cuDeviceGetUuid
#define CUDA_FN_DevicePrimaryCtxRetain		cuDevicePrimaryCtxRetain
#define CUDA_FN_DeviceTotalMem			cuDeviceTotalMem_v2
#define CUDA_FN_DriverGetVersion		cuDriverGetVersion
#define CUDA_FN_EventCreate			cuEventCreate
#define CUDA_FN_EventDestroy			cuEventDestroy_v2
#define CUDA_FN_EventRecord			cuEventRecord
#define CUDA_FN_EventSynchronize		cuEventSynchronize
#define CUDA_FN_GetErrorName			cuGetErrorName
#define CUDA_FN_GetErrorString			cuGetErrorString
#define CUDA_FN_Init				cuInit
#define CUDA_FN_LaunchKernel			cuLaunchKernel
#define CUDA_FN_MemAddressFree			cuMemAddressFree
#define CUDA_FN_MemAddressReserve		cuMemAddressReserve
#define CUDA_FN_MemAlloc			cuMemAlloc_v2
#define CUDA_FN_MemAllocHost			cuMemAllocHost_v2
#define CUDA_FN_MemCreate			cuMemCreate
#define CUDA_FN_MemExportToShareableHandle	cuMemExportToShareableHandle
#define CUDA_FN_MemFree				cuMemFree_v2
#define CUDA_FN_MemFreeHost			cuMemFreeHost
#define CUDA_FN_MemGetAllocationPropertiesFromHandle \
	cuMemGetAllocationPropertiesFromHandle
#define CUDA_FN_MemGetAddressRange		cuMemGetAddressRange_v2
#define CUDA_FN_MemGetAllocationGranularity	cuMemGetAllocationGranularity
#define CUDA_FN_MemGetHandleForAddressRange	cuMemGetHandleForAddressRange
#define CUDA_FN_MemHostAlloc			cuMemHostAlloc
#define CUDA_FN_MemHostRegister			cuMemHostRegister_v2
#define CUDA_FN_MemHostUnregister		cuMemHostUnregister
#define CUDA_FN_MemMap				cuMemMap
#define CUDA_FN_MemRelease			cuMemRelease
#define CUDA_FN_MemRetainAllocationHandle	cuMemRetainAllocationHandle
#define CUDA_FN_MemSetAccess			cuMemSetAccess
#define CUDA_FN_MemUnmap			cuMemUnmap
#define CUDA_FN_MemcpyDtoH			cuMemcpyDtoH_v2
#define CUDA_FN_MemcpyDtoHAsync			cuMemcpyDtoHAsync_v2
#define CUDA_FN_MemcpyHtoD			cuMemcpyHtoD_v2
#define CUDA_FN_MemcpyHtoDAsync			cuMemcpyHtoDAsync_v2
#define CUDA_FN_MemsetD32			cuMemsetD32_v2
#define CUDA_FN_MemsetD8			cuMemsetD8_v2
#define CUDA_FN_ModuleGetFunction		cuModuleGetFunction
#define CUDA_FN_ModuleLoadData			cuModuleLoadData
#define CUDA_FN_ModuleUnload			cuModuleUnload
#define CUDA_FN_PointerGetAttribute		cuPointerGetAttribute
#define CUDA_FN_PointerGetAttributes		cuPointerGetAttributes
#define CUDA_FN_StreamCreate			cuStreamCreate
#define CUDA_FN_StreamDestroy			cuStreamDestroy_v2
#define CUDA_FN_StreamSynchronize		cuStreamSynchronize

#endif /* GDRMAP_CUDA_FUNCS_H */
