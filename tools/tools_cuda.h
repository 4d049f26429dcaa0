/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver API for the tools, loaded at run time by the tree's
 * loader (common/cuda_load.h) with the in-tree declarations of
 * common/cuda_defs.h, so the tools build without the CUDA toolkit and
 * run (doctor) or fail cleanly (the rest) without a GPU.  Functions only
 * some subcommands need are optional: the simulated GPU's libcuda, for
 * one, runs no kernels.
 */
#ifndef GDRMAP_TOOLS_CUDA_H
#define GDRMAP_TOOLS_CUDA_H

#include <stdbool.h>
#include <stddef.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"

/* Not in cuda_defs.h (the library has no use for them): copylat --host
 * registered. */
CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags);
CUresult cuMemHostUnregister(void *p);

#define TCU_REQUIRED(X)							\
	X(Init, cuInit)							\
	X(DriverGetVersion, cuDriverGetVersion)				\
	X(DeviceGetCount, cuDeviceGetCount)				\
	X(DeviceGet, cuDeviceGet)					\
	X(DeviceGetName, cuDeviceGetName)				\
	X(DeviceGetAttribute, cuDeviceGetAttribute)			\
	X(DeviceGetPCIBusId, cuDeviceGetPCIBusId)			\
	X(DeviceTotalMem, cuDeviceTotalMem_v2)				\
	X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)		\
	X(CtxSetCurrent, cuCtxSetCurrent)				\
	X(CtxSynchronize, cuCtxSynchronize)				\
	X(MemAlloc, cuMemAlloc_v2)					\
	X(MemFree, cuMemFree_v2)					\
	X(MemAllocHost, cuMemAllocHost_v2)				\
	X(MemFreeHost, cuMemFreeHost)					\
	X(MemcpyHtoD, cuMemcpyHtoD_v2)					\
	X(MemcpyDtoH, cuMemcpyDtoH_v2)					\
	X(MemsetD8, cuMemsetD8_v2)					\
	X(GetErrorName, cuGetErrorName)					\
	X(GetErrorString, cuGetErrorString)

#define TCU_OPTIONAL(X)							\
	X(ModuleLoadData, cuModuleLoadData)				\
	X(ModuleUnload, cuModuleUnload)					\
	X(ModuleGetFunction, cuModuleGetFunction)			\
	X(LaunchKernel, cuLaunchKernel)					\
	X(StreamCreate, cuStreamCreate)					\
	X(StreamDestroy, cuStreamDestroy_v2)				\
	X(StreamSynchronize, cuStreamSynchronize)			\
	X(MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2)			\
	X(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2)			\
	X(MemHostRegister, cuMemHostRegister_v2)			\
	X(MemHostUnregister, cuMemHostUnregister)			\
	X(DeviceGetUuid, cuDeviceGetUuid)

struct tcu {
#define TCU_FIELD(field, sym) __typeof__(&sym) field;
	TCU_REQUIRED(TCU_FIELD)
	TCU_OPTIONAL(TCU_FIELD)
#undef TCU_FIELD
	int driver_version;
	int device_count;
};

/*
 * Load and initialise CUDA once per process.  NULL when there is no
 * usable CUDA; why then says what is missing and what to do.  A driver
 * with no device counts as no CUDA.
 */
const struct tcu *tcu_load(char *why, size_t len);

/* "CUDA_ERROR_X (text)" */
const char *tcu_error(CUresult res, char *buf, size_t len);

/* What one device is; filled by tcu_device_info. */
struct gpu_info {
	int index;
	char name[256];
	char busid[32];		/* normalised, "" if unknown */
	bool simulated;		/* the device name says "simulated" */
	size_t memory;
	int cc_major, cc_minor;
};

int tcu_device_info(const struct tcu *cu, int index, struct gpu_info *gi,
		    char *err, size_t errlen);

/*
 * Make device index's primary context the calling thread's current one,
 * so that the CUDA calls made for that device run in its context; every
 * device's is retained once and kept until the process ends.  0, or -1
 * with err saying why; *ctx (if not NULL) is the context.
 */
int tcu_use_device(const struct tcu *cu, int index, CUcontext *ctx,
		   char *err, size_t errlen);

#endif /* GDRMAP_TOOLS_CUDA_H */
