// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1 for gdrmap's simulated GPU (sim/nvsim): the CUDA driver API
 * calls that GPUDirect programs use, over /dev/nvsim.  NOT REAL HARDWARE:
 * one simulated device whose memory is a QEMU ivshmem BAR.
 *
 * Device pointers are addresses reserved in this process with
 * mmap(PROT_NONE) (unique, as unified addressing guarantees; never valid
 * CPU pointers), registered with nvsim, which backs them with BAR pages
 * and resolves them for nvidia_p2p_get_pages.  One mutex guards all state.
 */
#define GDRMAP_CUDA_NO_NAME_MACROS
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_defs.h"
#include "nvsim_ioctl.h"

#define SHIM_DEVICE_NAME "gdrmap simulated GPU (nvsim, not real hardware)"
#define SHIM_DRIVER_VERSION 13000
#define SHIM_VMM_GRANULARITY (2ULL << 20)
#define SHIM_PAGE NVSIM_PAGE_SIZE
#define SHIM_SUBALLOC_OFFSET 0x200

/* user_flags kept by nvsim for each memory object */
#define UF_HANDLE_TYPES_MASK	0xffu		/* requestedHandleTypes */
#define UF_RDMA_CAPABLE		(1u << 8)	/* gpuDirectRDMACapable */
#define UF_CUMEMALLOC		(1u << 31)	/* made by cuMemAlloc */

struct CUctx_st {
	struct CUctx_st *next;
	bool primary;
	unsigned int flags;
};

enum rec_kind { REC_DEVICE, REC_HOST, REC_RESERVE, REC_MANAGED };

/* What this process allocated: cuMemAlloc, cuMemAllocHost, reservations. */
struct rec {
	struct rec *next;
	enum rec_kind kind;
	uint64_t res_base, res_size;	/* the mmap'ed reservation */
	uint64_t ptr, size;		/* what the caller sees */
	CUcontext ctx;
	uint64_t buffer_id;
	bool sync_memops;
};

static pthread_mutex_t shim_lock = PTHREAD_MUTEX_INITIALIZER;
static bool shim_initialized;
static CUresult shim_init_result = CUDA_ERROR_NOT_INITIALIZED;
static int shim_fd = -1;
static struct nvsim_info shim_info;
static long shim_alloc_offset = -1;	/* -1: 0x200 below 64 KiB only */

static struct CUctx_st primary_ctx = { .primary = true };
static unsigned int primary_refs;
static struct CUctx_st *ctx_list;	/* cuCtxCreate contexts */
static struct rec *rec_list;
static uint64_t next_host_buffer_id = 1ULL << 62;

#define CTX_STACK_DEPTH 32
static _Thread_local CUcontext cur_ctx;
static _Thread_local CUcontext ctx_stack[CTX_STACK_DEPTH];
static _Thread_local unsigned int ctx_stack_len;

/* Helpers (called with shim_lock held where they touch state) */

