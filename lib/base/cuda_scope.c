// SPDX-License-Identifier: MIT
/*
 * CUDA, loaded at run time, and the one place where the library changes a
 * thread's current context (cuda_api.h says why it must).  The
 * module-free backends and gdrmap_mem_alloc need CUDA; the gdrdrv backend
 * only asks the process's own libcuda (if it already loaded one) to
 * explain a failed pin, which turns "Invalid argument" into advice.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_load.h"
#include "cuda_syms.h"
#include "internal.h"
#include "log.h"

static struct gdr_cuda_syms cuda;
static const struct gdr_cuda *cuda_ok;
static char cuda_why[256];
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;
static const struct gdr_cuda_syms *given_syms;

/*
 * Each device's primary context, retained the first time the library
 * needs it and never released.  Releasing the last reference destroys a
 * primary context, which costs milliseconds and frees everything in it:
 * retained and released around each call, every pin in a process that
 * never retained the primary context itself (one that uses contexts it
 * created, or none on that thread) would create and destroy one.  The CUDA
 * runtime keeps primary contexts for the life of the process as well, so
 * in most processes this reference is one of several.
 */
static _Atomic(CUcontext) *primary;
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;

void gdr_cuda_use_syms(const struct gdr_cuda_syms *syms)
{
	given_syms = syms;
}

static int load_syms(void)
{
#define GDR_CUDA_SYM_DEV(field, sym) CUDA_SYM(sym, &cuda.dev.field),
#define GDR_CUDA_SYM_MEM(field, sym) CUDA_SYM(sym, &cuda.mem.field),
#define GDR_CUDA_SYM_CTX(field, sym) CUDA_SYM(sym, &cuda.ctx.field),
	const struct cuda_sym syms[] = {
		GDR_CUDA_DEVICE_FUNCS(GDR_CUDA_SYM_DEV)
		GDR_CUDA_MEMORY_FUNCS(GDR_CUDA_SYM_MEM)
		GDR_CUDA_CONTEXT_FUNCS(GDR_CUDA_SYM_CTX)
	};
#undef GDR_CUDA_SYM_DEV
#undef GDR_CUDA_SYM_MEM
#undef GDR_CUDA_SYM_CTX
	const char *what;

	switch (cuda_load_syms(syms, sizeof(syms) / sizeof(syms[0]), &what)) {
	case CUDA_LOADED:
		return 0;
	case CUDA_NO_LIBRARY:
		snprintf(cuda_why, sizeof(cuda_why),
			 "libcuda.so.1 (the NVIDIA driver's CUDA library) cannot be loaded: install the NVIDIA driver, or add its directory to LD_LIBRARY_PATH");
		return -1;
	default:
		snprintf(cuda_why, sizeof(cuda_why),
			 "libcuda.so.1 has no %s: the NVIDIA driver is too old (CUDA 11.3 or newer needed)",
			 what);
		return -1;
	}
}

static void cuda_load(void)
{
	CUresult res;
	int n = 0;

	if (given_syms)
		cuda = *given_syms;
	else if (load_syms())
		return;
	res = cuda.ctx.Init(0);
	if (res != CUDA_SUCCESS) {
		char err[128];

		snprintf(cuda_why, sizeof(cuda_why),
			 "cuInit failed: %s (is an NVIDIA GPU visible here? check nvidia-smi)",
			 gdr_cuda_error(&cuda.dev, res, err, sizeof(err)));
		return;
	}
	cuda.dev.DriverGetVersion(&cuda.dev.driver_version);
	if (cuda.dev.DeviceGetCount(&n) != CUDA_SUCCESS || n < 0)
		n = 0;
	primary = calloc(n ? (size_t)n : 1, sizeof(*primary));
	if (!primary) {
		snprintf(cuda_why, sizeof(cuda_why), "out of memory");
		return;
	}
	cuda.dev.device_count = n;
	cuda_ok = &cuda.dev;
}

