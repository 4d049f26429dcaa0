/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver API, loaded at run time from libcuda.so.1 (cuda.c): the
 * library builds and runs without CUDA, and only the backends that need it
 * load it.
 */
#ifndef GDRMAP_CUDA_API_H
#define GDRMAP_CUDA_API_H

#include <stddef.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"

/* (field, exported symbol) of every function used. */
#define GDR_CUDA_FUNCS(X)						\
	X(Init, cuInit)							\
	X(DriverGetVersion, cuDriverGetVersion)				\
	X(DeviceGet, cuDeviceGet)					\
	X(DeviceGetCount, cuDeviceGetCount)				\
	X(DeviceGetAttribute, cuDeviceGetAttribute)			\
	X(DeviceGetUuid, cuDeviceGetUuid)				\
	X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)		\
	X(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)	\
	X(CtxGetCurrent, cuCtxGetCurrent)				\
	X(CtxSetCurrent, cuCtxSetCurrent)				\
	X(PointerGetAttribute, cuPointerGetAttribute)			\
	X(MemGetAddressRange, cuMemGetAddressRange_v2)			\
	X(MemRetainAllocationHandle, cuMemRetainAllocationHandle)	\
	X(MemGetAllocationPropertiesFromHandle,				\
	  cuMemGetAllocationPropertiesFromHandle)			\
	X(MemExportToShareableHandle, cuMemExportToShareableHandle)	\
	X(MemGetHandleForAddressRange, cuMemGetHandleForAddressRange)	\
	X(MemAlloc, cuMemAlloc_v2)					\
	X(MemFree, cuMemFree_v2)					\
	X(MemCreate, cuMemCreate)					\
	X(MemRelease, cuMemRelease)					\
	X(MemAddressReserve, cuMemAddressReserve)			\
	X(MemAddressFree, cuMemAddressFree)				\
	X(MemMap, cuMemMap)						\
	X(MemUnmap, cuMemUnmap)						\
	X(MemSetAccess, cuMemSetAccess)					\
	X(MemGetAllocationGranularity, cuMemGetAllocationGranularity)	\
	X(GetErrorName, cuGetErrorName)					\
	X(GetErrorString, cuGetErrorString)

struct gdr_cuda {
#define GDR_CUDA_FIELD(field, sym) __typeof__(&sym) field;
	GDR_CUDA_FUNCS(GDR_CUDA_FIELD)
#undef GDR_CUDA_FIELD
	int driver_version;
};

/*
 * libcuda.so.1 loaded and initialised, once per process.  NULL if it is
 * not there or does not work; then why says so and how to fix it.
 */
const struct gdr_cuda *gdr_cuda_get(char *why, size_t why_len);

/* "CUDA_ERROR_X (text)" for a result. */
const char *gdr_cuda_error(const struct gdr_cuda *cu, CUresult res,
			   char *buf, size_t len);

/*
 * Make a context current for a call made on behalf of the caller: if the
 * thread has none, the primary context of dev is retained and made
 * current.  gdr_cuda_ctx_leave undoes exactly what enter did.
 */
struct gdr_cuda_ctx {
	CUdevice dev;
	int retained;
};
int gdr_cuda_ctx_enter(const struct gdr_cuda *cu, CUdevice dev,
		       struct gdr_cuda_ctx *saved);
void gdr_cuda_ctx_leave(const struct gdr_cuda *cu,
			struct gdr_cuda_ctx *saved);

#endif /* GDRMAP_CUDA_API_H */
