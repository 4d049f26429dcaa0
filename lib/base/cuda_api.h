/* SPDX-License-Identifier: MIT */
/*
 * The CUDA driver API, loaded at run time from libcuda.so.1 (cuda_scope.c): the
 * library builds and runs without CUDA, and only the backends that need it
 * load it.
 *
 * The functions are split by what they need.  Device queries answer under
 * any current context and sit in struct gdr_cuda.  Queries and operations
 * on memory answer only in a context of the device that owns the memory
 * (the real driver, measured on an H100 with driver 580:
 * cuMemGetAddressRange and cuMemGetHandleForAddressRange fail with
 * INVALID_CONTEXT when no context is current and with NOT_FOUND under
 * another device's context), so they are reachable only through a scope:
 * gdr_cuda_enter_owner() or gdr_cuda_enter() make the owning device's
 * context current and hand out the table, gdr_cuda_leave() restores the
 * caller's context exactly.  A new memory query added to
 * GDR_CUDA_MEMORY_FUNCS cannot be called any other way.
 */
#ifndef GDRMAP_CUDA_API_H
#define GDRMAP_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"
#include "cuda_funcs.h"

/* (field, exported symbol): calls that need no current context. */
#define GDR_CUDA_DEVICE_FUNCS(X)					\
	CUDA_FN(X, DriverGetVersion)					\
	CUDA_FN(X, DeviceGetCount)					\
	CUDA_FN(X, DeviceGetAttribute)					\
	CUDA_FN(X, DeviceGetUuid)					\
	CUDA_FN(X, GetErrorName)					\
	CUDA_FN(X, GetErrorString)

/* Calls made for memory of one device, in a context of that device. */
#define GDR_CUDA_MEMORY_FUNCS(X)					\
	CUDA_FN(X, PointerGetAttribute)					\
	CUDA_FN(X, MemGetAddressRange)					\
	CUDA_FN(X, MemRetainAllocationHandle)				\
	CUDA_FN(X, MemGetAllocationPropertiesFromHandle)		\
	CUDA_FN(X, MemExportToShareableHandle)				\
	CUDA_FN(X, MemGetHandleForAddressRange)				\
	CUDA_FN(X, MemAlloc)						\
	CUDA_FN(X, MemFree)						\
	CUDA_FN(X, MemCreate)						\
	CUDA_FN(X, MemRelease)						\
	CUDA_FN(X, MemAddressReserve)					\
	CUDA_FN(X, MemAddressFree)					\
	CUDA_FN(X, MemMap)						\
	CUDA_FN(X, MemUnmap)						\
	CUDA_FN(X, MemSetAccess)					\
	CUDA_FN(X, MemGetAllocationGranularity)				\
	CUDA_FN(X, StreamCreate)					\
	CUDA_FN(X, StreamDestroy)					\
	CUDA_FN(X, StreamSynchronize)					\
	CUDA_FN(X, EventCreate)						\
	CUDA_FN(X, EventDestroy)					\
	CUDA_FN(X, EventRecord)						\
	CUDA_FN(X, EventSynchronize)					\
	CUDA_FN(X, MemcpyHtoDAsync)					\
	CUDA_FN(X, MemcpyDtoHAsync)					\
	CUDA_FN(X, MemHostAlloc)					\
	CUDA_FN(X, MemFreeHost)

#define GDR_CUDA_FIELD(field, sym) __typeof__(&sym) field;

struct gdr_cuda {
	GDR_CUDA_DEVICE_FUNCS(GDR_CUDA_FIELD)
	int driver_version;
	int device_count;
};

struct gdr_cuda_memory {
	GDR_CUDA_MEMORY_FUNCS(GDR_CUDA_FIELD)
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
 * A stretch of code that runs in a context of one device.  call is the
 * memory table while the scope is entered, NULL otherwise.
 */
struct gdr_cuda_scope {
	const struct gdr_cuda_memory *call;
	int dev;		/* the device; -1: the owner is unknown */
	uint64_t addr;		/* what enter_owner looked up */
	CUcontext prev;		/* the caller's context, restored on leave */
	CUcontext ctx;		/* gdr_cuda_enter_ctx: the context entered */
	int switched;
};

/*
 * Enter a context of device dev (an ordinal): the calling thread's own if
 * it is already one of dev's, else dev's primary context.  Returns the
 * CUDA error that prevented it (then nothing changed and s->call is NULL).
 */
CUresult gdr_cuda_enter(int dev, struct gdr_cuda_scope *s);

/* The same for the device that owns the memory at addr (s->dev is -1 if
 * CUDA does not know the address). */
CUresult gdr_cuda_enter_owner(uint64_t addr, struct gdr_cuda_scope *s);

/* Restore the context that was current before the scope was entered. */
void gdr_cuda_leave(struct gdr_cuda_scope *s);

/*
 * Enter ctx, a context of device dev that the caller knows to be alive
 * (the one that allocated some memory), or dev's primary context if ctx
 * is NULL.  Unlike gdr_cuda_enter, the context entered is exactly that
 * one, whatever the thread's current context is: what is created in the
 * scope (a stream) belongs to it.
 */
CUresult gdr_cuda_enter_ctx(CUcontext ctx, int dev, struct gdr_cuda_scope *s);

/* What CUDA says of the byte at addr, in one query under any context. */
struct gdr_cuda_ptr {
	unsigned int type;	/* CU_MEMORYTYPE_*; 0 if CUDA does not know addr */
	int managed;		/* cuMemAllocManaged memory */
	int dev;		/* the owning device's ordinal, or -1 */
	CUcontext ctx;		/* the allocating context; NULL for VMM memory */
	/* New for every allocation and every cuMemMap, never reused: 0 if
	 * CUDA does not know addr. */
	unsigned long long buffer_id;
	/* The allocation (or the cuMemMap'd range) holding addr; size 0 if
	 * CUDA does not know addr. */
	uint64_t start;
	size_t size;
};
void gdr_cuda_pointer(uint64_t addr, struct gdr_cuda_ptr *p);

/* Is [host, +n) host memory that CUDA has pinned (cuMemHostAlloc,
 * cuMemHostRegister), all of it?  One query under any context; 0 for
 * pageable memory and wherever CUDA is not loaded. */
int gdr_cuda_host_pinned(const void *host, size_t n);

/* The device (ordinal) of the calling thread's current context; an error
 * if it has none. */
CUresult gdr_cuda_current_device(int *dev);

/* Why entering s failed with res, for a message. */
const char *gdr_cuda_scope_error(const struct gdr_cuda_scope *s, CUresult res,
				 char *buf, size_t len);

#endif /* GDRMAP_CUDA_API_H */