const struct gdr_cuda *gdr_cuda_get(char *why, size_t why_len)
{
	pthread_once(&cuda_once, cuda_load);
	if (!cuda_ok && why)
		snprintf(why, why_len, "%s", cuda_why);
	return cuda_ok;
}

const char *gdr_cuda_error(const struct gdr_cuda *cu, CUresult res,
			   char *buf, size_t len)
{
	const char *name = NULL, *text = NULL;

	if (cu) {
		cu->GetErrorName(res, &name);
		cu->GetErrorString(res, &text);
	}
	snprintf(buf, len, "%s (%s)", name ? name : "CUDA error",
		 text ? text : "no description");
	return buf;
}

/* dev's primary context, retained once (see primary above); once it is,
 * without a lock: every DMA copy asks. */
static CUresult primary_context(int dev, CUcontext *ctx)
{
	CUcontext c = NULL;
	CUdevice d;
	CUresult res = CUDA_SUCCESS;

	*ctx = atomic_load_explicit(&primary[dev], memory_order_acquire);
	if (*ctx)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&primary_lock);
	if (!atomic_load_explicit(&primary[dev], memory_order_relaxed)) {
		res = cuda.ctx.DeviceGet(&d, dev);
		if (res == CUDA_SUCCESS)
			res = cuda.ctx.DevicePrimaryCtxRetain(&c, d);
		if (res == CUDA_SUCCESS)
			atomic_store_explicit(&primary[dev], c,
					      memory_order_release);
	}
	*ctx = atomic_load_explicit(&primary[dev], memory_order_relaxed);
	pthread_mutex_unlock(&primary_lock);
	return res;
}

/* An empty scope for device dev, if CUDA works and dev exists. */
static CUresult scope_begin(int dev, struct gdr_cuda_scope *s)
{
	s->call = NULL;
	s->dev = dev;
	s->addr = 0;
	s->prev = NULL;
	s->ctx = NULL;
	s->switched = 0;
	if (!gdr_cuda_get(NULL, 0))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= cuda.dev.device_count)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

CUresult gdr_cuda_enter(int dev, struct gdr_cuda_scope *s)
{
	CUcontext cur = NULL, ctx;
	CUdevice want, cur_dev;
	CUresult res;

	res = scope_begin(dev, s);
	if (res != CUDA_SUCCESS)
		return res;
	res = cuda.ctx.DeviceGet(&want, dev);
	if (res == CUDA_SUCCESS)
		res = cuda.ctx.CtxGetCurrent(&cur);
	if (res != CUDA_SUCCESS)
		return res;
	/*
	 * Any context of the owner answers for its memory, also memory
	 * allocated in another of its contexts (measured): a thread already
	 * in one keeps it, and a process that uses only contexts it created
	 * gets no primary context from us.
	 */
	if (cur && cuda.ctx.CtxGetDevice(&cur_dev) == CUDA_SUCCESS &&
	    cur_dev == want) {
		s->call = &cuda.mem;
		return CUDA_SUCCESS;
	}
	res = primary_context(dev, &ctx);
	if (res == CUDA_SUCCESS)
		res = cuda.ctx.CtxSetCurrent(ctx);
	if (res != CUDA_SUCCESS)
		return res;
	s->prev = cur;
	s->switched = 1;
	s->call = &cuda.mem;
	return CUDA_SUCCESS;
}

CUresult gdr_cuda_enter_ctx(CUcontext ctx, int dev, struct gdr_cuda_scope *s)
{
	CUcontext cur = NULL;
	CUresult res;

	res = scope_begin(dev, s);
	if (res != CUDA_SUCCESS)
		return res;
	res = ctx ? CUDA_SUCCESS : primary_context(dev, &ctx);
	if (res == CUDA_SUCCESS)
		res = cuda.ctx.CtxGetCurrent(&cur);
	if (res == CUDA_SUCCESS && cur != ctx) {
		res = cuda.ctx.CtxSetCurrent(ctx);
		s->prev = cur;
		s->switched = res == CUDA_SUCCESS;
	}
	if (res == CUDA_SUCCESS) {
		s->ctx = ctx;
		s->call = &cuda.mem;
	}
	return res;
}

