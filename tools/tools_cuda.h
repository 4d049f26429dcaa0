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
#include "cuda_funcs.h"

/* Not in cuda_defs.h (the library has no use for them): copylat --host
 * registered. */
CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags);
CUresult cuMemHostUnregister(void *p);

#define TCU_REQUIRED(X)							\
	CUDA_FN(X, Init)						\
	CUDA_FN(X, DriverGetVersion)					\
	CUDA_FN(X, DeviceGetCount)					\
	CUDA_FN(X, DeviceGet)						\
	CUDA_FN(X, DeviceGetName)					\
	CUDA_FN(X, DeviceGetAttribute)					\
	CUDA_FN(X, DeviceGetPCIBusId)					\
	CUDA_FN(X, DeviceTotalMem)					\
	CUDA_FN(X, DevicePrimaryCtxRetain)				\
	CUDA_FN(X, CtxSetCurrent)					\
	CUDA_FN(X, CtxSynchronize)					\
	CUDA_FN(X, MemAlloc)						\
	CUDA_FN(X, MemFree)						\
	CUDA_FN(X, MemAllocHost)					\
	CUDA_FN(X, MemFreeHost)						\
	CUDA_FN(X, MemcpyHtoD)						\
	CUDA_FN(X, MemcpyDtoH)						\
	CUDA_FN(X, MemsetD8)						\
	CUDA_FN(X, GetErrorName)					\
	CUDA_FN(X, GetErrorString)

#define TCU_OPTIONAL(X)							\
	CUDA_FN(X, ModuleLoadData)					\
	CUDA_FN(X, ModuleUnload)					\
	CUDA_FN(X, ModuleGetFunction)					\
	CUDA_FN(X, LaunchKernel)					\
	CUDA_FN(X, StreamCreate)					\
	CUDA_FN(X, StreamDestroy)					\
	CUDA_FN(X, StreamSynchronize)					\
	CUDA_FN(X, MemcpyHtoDAsync)					\
	CUDA_FN(X, MemcpyDtoHAsync)					\
	CUDA_FN(X, MemHostRegister)					\
	CUDA_FN(X, MemHostUnregister)					\
	CUDA_FN(X, DeviceGetUuid)

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
