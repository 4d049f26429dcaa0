/* SPDX-License-Identifier: MIT */
/*
 * A fake CUDA driver of FAKE_DEVS devices for host tests of the library's
 * context handling (lib/base/cuda_scope.c's scopes and their users).  It
 * follows what the real driver was measured to do
 * (bench/results/h100/2026-11-23-probes): each thread has a current context
 * (none at first); each device has a primary context, created by its first
 * retain and destroyed by its last release, and tests create contexts of their
 * own; cuPointerGetAttribute answers under any context; cuMemGetAddressRange
 * and cuMemGetHandleForAddressRange fail with INVALID_CONTEXT under none and
 * NOT_FOUND under another device's context; any context of the owner
 * answers, also for legacy memory of another of its contexts.
 *
 * Beyond the driver it counts, in fake_wrong_ctx, every call of the
 * library's memory table (but the owner lookup) made while the current
 * context was not one of the owning device: the library promises none.
 *
 * Device memory is a memfd per allocation, so that what the library maps
 * (an exported fd) and what the test reads as "the GPU's view" are the
 * same bytes.  Addresses are not host addresses.  Each physical
 * allocation is also one RM memory object of libcuda's RM client, for the
 * fake nvidia.ko of fake_rm.h: its handle is rm_handle, its length whole
 * 64 KiB GPU pages.  With fake_suballoc_max set, small cuMemAlloc
 * allocations share one such object, a FAKE_GRAN chunk, at offsets, as
 * cudaMalloc suballocates them; cuMemMap maps a handle anywhere inside a
 * reservation, so that several handles lie side by side.
 *
 * Compiled once (fake_cuda.c) and linked into every unit test that uses
 * it; a test hands fake_syms to the library with gdr_cuda_use_syms(),
 * calls the fake driver directly as an application would call CUDA, and
 * reads or breaks its state through what is declared here.
 */
#ifndef GDRMAP_TEST_FAKE_CUDA_H
#define GDRMAP_TEST_FAKE_CUDA_H

#include <stdatomic.h>
#include <sys/types.h>

#include "base/cuda_syms.h"

#define FAKE_DEVS	3
#define FAKE_GRAN	(2UL << 20)
#define FAKE_MAX	128
/* RM allocates video memory in whole GPU pages. */
#define FAKE_RM_ALIGN	(64UL << 10)
/* Where suballocations start in their chunk (cudaMalloc aligns to 256). */
#define FAKE_SUBALLOC_ALIGN 512

struct CUctx_st {
	int dev;
	int alive;
	int primary;
};

/* A physical allocation: cuMemAlloc memory, or a cuMemCreate handle. */
struct fake_mem {
	int used;
	int dev;
	int memfd;
	size_t size;
	int refs;		/* VMM: the handle's references */
	int handle_types;
	CUcontext ctx;		/* legacy: the context it belongs to */
	uint32_t rm_handle;	/* its RM object in libcuda's client */
	size_t rm_size;		/* that object's length (the memfd's size) */
};

/* The driver's functions, as the library's table has them: fake_syms
 * holds them all, and tests call them directly too. */
#define FAKE_DECLARE(field, sym) __typeof__(sym) fake_##field;
GDR_CUDA_DEVICE_FUNCS(FAKE_DECLARE)
GDR_CUDA_MEMORY_FUNCS(FAKE_DECLARE)
GDR_CUDA_CONTEXT_FUNCS(FAKE_DECLARE)
#undef FAKE_DECLARE
extern const struct gdr_cuda_syms fake_syms;

/* Each device's primary context, its references and how often it was
 * created; the contexts tests create (fake_ctx_create); the calling
 * thread's current context. */
extern struct CUctx_st fake_primary[FAKE_DEVS];
extern int fake_primary_refs[FAKE_DEVS];
extern int fake_primary_created[FAKE_DEVS];
extern struct CUctx_st fake_user[FAKE_DEVS][4];
extern _Thread_local CUcontext fake_cur;
/* Calls of the library's memory table (but the owner lookup) made while
 * the current context was not one of the owning device. */