void gdr_cuda_pointer(uint64_t addr, struct gdr_cuda_ptr *p)
{
	CUpointer_attribute attrs[] = {
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_IS_MANAGED,
		CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
		CU_POINTER_ATTRIBUTE_CONTEXT,
		CU_POINTER_ATTRIBUTE_BUFFER_ID,
		CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	};
	unsigned int type = 0, managed = 0;
	unsigned long long id = 0;
	CUcontext ctx = NULL;
	CUdeviceptr start = 0;
	size_t size = 0;
	int dev = -1;
	void *data[] = { &type, &managed, &dev, &ctx, &id, &start, &size };

	memset(p, 0, sizeof(*p));
	p->dev = -1;
	/* Unlike cuPointerGetAttribute, it answers for any address: what it
	 * does not know gets the attribute's empty value. */
	if (!gdr_cuda_get(NULL, 0) ||
	    cuda.ctx.PointerGetAttributes(7, attrs, data, addr) != CUDA_SUCCESS)
		return;
	p->type = type;
	p->managed = managed != 0;
	if (type == CU_MEMORYTYPE_DEVICE && dev >= 0 &&
	    dev < cuda.dev.device_count) {
		p->dev = dev;
		p->ctx = ctx;
		p->buffer_id = id;
		p->start = start;
		p->size = size;
	}
}

int gdr_cuda_host_pinned(const void *host, size_t n)
{
	CUpointer_attribute attrs[] = {
		CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
		CU_POINTER_ATTRIBUTE_IS_MANAGED,
		CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
		CU_POINTER_ATTRIBUTE_RANGE_SIZE,
	};
	unsigned int type = 0, managed = 0;
	CUdeviceptr start = 0;
	size_t size = 0;
	void *data[] = { &type, &managed, &start, &size };
	uintptr_t h = (uintptr_t)host;

	if (!host || !gdr_cuda_get(NULL, 0) ||
	    cuda.ctx.PointerGetAttributes(4, attrs, data, h) != CUDA_SUCCESS ||
	    type != CU_MEMORYTYPE_HOST || managed)
		return 0;
	/* A buffer that runs past its pinned range (a registered part of a
	 * larger one) is copied as pageable memory: CUDA does the same. */
	return !size || (h >= start && n <= size - (h - start));
}

CUresult gdr_cuda_enter_owner(uint64_t addr, struct gdr_cuda_scope *s)
{
	CUresult res;
	int dev = -1;

	s->call = NULL;
	s->dev = -1;
	s->addr = addr;
	if (!gdr_cuda_get(NULL, 0))
		return CUDA_ERROR_NOT_INITIALIZED;
	/* The one pointer query that answers under any context. */
	res = cuda.ctx.PointerGetAttribute(&dev,
					   CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
					   addr);
	if (res != CUDA_SUCCESS)
		return res;
	res = gdr_cuda_enter(dev, s);
	s->addr = addr;
	return res;
}

void gdr_cuda_leave(struct gdr_cuda_scope *s)
{
	CUresult res;

	if (s->switched) {
		res = cuda.ctx.CtxSetCurrent(s->prev);
		/* Only a context destroyed meanwhile cannot be restored. */
		if (res != CUDA_SUCCESS)
			gdr_warn("the caller's CUDA context could not be made current again: %d",
				 res);
	}
	s->switched = 0;
	s->call = NULL;
}

