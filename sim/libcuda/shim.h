/* SPDX-License-Identifier: MIT */
/*
 * libcuda.so.1 for gdrmap's simulated GPUs (sim/nvsim): what the shim's
 * files share.  NOT REAL HARDWARE: each simulated GPU is one nvsim device,
 * whose memory is a QEMU ivshmem BAR.
 *
 * One fd of /dev/nvsim serves every GPU, with one device address space
 * (unified addressing): device pointers are addresses reserved in this
 * process with mmap(PROT_NONE) (never valid CPU pointers), registered with
 * nvsim, which backs them with BAR pages of one GPU and resolves them for
 * nvidia_p2p_get_pages.  shim_lock guards all state but the calling
 * thread's context stack.
 *
 * Files, one job each: core.c (cuInit, the nvsim connection), device.c
 * (device queries), current.c (the live contexts, the current one, and
 * which context may ask about whose memory), context.c (contexts made
 * and destroyed, with what they own), memory.c (cuMemAlloc family and the
 * records of what this process allocated), vmm.c (virtual memory
 * management), copy.c (copies and memsets), pointer.c (pointer and
 * address-range queries), export.c (dma-buf export), stream.c, errors.c,
 * procaddr.c (cuGetProcAddress).  They call each other in no circle.
 */
#ifndef GDRMAP_SHIM_H
#define GDRMAP_SHIM_H

#define GDRMAP_CUDA_NO_NAME_MACROS
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuda_defs.h"
#include "nvsim_ioctl.h"

#define SHIM_VMM_GRANULARITY (2ULL << 20)
#define SHIM_PAGE NVSIM_PAGE_SIZE	/* the GPU page, 64 KiB */

/* user_flags kept by nvsim for each memory object */
#define UF_HANDLE_TYPES_MASK	0xffu		/* requestedHandleTypes */
#define UF_RDMA_CAPABLE		(1u << 8)	/* gpuDirectRDMACapable */
#define UF_CUMEMALLOC		(1u << 31)	/* made by cuMemAlloc */

/* A context: a device's primary one, or one from cuCtxCreate. */
struct CUctx_st {
	struct CUctx_st *next;		/* ctx_list (cuCtxCreate ones) */
	CUdevice dev;
	bool primary;
	unsigned int flags;
};

/* One simulated GPU. */
struct shim_dev {
	struct nvsim_info info;		/* as nvsim reported it at cuInit */
	struct CUctx_st primary;
	unsigned int primary_refs;	/* 0: the primary context is inactive */
};

enum rec_kind { REC_DEVICE, REC_HOST, REC_RESERVE, REC_MANAGED };

/* What this process allocated: cuMemAlloc, cuMemAllocHost, reservations. */
struct rec {
	struct rec *next;
	enum rec_kind kind;
	uint64_t res_base, res_size;	/* the mmap'ed reservation */
	uint64_t ptr, size;		/* what the caller sees */
	CUcontext ctx;			/* owner; NULL for reservations */
	CUdevice dev;			/* the owner's device */
	uint64_t buffer_id;
	bool sync_memops;
};

/* core.c */
extern pthread_mutex_t shim_lock;
extern bool shim_initialized;
extern int shim_fd;
extern int shim_ndevs;
extern struct shim_dev shim_devs[NVSIM_MAX_DEVICES];
/* cuMemAlloc's pointer offset (NVSIM_ALLOC_OFFSET); -1: 0x200 below 64 KiB */
extern long shim_alloc_offset;
CUresult errno_to_cu(int err);
int nvsim_ioctl(unsigned long cmd, void *arg);
bool nvsim_query_va(uint64_t va, struct nvsim_query *q);
uint64_t nvsim_caps(CUdevice dev);

#define CHECK_INIT()							\
	do {								\
		if (!shim_initialized)					\
			return CUDA_ERROR_NOT_INITIALIZED;		\
	} while (0)

#define CHECK_DEV(dev)							\
	do {								\
		CHECK_INIT();						\
		if ((dev) < 0 || (dev) >= shim_ndevs)			\
			return CUDA_ERROR_INVALID_DEVICE;		\
	} while (0)

/*
 * Where cuda.h maps a name to a versioned symbol, the plain name is
 * exported too, as the same function (defined in the target's file).
 */
#define SHIM_ALIAS(name, target, ret, args)				\
	ret name args __attribute__((alias(#target)))

/* current.c */
CUresult need_ctx(CUcontext *out);
CUresult ctx_sees(CUdevice owner);
void ctx_list_add(struct CUctx_st *c);
bool ctx_list_remove(CUcontext c);
void ctx_push_new(CUcontext c);
void ctx_forget(CUcontext c);

/* memory.c */
extern struct rec *rec_list;
struct rec *rec_find(enum rec_kind kind, uint64_t p, uint64_t len);
void rec_add(struct rec *r);
void rec_unlink(struct rec *x);
uint64_t host_page(void);
uint64_t reserve_va(uint64_t size, uint64_t align);
void release_va(uint64_t base, uint64_t size);
bool dev_range(uint64_t p, uint64_t len);
bool dev_space(uint64_t p);
bool managed_range(uint64_t p, uint64_t len);
void free_ctx_memory(CUcontext c);

/* devio.c: pread/pwrite of n bytes at device address dev, until done. */
CUresult dev_rw(uint64_t dev, void *host, size_t n, bool write);

/* stream.c */
CUresult stream_use(CUstream s, CUcontext *ctx);
void stream_queue(CUstream s, CUdeviceptr dev, const void *host, size_t n,
		  bool managed);
void stream_run(CUstream s, uint64_t seq);
void streams_drain(void);
void streams_drain_legacy(CUcontext c);
void free_ctx_streams(CUcontext c);

#endif /* GDRMAP_SHIM_H */
