/* SPDX-License-Identifier: MIT */
/*
 * A fake CUDA driver of FAKE_DEVS devices for host tests of the library's
 * context handling (lib/cuda.c's scopes and their users).  It follows what
 * the real driver was measured to do (bench/results/h100/2026-11-23-probes):
 * each thread has a current context (none at first); each device has a
 * primary context, created by its first retain and destroyed by its last
 * release, and tests create contexts of their own; cuPointerGetAttribute
 * answers under any context; cuMemGetAddressRange and
 * cuMemGetHandleForAddressRange fail with INVALID_CONTEXT under none and
 * NOT_FOUND under another device's context; any context of the owner
 * answers, also for legacy memory of another of its contexts.
 *
 * Beyond the driver it counts, in fake_wrong_ctx, every call of the
 * library's memory table (but the owner lookup) made while the current
 * context was not one of the owning device: the library promises none.
 *
 * Device memory is a memfd per allocation, so that what the library maps
 * (an exported fd) and what the test reads as "the GPU's view" are the
 * same bytes.  Addresses are not host addresses.
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

#include "cuda_syms.h"

#define FAKE_DEVS	3
#define FAKE_GRAN	(2UL << 20)
#define FAKE_MAX	64

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
/* Outstanding physical allocations (legacy and VMM). */
int fake_live_mems(void);

/* The starting contexts every case is tried from, for device dev. */
enum fake_start { START_NONE, START_OWN_PRIMARY, START_OWN_USER,
		  START_OTHER_PRIMARY, START_OTHER_USER, NR_STARTS };
extern const char *const fake_start_names[NR_STARTS];

/* Make the start context current for device dev; returns it. */
CUcontext fake_enter_start(enum fake_start st, int dev);
void fake_leave_start(enum fake_start st, int dev);

#endif /* GDRMAP_TEST_FAKE_CUDA_H */