CUresult gdr_cuda_current_device(int *dev)
{
	CUcontext cur = NULL;
	CUdevice d, want;
	CUresult res;
	int i;

	if (!gdr_cuda_get(NULL, 0))
		return CUDA_ERROR_NOT_INITIALIZED;
	res = cuda.ctx.CtxGetCurrent(&cur);
	if (res == CUDA_SUCCESS && !cur)
		res = CUDA_ERROR_INVALID_CONTEXT;
	if (res == CUDA_SUCCESS)
		res = cuda.ctx.CtxGetDevice(&d);
	if (res != CUDA_SUCCESS)
		return res;
	for (i = 0; i < cuda.dev.device_count; i++) {
		if (cuda.ctx.DeviceGet(&want, i) == CUDA_SUCCESS && want == d) {
			*dev = i;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_DEVICE;
}

const char *gdr_cuda_scope_error(const struct gdr_cuda_scope *s, CUresult res,
				 char *buf, size_t len)
{
	char err[160];

	gdr_cuda_error(cuda_ok, res, err, sizeof(err));
	if (s->dev < 0)
		snprintf(buf, len, "0x%llx is not GPU memory CUDA knows (%s)",
			 (unsigned long long)s->addr, err);
	else if (res == CUDA_ERROR_INVALID_DEVICE)
		snprintf(buf, len, "there is no CUDA device %d (this process sees %d)",
			 s->dev, cuda_ok ? cuda_ok->device_count : 0);
	else
		snprintf(buf, len, "no context of CUDA device %d can be made current: %s",
			 s->dev, err);
	return buf;
}

/* Whether the process itself has loaded CUDA (or a test gave us one). */
static int process_uses_cuda(void)
{
	void *lib;

	if (cuda_ok || given_syms)
		return 1;
	lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib)
		return 0;
	/* Still loaded afterwards: the process loaded it before us. */
	dlclose(lib);
	return 1;
}

/* Does [addr, +size) reach a GPU page its allocation does not use? */
static int past_its_pages(const struct gdr_cuda_scope *s, uint64_t addr,
			  uint64_t size, CUdeviceptr *base, size_t *range)
{
	if (s->call->PointerGetAttribute(base,
					 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
					 addr) != CUDA_SUCCESS ||
	    s->call->PointerGetAttribute(range,
					 CU_POINTER_ATTRIBUTE_RANGE_SIZE,
					 addr) != CUDA_SUCCESS)
		return 0;
	return addr + size > ((*base + *range + GPU_PAGE_SIZE - 1) &
			      GPU_PAGE_MASK);
}

int gdr_cuda_explain_pin(uint64_t addr, uint64_t size, char *buf,
			 size_t len)
{
	struct gdr_cuda_scope s;
	unsigned int type = 0, managed = 0;
	CUdeviceptr base = 0;
	size_t range = 0;
	int said = 1;

	if (!process_uses_cuda() || !gdr_cuda_get(NULL, 0))
		return 0;
	if (gdr_cuda_enter_owner(addr, &s) != CUDA_SUCCESS) {
		if (s.dev >= 0)
			return 0;
		snprintf(buf, len,
			 "0x%llx is not memory CUDA knows (not allocated, already freed, or plain host memory): pin memory from cuMemAlloc or cuMemCreate",
			 (unsigned long long)addr);
		return 1;
	}
	if (s.call->PointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
					addr) == CUDA_SUCCESS && managed)
		snprintf(buf, len,
			 "0x%llx is managed memory (cuMemAllocManaged), which cannot be pinned for the CPU: allocate with cuMemAlloc or cuMemCreate",
			 (unsigned long long)addr);
	else if (s.call->PointerGetAttribute(&type,
					     CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					     addr) == CUDA_SUCCESS &&
		 type == CU_MEMORYTYPE_HOST)
		snprintf(buf, len,
			 "0x%llx is host memory, not GPU memory: the CPU can use it directly, no pin is needed",
			 (unsigned long long)addr);
	/*
	 * Past the end of the allocation but inside its last 64 KiB GPU page
	 * is legal (gdrdrv pins whole GPU pages, and UCX pins such windows
	 * around small buffers): only a range that reaches a GPU page the
	 * allocation does not touch can be the cause.
	 */
	else if (past_its_pages(&s, addr, size, &base, &range))
		snprintf(buf, len,
			 "[0x%llx, +%llu) runs past the end of its allocation [0x%llx, +%zu) into a GPU page it does not use: pin inside one allocation's pages",
			 (unsigned long long)addr, (unsigned long long)size,
			 (unsigned long long)base, range);
	else
		said = 0;
	gdr_cuda_leave(&s);
	return said;
}