static CUresult errno_to_cu(int err)
{
	switch (err) {
	case ENOMEM:
		return CUDA_ERROR_OUT_OF_MEMORY;
	case ENODEV:
	case ENXIO:
		return CUDA_ERROR_NO_DEVICE;
	case EACCES:
	case EPERM:
		return CUDA_ERROR_NOT_PERMITTED;
	case EINVAL:
	case EFAULT:
	case ENOENT:
	case EEXIST:
		return CUDA_ERROR_INVALID_VALUE;
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

static int nvsim_ioctl(unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(shim_fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? errno : 0;
}

static bool ctx_valid(CUcontext c)
{
	struct CUctx_st *p;

	if (!c)
		return false;
	if (c == &primary_ctx)
		return primary_refs > 0;
	for (p = ctx_list; p; p = p->next)
		if (p == c)
			return true;
	return false;
}

/* The calling thread's context, or an error for calls that need one. */
static CUresult need_ctx(CUcontext *out)
{
	if (!shim_initialized)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!cur_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!ctx_valid(cur_ctx))
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	if (out)
		*out = cur_ctx;
	return CUDA_SUCCESS;
}

static struct rec *rec_find(enum rec_kind kind, uint64_t p, uint64_t len)
{
	struct rec *r;

	for (r = rec_list; r; r = r->next) {
		if (r->kind != kind)
			continue;
		if (p >= r->ptr && p - r->ptr < r->size)
			return r->size - (p - r->ptr) >= len ? r : NULL;
	}
	return NULL;
}

static void rec_unlink(struct rec *x)
{
	struct rec **pp;

	for (pp = &rec_list; *pp; pp = &(*pp)->next) {
		if (*pp == x) {
			*pp = x->next;
			return;
		}
	}
}

/* The CPU's page size: 4 KiB on x86, 4, 16 or 64 KiB on arm64. */
static uint64_t host_page(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (uint64_t)page : 4096;
}

/* Reserve size bytes of address space aligned to align (a power of 2). */
static uint64_t reserve_va(uint64_t size, uint64_t align)
{
	uint64_t base, start;
	void *p;

	if (size > UINT64_MAX - align)
		return 0;
	p = mmap(NULL, size + align, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	base = (uintptr_t)p;
	start = (base + align - 1) & ~(align - 1);
	if (start > base)
		munmap(p, start - base);
	if (base + size + align > start + size)
		munmap((void *)(uintptr_t)(start + size),
		       base + size + align - (start + size));
	return start;
}

static void release_va(uint64_t base, uint64_t size)
{
	munmap((void *)(uintptr_t)base, size);
}

static bool nvsim_query_va(uint64_t va, struct nvsim_query *q)
{
	memset(q, 0, sizeof(*q));
	q->va = va;
	return nvsim_ioctl(NVSIM_IOC_QUERY, q) == 0;
}

/*
 * Is [p, p + len) device memory?  Inside one cuMemAlloc allocation (its
 * user range, not the padding around it), or one cuMemMap mapping.
 */
static bool dev_range(uint64_t p, uint64_t len)
{
	struct nvsim_query q;
	struct rec *r;

	for (r = rec_list; r; r = r->next)
		if (r->kind == REC_DEVICE && p >= r->res_base &&
		    p - r->res_base < r->res_size)
			return p >= r->ptr && p - r->ptr < r->size &&
			       len <= r->size - (p - r->ptr);
	if (!nvsim_query_va(p, &q))
		return false;
	return len <= q.size - (p - q.base);
}

/* Is p anywhere in device address space (reserved, never a CPU address)? */
static bool dev_space(uint64_t p)
{
	struct nvsim_query q;
	struct rec *r;

	for (r = rec_list; r; r = r->next)
		if ((r->kind == REC_DEVICE || r->kind == REC_RESERVE) &&
		    p >= r->res_base &&
		    p - r->res_base < r->res_size)
			return true;
	return nvsim_query_va(p, &q);
}

/* Is [p, p + len) inside one managed allocation (CPU memory here)? */
static bool managed_range(uint64_t p, uint64_t len)
{
	struct rec *r = rec_find(REC_MANAGED, p, len ? len : 1);

	return r != NULL;
}

static CUresult free_device_rec(struct rec *r)
{
	struct nvsim_unmap u = { .va = r->res_base, .size = r->res_size };
	int err = nvsim_ioctl(NVSIM_IOC_UNMAP, &u);

	/* The callbacks of pins on the memory have run by now. */
	rec_unlink(r);
	release_va(r->res_base, r->res_size);
	free(r);
	return err ? errno_to_cu(err) : CUDA_SUCCESS;
}

static void free_host_rec(struct rec *r)
{
	rec_unlink(r);
	release_va(r->res_base, r->res_size);
	free(r);
}

/* Context teardown: free the memory the context owns. */
static void free_ctx_memory(CUcontext c)
{
	struct rec *r, *next;

	for (r = rec_list; r; r = next) {
		next = r->next;
		if (r->ctx != c)
			continue;
		if (r->kind == REC_DEVICE)
			free_device_rec(r);
		else if (r->kind == REC_HOST || r->kind == REC_MANAGED)
			free_host_rec(r);
	}
}

#define CHECK_INIT()							\
	do {								\
		if (!shim_initialized)					\
			return CUDA_ERROR_NOT_INITIALIZED;		\
	} while (0)

/* Initialization and version */

static void read_env(void)
{
	const char *s = getenv("NVSIM_ALLOC_OFFSET");
	char *end;
	long v;

	if (!s)
		return;
	errno = 0;
	v = strtol(s, &end, 0);
	if (!errno && *s && !*end && v >= 0 && v < (long)SHIM_PAGE &&
	    !(v & 0xff))
		shim_alloc_offset = v;
	else
		fprintf(stderr, "libcuda (nvsim shim): ignoring NVSIM_ALLOC_OFFSET=%s\n",
			s);
}

CUresult cuInit(unsigned int flags)
{
	const char *path = getenv("NVSIM_DEVICE");
	CUresult ret;
	int fd, err;

	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	if (shim_initialized || shim_init_result != CUDA_ERROR_NOT_INITIALIZED) {
		ret = shim_initialized ? CUDA_SUCCESS : shim_init_result;
		goto out;
	}
	fd = open(path && *path ? path : NVSIM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		/* No simulated GPU: the same answer as a machine without one. */
		ret = CUDA_ERROR_NO_DEVICE;
		goto fail;
	}
	shim_fd = fd;
	memset(&shim_info, 0, sizeof(shim_info));
	err = nvsim_ioctl(NVSIM_IOC_INFO, &shim_info);
	if (err || shim_info.abi_version != NVSIM_ABI_VERSION ||
	    shim_info.page_size != SHIM_PAGE) {
		ret = err ? CUDA_ERROR_NO_DEVICE : CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
		close(fd);
		shim_fd = -1;
		goto fail;
	}
	read_env();
	shim_initialized = true;
	ret = CUDA_SUCCESS;
	goto out;
fail:
	shim_init_result = ret;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuDriverGetVersion(int *version)
{
	const char *s = getenv("NVSIM_DRIVER_VERSION");

	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = s && atoi(s) > 0 ? atoi(s) : SHIM_DRIVER_VERSION;
	return CUDA_SUCCESS;
}

/* Devices */

CUresult cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	*count = 1;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = 0;
	return CUDA_SUCCESS;
}

#define CHECK_DEV(dev)							\
	do {								\
		CHECK_INIT();						\
		if ((dev) != 0)						\
			return CUDA_ERROR_INVALID_DEVICE;		\
	} while (0)

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	snprintf(name, (size_t)len, "%s", SHIM_DEVICE_NAME);
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	memcpy(uuid->bytes, shim_info.uuid, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid(uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	*bytes = shim_info.bar_size;
	return CUDA_SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char *busid, int len, CUdevice dev)
{
	if (!busid || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	snprintf(busid, (size_t)len, "%08x:%02x:%02x.%x", shim_info.pci_domain,
		 shim_info.pci_bus, shim_info.pci_device,
		 shim_info.pci_function);
	return CUDA_SUCCESS;
}

/* nvsim's capabilities now (module parameters may change at run time). */
static uint64_t shim_dmabuf_caps(void)
{
	struct nvsim_info info = { 0 };

	pthread_mutex_lock(&shim_lock);
	if (nvsim_ioctl(NVSIM_IOC_INFO, &info))
		info.caps = 0;
	pthread_mutex_unlock(&shim_lock);
	return info.caps;
}

/* The CU_DEVICE_ATTRIBUTE_* enum ends below this (CUDA 13 has ~140). */
#define SHIM_ATTR_LIMIT 256

CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev)
{
	int v = 0;

	if (!value || attrib <= 0 || attrib >= SHIM_ATTR_LIMIT)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		v = 1024;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		v = 64;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		v = 2147483647;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		v = 65535;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		v = 49152;
		break;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
		v = 65536;
		break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		v = 32;
		break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
		v = 1000000;	/* kHz; meaningless on a simulator */
		break;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
		v = 64;
		break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		v = 1;
		break;
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		v = shim_dmabuf_caps() & NVSIM_CAP_DMABUF ? 1 : 0;
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		v = shim_info.pci_bus;
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
		v = shim_info.pci_device;
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
		v = (int)shim_info.pci_domain;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		v = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS:
		v = 1;
		break;
	default:
		/* Everything else, e.g. DMA_BUF_SUPPORTED, INTEGRATED,
		 * PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, MANAGED_MEMORY,
		 * HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
		 * COMPUTE_MODE (default), GPU_DIRECT_RDMA_WRITES_ORDERING. */
		v = 0;
		break;
	}
	*value = v;
	return CUDA_SUCCESS;
}

/* Contexts */

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	pthread_mutex_lock(&shim_lock);
	primary_refs++;
	*pctx = &primary_ctx;
	pthread_mutex_unlock(&shim_lock);
	return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult ret = CUDA_SUCCESS;

	CHECK_DEV(dev);
	pthread_mutex_lock(&shim_lock);
	if (!primary_refs)
		ret = CUDA_ERROR_INVALID_CONTEXT;
	else if (!--primary_refs)
		free_ctx_memory(&primary_ctx);	/* the context is destroyed */
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
				    int *active)
{
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	pthread_mutex_lock(&shim_lock);
	*flags = primary_ctx.flags;
	*active = primary_refs > 0;
	pthread_mutex_unlock(&shim_lock);
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	struct CUctx_st *c;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_DEV(dev);
	c = calloc(1, sizeof(*c));
	if (!c)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->flags = flags;
	pthread_mutex_lock(&shim_lock);
	c->next = ctx_list;
	ctx_list = c;
	pthread_mutex_unlock(&shim_lock);
	/* The new context becomes current (pushed) for this thread. */
	if (cur_ctx && ctx_stack_len < CTX_STACK_DEPTH)
		ctx_stack[ctx_stack_len++] = cur_ctx;
	cur_ctx = c;
	*pctx = c;
	return CUDA_SUCCESS;
}

CUresult cuCtxCreate_v3(CUcontext *pctx, void *params, int nparams,
			unsigned int flags, CUdevice dev)
{
	if (nparams < 0 || (nparams > 0 && !params))
		return CUDA_ERROR_INVALID_VALUE;
	if (nparams > 0)
		return CUDA_ERROR_NOT_SUPPORTED;	/* execution affinity */
	return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
			unsigned int flags, CUdevice dev)
{
	if (params && (params->execAffinityParams ||
		       params->numExecAffinityParams || params->cigParams))
		return CUDA_ERROR_NOT_SUPPORTED;
	return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	struct CUctx_st **pp;
	unsigned int i, j;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	for (pp = &ctx_list; *pp && *pp != ctx; pp = &(*pp)->next)
		;
	if (!ctx || !*pp) {
		pthread_mutex_unlock(&shim_lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	*pp = ctx->next;
	free_ctx_memory(ctx);
	pthread_mutex_unlock(&shim_lock);

	/* Off this thread's stack; other threads see it as destroyed. */
	for (i = j = 0; i < ctx_stack_len; i++)
		if (ctx_stack[i] != ctx)
			ctx_stack[j++] = ctx_stack[i];
	ctx_stack_len = j;
	if (cur_ctx == ctx)
		cur_ctx = ctx_stack_len ? ctx_stack[--ctx_stack_len] : NULL;
	free(ctx);
	return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	bool ok;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ok = !ctx || ctx_valid(ctx);
	pthread_mutex_unlock(&shim_lock);
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	cur_ctx = ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	*pctx = cur_ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	bool ok;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	ok = ctx_valid(ctx);
	pthread_mutex_unlock(&shim_lock);
	if (!ok)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (cur_ctx) {
		if (ctx_stack_len == CTX_STACK_DEPTH)
			return CUDA_ERROR_OUT_OF_MEMORY;
		ctx_stack[ctx_stack_len++] = cur_ctx;
	}
	cur_ctx = ctx;
	return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	CHECK_INIT();
	if (!cur_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (pctx)
		*pctx = cur_ctx;
	cur_ctx = ctx_stack_len ? ctx_stack[--ctx_stack_len] : NULL;
	return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *dev)
{
	CUresult ret;

	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(NULL);
	pthread_mutex_unlock(&shim_lock);
	if (ret == CUDA_SUCCESS)
		*dev = 0;
	return ret;
}

CUresult cuCtxSynchronize(void)
{
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(NULL);	/* every operation here is synchronous */
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* Memory: cuMemAlloc family */

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	struct nvsim_alloc a = { 0 };
	uint64_t off, len, align, va;
	CUcontext ctx;
	struct rec *r;
	CUresult ret;
	int err;

	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(&ctx);
	if (ret)
		goto out;
	ret = CUDA_ERROR_OUT_OF_MEMORY;
	if (bytesize > shim_info.bar_size)
		goto out;

	/* Small allocations are sub-allocated, not 64 KiB aligned (H200). */
	if (shim_alloc_offset >= 0)
		off = (uint64_t)shim_alloc_offset;
	else
		off = bytesize < SHIM_PAGE ? SHIM_SUBALLOC_OFFSET : 0;
	len = (off + bytesize + SHIM_PAGE - 1) & ~(SHIM_PAGE - 1);
	align = len >= SHIM_VMM_GRANULARITY ? SHIM_VMM_GRANULARITY : SHIM_PAGE;

	r = calloc(1, sizeof(*r));
	if (!r)
		goto out;
	va = reserve_va(len, align);
	if (!va) {
		free(r);
		goto out;
	}
	a.va = va;
	a.size = len;
	a.user_flags = UF_CUMEMALLOC | UF_RDMA_CAPABLE;
	err = nvsim_ioctl(NVSIM_IOC_ALLOC, &a);
	if (err) {
		release_va(va, len);
		free(r);
		ret = errno_to_cu(err);
		goto out;
	}
	r->kind = REC_DEVICE;
	r->res_base = va;
	r->res_size = len;
	r->ptr = va + off;
	r->size = bytesize;
	r->ctx = ctx;
	r->buffer_id = a.buffer_id;
	r->next = rec_list;
	rec_list = r;
	*dptr = r->ptr;
	ret = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct rec *r;
	CUresult ret;

	CHECK_INIT();
	if (!dptr)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_DEVICE, dptr, 1);
	if (r && r->ptr == dptr) {
		ret = free_device_rec(r);
	} else {
		r = rec_find(REC_MANAGED, dptr, 1);
		if (r && r->ptr == dptr) {
			free_host_rec(r);
			ret = CUDA_SUCCESS;
		} else {
			ret = CUDA_ERROR_INVALID_VALUE;
		}
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* CPU memory recorded as kind (cuMemAllocHost, cuMemAllocManaged). */
static CUresult alloc_cpu_mem(void **pp, size_t bytesize, enum rec_kind kind)
{
	uint64_t len, va, page = host_page();
	CUcontext ctx;
	struct rec *r;
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(&ctx);
	if (ret)
		goto out;
	ret = CUDA_ERROR_OUT_OF_MEMORY;
	len = ((uint64_t)bytesize + page - 1) & ~(page - 1);
	if (len < bytesize)
		goto out;
	r = calloc(1, sizeof(*r));
	if (!r)
		goto out;
	va = (uintptr_t)mmap(NULL, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (va == (uintptr_t)MAP_FAILED) {
		free(r);
		goto out;
	}
	r->kind = kind;
	r->res_base = r->ptr = va;
	r->res_size = len;
	r->size = bytesize;
	r->ctx = ctx;
	r->buffer_id = next_host_buffer_id++;
	r->next = rec_list;
	rec_list = r;
	*pp = (void *)(uintptr_t)va;
	ret = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	if (!pp || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	return alloc_cpu_mem(pp, bytesize, REC_HOST);
}

/*
 * Managed memory: ordinary CPU memory here (the simulated GPU runs no
 * code), known to CUDA as managed, so that it can be told apart, and
 * never device memory that nvidia_p2p_get_pages would accept.
 */
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
			   unsigned int flags)
{
	void *p = NULL;
	CUresult ret;

	if (!dptr || !bytesize ||
	    (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	ret = alloc_cpu_mem(&p, bytesize, REC_MANAGED);
	if (ret == CUDA_SUCCESS)
		*dptr = (uintptr_t)p;
	return ret;
}

CUresult cuMemFreeHost(void *p)
{
	struct rec *r;
	CUresult ret = CUDA_SUCCESS;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_HOST, (uintptr_t)p, 1);
	if (!r || r->ptr != (uintptr_t)p)
		ret = CUDA_ERROR_INVALID_VALUE;
	else
		free_host_rec(r);
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

static CUresult do_memset(CUdeviceptr dst, uint32_t value, size_t n,
			  uint32_t elem)
{
	struct nvsim_memset m = { .va = dst, .count = n, .value = value,
				  .elem_size = elem };
	CUresult ret;
	int err;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(NULL);
	if (ret)
		goto out;
	ret = CUDA_ERROR_INVALID_VALUE;
	if (n > UINT64_MAX / elem || dst % elem)
		goto out;
	if (managed_range(dst, n * elem)) {
		uint8_t v8 = (uint8_t)value;
		uint16_t v16 = (uint16_t)value;
		const void *v = elem == 1 ? (const void *)&v8 :
				elem == 2 ? (const void *)&v16 : &value;

		for (size_t i = 0; i < n; i++)
			memcpy((char *)(uintptr_t)dst + i * elem, v, elem);
		ret = CUDA_SUCCESS;
		goto out;
	}
	if (!dev_range(dst, n ? n * elem : 1))
		goto out;
	err = nvsim_ioctl(NVSIM_IOC_MEMSET, &m);
	ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n)
{
	return do_memset(dst, uc, n, 1);
}

CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short us, size_t n)
{
	return do_memset(dst, us, n, 2);
}

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n)
{
	return do_memset(dst, ui, n, 4);
}

/* pread/pwrite at device addresses, until done. */
static CUresult dev_rw(uint64_t dev, void *host, size_t n, bool write)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		if (write)
			r = pwrite(shim_fd, (char *)host + done, n - done,
				   (off_t)(dev + done));
		else
			r = pread(shim_fd, (char *)host + done, n - done,
				  (off_t)(dev + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? errno_to_cu(errno) : CUDA_ERROR_UNKNOWN;
		done += (size_t)r;
	}
	return CUDA_SUCCESS;
}

/* Host <-> device copy of n bytes: dev is the GPU side, host the CPU's. */
static CUresult host_dev_copy(CUdeviceptr dev, void *host, size_t n,
			      bool to_dev)
{
	CUresult ret;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(NULL);
	if (ret)
		goto out;
	ret = CUDA_ERROR_INVALID_VALUE;
	if (!n) {
		ret = CUDA_SUCCESS;
		goto out;
	}
	if (!host)
		goto out;
	if (managed_range(dev, n)) {
		if (to_dev)
			memcpy((void *)(uintptr_t)dev, host, n);
		else
			memcpy(host, (void *)(uintptr_t)dev, n);
		ret = CUDA_SUCCESS;
	} else if (dev_range(dev, n)) {
		ret = dev_rw(dev, host, n, to_dev);
	}
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	return host_dev_copy(dst, (void *)src, n, true);
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	return host_dev_copy(src, dst, n, false);
}

/* Unified addressing: either side may be host or device memory. */
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	struct nvsim_copy c = { .dst = dst, .src = src, .size = n };
	bool ddev, sdev;
	CUresult ret;
	int err;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(NULL);
	if (ret || !n)
		goto out;
	ret = CUDA_ERROR_INVALID_VALUE;
	if (!dst || !src)
		goto out;
	ddev = dev_range(dst, n);
	sdev = dev_range(src, n);
	/* Device address space outside an allocation is invalid. */
	if ((!ddev && dev_space(dst)) || (!sdev && dev_space(src)))
		goto out;
	if (ddev && sdev) {
		err = nvsim_ioctl(NVSIM_IOC_COPY, &c);
		ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
	} else if (ddev) {
		ret = dev_rw(dst, (void *)(uintptr_t)src, n, true);
	} else if (sdev) {
		ret = dev_rw(src, (void *)(uintptr_t)dst, n, false);
	} else {
		memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
		ret = CUDA_SUCCESS;
	}
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	struct nvsim_copy c = { .dst = dst, .src = src, .size = n };
	CUresult ret;
	int err;

	pthread_mutex_lock(&shim_lock);
	ret = need_ctx(NULL);
	if (ret || !n)
		goto out;
	ret = CUDA_ERROR_INVALID_VALUE;
	if (!dev_range(dst, n) || !dev_range(src, n))
		goto out;
	err = nvsim_ioctl(NVSIM_IOC_COPY, &c);
	ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
				 CUdeviceptr dptr)
{
	struct nvsim_query q;
	uint64_t base = 0, size = 0;
	struct rec *r;
	CUresult ret = CUDA_SUCCESS;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_DEVICE, dptr, 1);
	if (!r)
		r = rec_find(REC_MANAGED, dptr, 1);
	if (r) {
		base = r->ptr;
		size = r->size;
	} else if (nvsim_query_va(dptr, &q) && !(q.user_flags & UF_CUMEMALLOC)) {
		base = q.base;	/* a cuMemMap'ed range */
		size = q.size;
	} else {
		ret = CUDA_ERROR_NOT_FOUND;
	}
	pthread_mutex_unlock(&shim_lock);
	if (ret)
		return ret;
	if (pbase)
		*pbase = base;
	if (psize)
		*psize = size;
	return CUDA_SUCCESS;
}

/* Pointer attributes */

struct ptr_info {
	int type;			/* CU_MEMORYTYPE_*, 0 if unknown */
	CUcontext ctx;
	uint64_t start, size;		/* RANGE_START_ADDR / RANGE_SIZE */
	uint64_t buffer_id;
	uint64_t p2p_token;
	uint32_t va_space;
	uint32_t user_flags;
	struct rec *rec;		/* cuMemAlloc/cuMemAllocHost record */
	bool managed;
};

static bool ptr_lookup(uint64_t p, struct ptr_info *pi)
{
	struct nvsim_query q;
	struct rec *r;

	memset(pi, 0, sizeof(*pi));
	r = rec_find(REC_DEVICE, p, 1);
	if (r && nvsim_query_va(p, &q)) {
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->ctx = r->ctx;
		pi->start = r->ptr;
		pi->size = r->size;
		pi->buffer_id = r->buffer_id;
		pi->p2p_token = q.p2p_token;
		pi->va_space = q.va_space;
		pi->user_flags = q.user_flags;
		pi->rec = r;
		return true;
	}
	r = rec_find(REC_MANAGED, p, 1);
	if (r) {
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->managed = true;
		pi->ctx = r->ctx;
		pi->start = r->ptr;
		pi->size = r->size;
		pi->buffer_id = r->buffer_id;
		pi->rec = r;
		return true;
	}
	r = rec_find(REC_HOST, p, 1);
	if (r) {
		pi->type = CU_MEMORYTYPE_HOST;
		pi->ctx = r->ctx;
		pi->start = r->ptr;
		pi->size = r->size;
		pi->buffer_id = r->buffer_id;
		pi->rec = r;
		return true;
	}
	if (nvsim_query_va(p, &q) && !(q.user_flags & UF_CUMEMALLOC)) {
		pi->type = CU_MEMORYTYPE_DEVICE;
		pi->start = q.base;
		pi->size = q.size;
		/* The mappable range is the reservation the mapping is in. */
		r = rec_find(REC_RESERVE, p, 1);
		if (r) {
			pi->start = r->ptr;
			pi->size = r->size;
		}
		pi->buffer_id = q.buffer_id;
		pi->p2p_token = q.p2p_token;
		pi->va_space = q.va_space;
		pi->user_flags = q.user_flags;
		return true;
	}
	return false;
}

/* The size of each attribute's value, 0 if not supported here. */
static size_t attr_size(CUpointer_attribute a)
{
	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		return sizeof(CUcontext);
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
	case CU_POINTER_ATTRIBUTE_MAPPED:
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		return sizeof(unsigned int);
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		return sizeof(CUdeviceptr);
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		return sizeof(void *);
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		return sizeof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS);
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		return sizeof(unsigned long long);
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		return sizeof(size_t);
	default:
		return 0;
	}
}

static CUresult attr_get(void *data, CUpointer_attribute a, uint64_t p,
			 struct ptr_info *pi)
{
	bool dev = pi->type == CU_MEMORYTYPE_DEVICE;
	bool alloc = pi->rec != NULL;	/* cuMemAlloc or cuMemAllocHost */
	unsigned int u = 0;
	unsigned long long ull = 0;
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tok;
	void *vp;

	switch (a) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		memcpy(data, &pi->ctx, sizeof(pi->ctx));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		u = (unsigned int)pi->type;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		ull = p;
		memcpy(data, &ull, sizeof(ull));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (dev && !pi->managed)
			return CUDA_ERROR_INVALID_VALUE;
		vp = (void *)(uintptr_t)p;
		memcpy(data, &vp, sizeof(vp));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
		if (!dev || !alloc || pi->managed)
			return CUDA_ERROR_INVALID_VALUE;
		pi->rec->sync_memops = true;	/* a documented side effect */
		memset(&tok, 0, sizeof(tok));
		tok.p2pToken = pi->p2p_token;
		tok.vaSpaceToken = pi->va_space;
		memcpy(data, &tok, sizeof(tok));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		u = alloc ? pi->rec->sync_memops : 1;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		ull = pi->buffer_id;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		u = pi->managed;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		u = 0;
		break;
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		u = dev && alloc && !pi->managed;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		ull = pi->start;
		memcpy(data, &ull, sizeof(ull));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		memcpy(data, &(size_t){ pi->size }, sizeof(size_t));
		return CUDA_SUCCESS;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		u = 1;
		break;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		ull = dev && !alloc ? (pi->user_flags & UF_HANDLE_TYPES_MASK) : 0;
		break;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		u = dev && (pi->user_flags & UF_RDMA_CAPABLE);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (attr_size(a) == sizeof(unsigned int))
		memcpy(data, &u, sizeof(u));
	else
		memcpy(data, &ull, sizeof(ull));
	return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
			       CUdeviceptr ptr)
{
	struct ptr_info pi;
	CUresult ret;

	if (!data || !attr_size(attribute))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	if (!ptr_lookup(ptr, &pi))
		ret = CUDA_ERROR_INVALID_VALUE;	/* not CUDA memory */
	else
		ret = attr_get(data, attribute, ptr, &pi);
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuPointerGetAttributes(unsigned int count,
				CUpointer_attribute *attributes, void **data,
				CUdeviceptr ptr)
{
	struct ptr_info pi;
	CUresult ret = CUDA_SUCCESS;
	unsigned int i;
	bool known;

	if (!count || !attributes || !data)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++)
		if (!data[i] || !attr_size(attributes[i]))
			return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	known = ptr_lookup(ptr, &pi);
	for (i = 0; i < count; i++) {
		/* Unlike the single query: zeros for what does not apply. */
		if (!known ||
		    attr_get(data[i], attributes[i], ptr, &pi) != CUDA_SUCCESS)
			memset(data[i], 0, attr_size(attributes[i]));
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuPointerSetAttribute(const void *value,
			       CUpointer_attribute attribute, CUdeviceptr ptr)
{
	struct rec *r;
	CUresult ret = CUDA_SUCCESS;

	if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_DEVICE, ptr, 1);
	if (r)
		r->sync_memops = *(const unsigned char *)value != 0;
	else if (!dev_range(ptr, 1))
		ret = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

/* Virtual memory management */

static bool prop_ok(const CUmemAllocationProp *prop)
{
	return prop && prop->type == CU_MEM_ALLOCATION_TYPE_PINNED &&
	       prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
	       prop->location.id == 0;
}

CUresult cuMemGetAllocationGranularity(size_t *granularity,
				       const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	if (!granularity || !prop_ok(prop) ||
	    (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
	     option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	*granularity = SHIM_VMM_GRANULARITY;
	return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct nvsim_mem_create c = { 0 };
	int err;

	if (!handle || !prop_ok(prop) || flags || !size ||
	    size % SHIM_VMM_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	/* No shareable handles on the simulator (no fd/fabric export). */
	if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (size > shim_info.bar_size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	c.size = size;
	c.user_flags = (uint32_t)prop->requestedHandleTypes &
		       UF_HANDLE_TYPES_MASK;
	if (prop->allocFlags.gpuDirectRDMACapable)
		c.user_flags |= UF_RDMA_CAPABLE;
	pthread_mutex_lock(&shim_lock);
	err = nvsim_ioctl(NVSIM_IOC_MEM_CREATE, &c);
	pthread_mutex_unlock(&shim_lock);
	if (err)
		return errno_to_cu(err);
	*handle = c.handle;
	return CUDA_SUCCESS;
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct nvsim_mem_release r = { .handle = (uint32_t)handle };
	int err;

	CHECK_INIT();
	if (!handle || handle > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	err = nvsim_ioctl(NVSIM_IOC_MEM_RELEASE, &r);
	pthread_mutex_unlock(&shim_lock);
	return err ? errno_to_cu(err) : CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
			     CUdeviceptr addr, unsigned long long flags)
{
	uint64_t va = 0;
	struct rec *r;
	void *p;

	(void)addr;
	if (!ptr || !size || size % SHIM_VMM_GRANULARITY || flags ||
	    (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	if (alignment < SHIM_VMM_GRANULARITY)
		alignment = SHIM_VMM_GRANULARITY;
	r = calloc(1, sizeof(*r));
	if (!r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* The address hint is honoured when that range is free. */
	if (addr && !(addr % alignment)) {
		p = mmap((void *)(uintptr_t)addr, size, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			 MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED && (uintptr_t)p == addr)
			va = addr;
		else if (p != MAP_FAILED)
			munmap(p, size);
	}
	if (!va)
		va = reserve_va(size, alignment);
	if (!va) {
		free(r);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	r->kind = REC_RESERVE;
	r->res_base = r->ptr = va;
	r->res_size = r->size = size;
	pthread_mutex_lock(&shim_lock);
	r->next = rec_list;
	rec_list = r;
	pthread_mutex_unlock(&shim_lock);
	*ptr = va;
	return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct nvsim_unmap u = { .va = ptr, .size = size };
	struct rec *r;
	CUresult ret = CUDA_SUCCESS;

	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	r = rec_find(REC_RESERVE, ptr, 1);
	if (!r || r->ptr != ptr || r->size != size) {
		ret = CUDA_ERROR_INVALID_VALUE;
	} else {
		/* Whatever is still mapped there goes with it. */
		nvsim_ioctl(NVSIM_IOC_UNMAP, &u);
		rec_unlink(r);
		release_va(r->res_base, r->res_size);
		free(r);
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct nvsim_map m = { .va = ptr, .size = size, .offset = offset,
			       .handle = (uint32_t)handle };
	CUresult ret = CUDA_ERROR_INVALID_VALUE;
	int err;

	CHECK_INIT();
	if (flags || !size || size % SHIM_VMM_GRANULARITY ||
	    offset % SHIM_VMM_GRANULARITY || ptr % SHIM_VMM_GRANULARITY ||
	    !handle || handle > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	if (!rec_find(REC_RESERVE, ptr, size))
		goto out;
	err = nvsim_ioctl(NVSIM_IOC_MAP, &m);
	if (err == EEXIST)
		ret = CUDA_ERROR_ALREADY_MAPPED;
	else
		ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct nvsim_unmap u = { .va = ptr, .size = size };
	CUresult ret = CUDA_ERROR_INVALID_VALUE;
	int err;

	CHECK_INIT();
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	if (rec_find(REC_RESERVE, ptr, size)) {
		err = nvsim_ioctl(NVSIM_IOC_UNMAP, &u);	/* fires callbacks */
		ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
			const CUmemAccessDesc *desc, size_t count)
{
	struct nvsim_query q;
	uint64_t p = ptr, end = ptr + size;
	CUresult ret = CUDA_SUCCESS;
	size_t i;

	if (!desc || !count || !size || end < ptr)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			return CUDA_ERROR_INVALID_VALUE;
		if (desc[i].location.id != 0)
			return CUDA_ERROR_INVALID_DEVICE;
		if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		    desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		    desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
			return CUDA_ERROR_INVALID_VALUE;
	}
	CHECK_INIT();
	/* Access is not enforced on the simulator: check it is all mapped. */
	pthread_mutex_lock(&shim_lock);
	while (p < end) {
		if (!nvsim_query_va(p, &q) || (q.user_flags & UF_CUMEMALLOC)) {
			ret = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		p = q.base + q.size;
	}
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
				     void *addr)
{
	struct nvsim_mem_retain r = { .va = (uintptr_t)addr };
	struct nvsim_query q;
	CUresult ret = CUDA_ERROR_INVALID_VALUE;
	int err;

	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	/* Only cuMemMap'ed memory has a generic allocation handle. */
	if (nvsim_query_va(r.va, &q) && !(q.user_flags & UF_CUMEMALLOC)) {
		err = nvsim_ioctl(NVSIM_IOC_MEM_RETAIN, &r);
		ret = err ? errno_to_cu(err) : CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&shim_lock);
	if (ret == CUDA_SUCCESS)
		*handle = r.handle;
	return ret;
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
					CUmemGenericAllocationHandle handle)
{
	struct nvsim_mem_info mi = { .handle = (uint32_t)handle };
	int err;

	if (!prop || !handle || handle > UINT32_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	pthread_mutex_lock(&shim_lock);
	err = nvsim_ioctl(NVSIM_IOC_MEM_INFO, &mi);
	pthread_mutex_unlock(&shim_lock);
	if (err)
		return errno_to_cu(err);
	memset(prop, 0, sizeof(*prop));
	prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop->requestedHandleTypes = (int)(mi.user_flags & UF_HANDLE_TYPES_MASK);
	prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop->location.id = 0;
	prop->allocFlags.gpuDirectRDMACapable =
		!!(mi.user_flags & UF_RDMA_CAPABLE);
	return CUDA_SUCCESS;
}

CUresult cuMemExportToShareableHandle(void *shareable,
				      CUmemGenericAllocationHandle handle,
				      CUmemAllocationHandleType type,
				      unsigned long long flags)
{
	(void)type;
	if (!shareable || !handle || flags)
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	return CUDA_ERROR_NOT_SUPPORTED;
}

/* dma-buf export (nvsim loaded with dmabuf=1) */

CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr,
				       size_t size,
				       CUmemRangeHandleType handleType,
				       unsigned long long flags)
{
	struct nvsim_export_dmabuf e = { .va = dptr, .size = size };
	uint64_t page = host_page();
	int err;

	if (!handle || !dptr || !size ||
	    handleType != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD ||
	    (flags & ~(unsigned long long)CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE))
		return CUDA_ERROR_INVALID_VALUE;
	CHECK_INIT();
	if (!(shim_dmabuf_caps() & NVSIM_CAP_DMABUF))
		return CUDA_ERROR_NOT_SUPPORTED;
	/* Forcing the PCIe mapping type is refused, as on an x86 H200. */
	if (flags & CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (dptr % page || size % page)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	err = nvsim_ioctl(NVSIM_IOC_EXPORT_DMABUF, &e);
	pthread_mutex_unlock(&shim_lock);
	if (err)
		return err == EOPNOTSUPP ? CUDA_ERROR_NOT_SUPPORTED :
					   errno_to_cu(err);
	*(int *)handle = e.fd;
	return CUDA_SUCCESS;
}

/* Errors */

static const struct {
	CUresult code;
	const char *name;
	const char *text;
} shim_errors[] = {
	{ CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
	{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
	{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
	{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
	{ CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
	{ CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library" },
	{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
	{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
	{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
	{ CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current" },
	{ CUDA_ERROR_MAP_FAILED, "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed" },
	{ CUDA_ERROR_ALREADY_MAPPED, "CUDA_ERROR_ALREADY_MAPPED", "resource already mapped" },
	{ CUDA_ERROR_NOT_MAPPED, "CUDA_ERROR_NOT_MAPPED", "resource not mapped" },
	{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
	{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
	{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
	{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
	{ CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed" },
	{ CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted" },
	{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
	{ CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination" },
	{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

static CUresult error_lookup(CUresult error, const char **str, bool name)
{
	size_t i;

	if (!str)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < sizeof(shim_errors) / sizeof(shim_errors[0]); i++) {
		if (shim_errors[i].code == error) {
			*str = name ? shim_errors[i].name : shim_errors[i].text;
			return CUDA_SUCCESS;
		}
	}
	*str = NULL;
	return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char **str)
{
	return error_lookup(error, str, true);
}

CUresult cuGetErrorString(CUresult error, const char **str)
{
	return error_lookup(error, str, false);
}

/*
 * Exported names.  Where cuda.h maps a name to a versioned symbol, the
 * plain name is exported too, as the same function (per-thread-stream
 * "_ptds" variants as well: there are no streams here).
 */
#define SHIM_ALIAS(name, target, ret, args)				\
	ret name args __attribute__((alias(#target)))

SHIM_ALIAS(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2,
	   CUresult, (CUdevice));
SHIM_ALIAS(cuDeviceTotalMem, cuDeviceTotalMem_v2, CUresult,
	   (size_t *, CUdevice));
SHIM_ALIAS(cuCtxCreate, cuCtxCreate_v2, CUresult,
	   (CUcontext *, unsigned int, CUdevice));
SHIM_ALIAS(cuCtxDestroy, cuCtxDestroy_v2, CUresult, (CUcontext));
SHIM_ALIAS(cuCtxPushCurrent, cuCtxPushCurrent_v2, CUresult, (CUcontext));
SHIM_ALIAS(cuCtxPopCurrent, cuCtxPopCurrent_v2, CUresult, (CUcontext *));
SHIM_ALIAS(cuMemAlloc, cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t));
SHIM_ALIAS(cuMemFree, cuMemFree_v2, CUresult, (CUdeviceptr));
SHIM_ALIAS(cuMemAllocHost, cuMemAllocHost_v2, CUresult, (void **, size_t));
SHIM_ALIAS(cuMemGetAddressRange, cuMemGetAddressRange_v2, CUresult,
	   (CUdeviceptr *, size_t *, CUdeviceptr));
SHIM_ALIAS(cuMemsetD8, cuMemsetD8_v2, CUresult,
	   (CUdeviceptr, unsigned char, size_t));
SHIM_ALIAS(cuMemsetD16, cuMemsetD16_v2, CUresult,
	   (CUdeviceptr, unsigned short, size_t));
SHIM_ALIAS(cuMemsetD32, cuMemsetD32_v2, CUresult,
	   (CUdeviceptr, unsigned int, size_t));
SHIM_ALIAS(cuMemcpyHtoD, cuMemcpyHtoD_v2, CUresult,
	   (CUdeviceptr, const void *, size_t));
SHIM_ALIAS(cuMemcpyDtoH, cuMemcpyDtoH_v2, CUresult,
	   (void *, CUdeviceptr, size_t));
SHIM_ALIAS(cuMemcpyDtoD, cuMemcpyDtoD_v2, CUresult,
	   (CUdeviceptr, CUdeviceptr, size_t));
SHIM_ALIAS(cuMemsetD8_v2_ptds, cuMemsetD8_v2, CUresult,
	   (CUdeviceptr, unsigned char, size_t));
SHIM_ALIAS(cuMemsetD16_v2_ptds, cuMemsetD16_v2, CUresult,
	   (CUdeviceptr, unsigned short, size_t));
SHIM_ALIAS(cuMemsetD32_v2_ptds, cuMemsetD32_v2, CUresult,
	   (CUdeviceptr, unsigned int, size_t));
SHIM_ALIAS(cuMemcpy_ptds, cuMemcpy, CUresult,
	   (CUdeviceptr, CUdeviceptr, size_t));
SHIM_ALIAS(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2, CUresult,
	   (CUdeviceptr, const void *, size_t));
SHIM_ALIAS(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2, CUresult,
	   (void *, CUdeviceptr, size_t));
SHIM_ALIAS(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2, CUresult,
	   (CUdeviceptr, CUdeviceptr, size_t));

/* cuGetProcAddress: the shim's functions by base name. */

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