extern atomic_int fake_wrong_ctx;
/* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED per device (all 1 at first). */
extern int fake_dmabuf_supported[FAKE_DEVS];
extern int fake_legacy_allocs[FAKE_DEVS];	/* cuMemAlloc calls per device */
/* Each device's PCI domain, bus and device (CU_DEVICE_ATTRIBUTE_PCI_*). */
extern const int fake_pci_domain[FAKE_DEVS];
extern const int fake_pci_bus[FAKE_DEVS];
extern const int fake_pci_slot[FAKE_DEVS];
/* cuMemAlloc of at most this many bytes is carved from a FAKE_GRAN chunk
 * of the calling context (one physical allocation, one RM object) at
 * FAKE_SUBALLOC_ALIGN steps; 0 (at first): every allocation its own. */
extern size_t fake_suballoc_max;
/* The next device address range starts here, once, if set (addresses
 * of freed memory, reused as CUDA may); the RM handle the next physical
 * allocation gets (a freed one's, reused).  Buffer IDs are never
 * reused. */
extern CUdeviceptr fake_va_reuse;
extern uint32_t fake_next_rm_handle;
/* Tests break things: no context of a device can be made current (as a
 * device lost or in exclusive use by another process), or cuMemSetAccess
 * fails with this result. */
extern int fake_ctx_broken[FAKE_DEVS];
extern CUresult fake_set_access_fails;
extern struct fake_mem fake_mems[FAKE_MAX];
/* Copies on a non-blocking stream, copies on any other; the next copy's
 * result, if set (copy-only pins). */
extern atomic_int fake_dma_copies;
extern atomic_int fake_blocking_copies;
extern CUresult fake_dma_fail;
/* cuPointerGetAttributes calls made for addresses that are no GPU
 * memory's (the host buffer kind's cost), and for GPU memory. */
extern atomic_int fake_host_queries;
extern atomic_int fake_device_queries;

/* Host memory CUDA knows as pinned: cuMemHostAlloc's, and what a test
 * registers as cuMemHostRegister would (one range each, a few at most).
 * 0, or -1 when the table is full. */
int fake_host_register(void *p, size_t n);
void fake_host_unregister(void *p);

/* Not in the library's table: the application's release of a primary
 * context. */
void fake_primary_release(int dev);
/* A context of the test's own on dev (cuCtxCreate), made current. */
CUcontext fake_ctx_create(int dev, int which);
/* The UUID the fake gives device dev. */
void fake_uuid(int dev, unsigned char out[16]);

/* Which device owns p, and its memfd and offset: the GPU's view. */
int fake_locate(CUdeviceptr p, int *fd, off_t *off);
int fake_owner(CUdeviceptr p);
/* Read or write n bytes of device memory at p, as the GPU would. */
int fake_gpu_rw(CUdeviceptr p, void *buf, size_t n, int write);
/* Outstanding physical allocations (legacy and VMM; a chunk is one). */
int fake_live_mems(void);

/*
 * For the fake RM (fake_rm.c), what libcuda knows of its own RM objects.
 * The object behind a dma-buf export of [p, +len), as libcuda names it:
 * the owning device, the handle and the offset of p in the object, with
 * the answer the calling thread's context gets (INVALID_CONTEXT under
 * none, NOT_FOUND under another device's, counted in fake_wrong_ctx).
 * The range must name allocated memory and stay inside one object (a
 * cuMemMap'ed stretch of a handle, or a chunk): INVALID_VALUE otherwise;
 * a device without fake_dmabuf_supported exports nothing: NOT_SUPPORTED.
 */
CUresult fake_cuda_rm_export(CUdeviceptr p, size_t len, int *dev,
			     uint32_t *handle, uint64_t *off);
/* The live object of libcuda's client with that handle: its device, a
 * new fd of its memory (the caller's to close) and its length.  0, or -1
 * once the memory is freed. */
int fake_cuda_rm_object(uint32_t handle, int *dev, int *memfd,
			uint64_t *len);

/* The starting contexts every case is tried from, for device dev. */
enum fake_start { START_NONE, START_OWN_PRIMARY, START_OWN_USER,
		  START_OTHER_PRIMARY, START_OTHER_USER, NR_STARTS };
extern const char *const fake_start_names[NR_STARTS];

/* Make the start context current for device dev; returns it. */
CUcontext fake_enter_start(enum fake_start st, int dev);
void fake_leave_start(enum fake_start st, int dev);

#endif /* GDRMAP_TEST_FAKE_CUDA_H */
