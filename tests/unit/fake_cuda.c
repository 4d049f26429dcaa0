// SPDX-License-Identifier: MIT
/*
 * The fake CUDA driver of the host tests (fake_cuda.h says what it does),
 * compiled once and linked into the unit tests that use it.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_cuda.h"

struct CUctx_st fake_primary[FAKE_DEVS];
int fake_primary_refs[FAKE_DEVS];
int fake_primary_created[FAKE_DEVS];
struct CUctx_st fake_user[FAKE_DEVS][4];
_Thread_local CUcontext fake_cur;
atomic_int fake_wrong_ctx;
int fake_dmabuf_supported[FAKE_DEVS] = { 1, 1, 1 };
int fake_legacy_allocs[FAKE_DEVS];
/* Three GPUs on two PCI domains; the third in slot 2, so that the device
 * number counts too. */
const int fake_pci_domain[FAKE_DEVS] = { 0, 0, 1 };
const int fake_pci_bus[FAKE_DEVS] = { 0x1b, 0x43, 0x0a };
const int fake_pci_slot[FAKE_DEVS] = { 0, 0, 2 };
size_t fake_suballoc_max;
int fake_ctx_broken[FAKE_DEVS];
CUresult fake_set_access_fails = CUDA_SUCCESS;
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;

struct fake_mem fake_mems[FAKE_MAX];

/* An address range: legacy memory, a reservation, or a handle mapped into
 * one (a stretch of the reservation). */
struct fake_va {
	int used;
	CUdeviceptr base;
	size_t size;
	int mem;		/* index into fake_mems; -1: a reservation */
	size_t mem_off;		/* where base sits in the memory */
	int legacy;
	int reservation;
	unsigned long long buffer_id;	/* new per allocation and cuMemMap */
};

static struct fake_va fake_vas[FAKE_MAX];

/* A chunk that small cuMemAlloc allocations are carved from. */
struct fake_chunk {
	int used;
	int mem;
	uint32_t rm_handle;	/* tells its memory from a reuse of the slot */
	CUdeviceptr va;
	size_t next;
	CUcontext ctx;
};

static struct fake_chunk fake_chunks[16];
uint32_t fake_next_rm_handle = 0x5c000001;
CUdeviceptr fake_va_reuse;
/*
 * Device addresses come from one stretch of the process's address space
 * reserved with no access, as CUDA reserves it: the CPU faults on it, and
 * nothing else is ever mapped there.
 */
#define FAKE_VA_SPACE	(4ULL << 30)
static CUdeviceptr fake_next_va, fake_va_end;
static unsigned long long fake_next_buffer_id = 1;

static struct CUctx_st *fake_ctx(void)
{
	return fake_cur && fake_cur->alive ? fake_cur : NULL;
}

/* For a call made for memory of dev: the driver's answer under the
 * current context, counting a call outside dev's contexts. */
static CUresult fake_owner_ctx(int dev)
{
	struct CUctx_st *c = fake_ctx();

	if (c && c->dev == dev)
		return CUDA_SUCCESS;
	atomic_fetch_add(&fake_wrong_ctx, 1);
	return c ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_CONTEXT;
}

/* The mapped range holding p, or NULL; fake_lock held. */
static struct fake_va *fake_va_of(CUdeviceptr p)
{
	int i;

	for (i = 0; i < FAKE_MAX; i++)
		if (fake_vas[i].used && fake_vas[i].mem >= 0 &&
		    p >= fake_vas[i].base &&
		    p < fake_vas[i].base + fake_vas[i].size)
			return &fake_vas[i];
	return NULL;
}

static int fake_new_mem(int dev, size_t size, CUcontext ctx, int types)
{
	size_t rm_size = (size + FAKE_RM_ALIGN - 1) & ~(FAKE_RM_ALIGN - 1);
	char name[32];
	int i;

	for (i = 0; i < FAKE_MAX; i++) {
		if (fake_mems[i].used)
			continue;
		snprintf(name, sizeof(name), "fake-gpu%d", dev);
		fake_mems[i].memfd = memfd_create(name, MFD_CLOEXEC);
		if (fake_mems[i].memfd < 0 ||
		    ftruncate(fake_mems[i].memfd, (off_t)rm_size)) {
			if (fake_mems[i].memfd >= 0)
				close(fake_mems[i].memfd);
			return -1;
		}
		fake_mems[i].used = 1;
		fake_mems[i].dev = dev;
		fake_mems[i].size = size;
		fake_mems[i].refs = 1;
		fake_mems[i].ctx = ctx;
		fake_mems[i].handle_types = types;
		fake_mems[i].rm_handle = fake_next_rm_handle++;
		fake_mems[i].rm_size = rm_size;
		return i;
	}
	return -1;
}

static void fake_put_mem(int i)
{
	if (--fake_mems[i].refs == 0) {
		close(fake_mems[i].memfd);
		fake_mems[i].used = 0;
	}
}

/* A new stretch of device addresses for size bytes, FAKE_GRAN aligned,
 * with a gap after it; 0 if none is left. */
static CUdeviceptr fake_take_va(size_t size)
{
	size_t span = (size + FAKE_GRAN - 1) / FAKE_GRAN * FAKE_GRAN +
		      FAKE_GRAN;
	CUdeviceptr base;
	void *p;

	if (!fake_next_va) {
		p = mmap(NULL, FAKE_VA_SPACE + FAKE_GRAN, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return 0;
		fake_next_va = ((uintptr_t)p + FAKE_GRAN - 1) &
			       ~(CUdeviceptr)(FAKE_GRAN - 1);
		fake_va_end = (uintptr_t)p + FAKE_VA_SPACE;
	}
	/* A test asks for freed addresses again, as CUDA may hand them out;
	 * buffer IDs are still never reused. */
	if (fake_va_reuse) {
		base = fake_va_reuse;
		fake_va_reuse = 0;
		return base;
	}
	if (span > fake_va_end - fake_next_va)
		return 0;
	base = fake_next_va;
	fake_next_va += span;
	return base;
}

/* Record the range [base, +size), memory mem from mem_off on (-1: a
 * reservation); NULL if the table is full. */
static struct fake_va *fake_add_va(CUdeviceptr base, size_t size, int mem,
				   size_t mem_off, int legacy)
{
	int i;

	for (i = 0; i < FAKE_MAX; i++) {
		if (fake_vas[i].used)
			continue;
		fake_vas[i].used = 1;
		fake_vas[i].base = base;
		fake_vas[i].size = size;
		fake_vas[i].mem = mem;
		fake_vas[i].mem_off = mem_off;
		fake_vas[i].legacy = legacy;
		fake_vas[i].reservation = mem < 0;
		fake_vas[i].buffer_id = fake_next_buffer_id++;
		return &fake_vas[i];
	}
	return NULL;
}

static CUdeviceptr fake_new_va(size_t size, int mem, int legacy)
{
	CUdeviceptr base = fake_take_va(size);

	if (!base || !fake_add_va(base, size, mem, 0, legacy))
		return 0;
	return base;
}

/* --- the device table --- */

CUresult fake_DriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}

CUresult fake_DeviceGetCount(int *n)
{
	*n = FAKE_DEVS;
	return CUDA_SUCCESS;
}

CUresult fake_DeviceGetAttribute(int *v, int attr, CUdevice dev)
{
	if (dev < 0 || dev >= FAKE_DEVS)
		return CUDA_ERROR_INVALID_DEVICE;
	switch (attr) {
	case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
		*v = fake_dmabuf_supported[dev];
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
		*v = fake_pci_domain[dev];
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
		*v = fake_pci_bus[dev];
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
		*v = fake_pci_slot[dev];
		break;
	case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
		*v = 1;
		break;
	default:
		*v = 0;
	}
	return CUDA_SUCCESS;
}

void fake_uuid(int dev, unsigned char out[16])
{
	int i;

	for (i = 0; i < 16; i++)
		out[i] = (unsigned char)(0x40 + 16 * dev + i);
}

CUresult fake_DeviceGetUuid(CUuuid *u, CUdevice dev)
{
	if (dev < 0 || dev >= FAKE_DEVS)
		return CUDA_ERROR_INVALID_DEVICE;
	fake_uuid(dev, (unsigned char *)u->bytes);
	return CUDA_SUCCESS;
}

CUresult fake_GetErrorName(CUresult res, const char **s)
{
	*s = res == CUDA_ERROR_INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT" :
	     res == CUDA_ERROR_NOT_FOUND ? "CUDA_ERROR_NOT_FOUND" :
	     res == CUDA_ERROR_INVALID_DEVICE ? "CUDA_ERROR_INVALID_DEVICE" :
	     res == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" :
	     res == CUDA_ERROR_NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED" :
	     "CUDA_ERROR_FAKE";
	return CUDA_SUCCESS;
}

CUresult fake_GetErrorString(CUresult res, const char **s)
{
	(void)res;
	*s = "fake CUDA";
	return CUDA_SUCCESS;
}

/* --- contexts --- */

CUresult fake_Init(unsigned int flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

CUresult fake_DeviceGet(CUdevice *d, int ordinal)
{
	if (ordinal < 0 || ordinal >= FAKE_DEVS)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = ordinal;
	return CUDA_SUCCESS;
}

CUresult fake_DevicePrimaryCtxRetain(CUcontext *c, CUdevice dev)
{
	if (dev < 0 || dev >= FAKE_DEVS)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&fake_lock);
	if (!fake_primary_refs[dev]++) {
		fake_primary[dev] = (struct CUctx_st){ dev, 1, 1 };
		fake_primary_created[dev]++;
	}
	pthread_mutex_unlock(&fake_lock);
	*c = &fake_primary[dev];
	return CUDA_SUCCESS;
}

/* Not in the library's table: the application's release. */
void fake_primary_release(int dev)
{
	pthread_mutex_lock(&fake_lock);
	if (fake_primary_refs[dev] && !--fake_primary_refs[dev])
		fake_primary[dev].alive = 0;
	pthread_mutex_unlock(&fake_lock);
}

CUresult fake_CtxGetCurrent(CUcontext *c)
{
	*c = fake_cur;
	return CUDA_SUCCESS;
}

CUresult fake_CtxSetCurrent(CUcontext c)
{
	if (c && !c->alive)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (c && fake_ctx_broken[c->dev])
		return CUDA_ERROR_NOT_PERMITTED;
	fake_cur = c;
	return CUDA_SUCCESS;
}

CUresult fake_CtxGetDevice(CUdevice *d)
{
	struct CUctx_st *c = fake_ctx();

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = c->dev;
	return CUDA_SUCCESS;
}

/* A context of the test's own on dev (cuCtxCreate), made current. */
CUcontext fake_ctx_create(int dev, int which)
{
	fake_user[dev][which] = (struct CUctx_st){ dev, 1, 0 };
	fake_cur = &fake_user[dev][which];
	return fake_cur;
}

/* --- memory --- */

/* One attribute of the range va (NULL: unknown address, the attribute's
 * empty value); fake_lock held.  0, or -1 for an attribute not faked. */
static int fake_attr(const struct fake_va *va, CUpointer_attribute a,
		     void *data)
{
	const struct fake_mem *m = va ? &fake_mems[va->mem] : NULL;

	switch (a) {
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = m ? m->dev : -2;
		return 0;
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = m && va->legacy ? m->ctx : NULL;
		return 0;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = m ? CU_MEMORYTYPE_DEVICE : 0;
		return 0;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(unsigned int *)data = 0;
		return 0;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = m ? va->buffer_id : 0;
		return 0;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = va ? va->base : 0;
		return 0;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = va ? va->size : 0;
		return 0;
	default:
		return -1;
	}
}

CUresult fake_PointerGetAttribute(void *data, CUpointer_attribute a,
				  CUdeviceptr p)
{
	struct fake_va *va;
	CUresult res = CUDA_SUCCESS;

	pthread_mutex_lock(&fake_lock);
	va = fake_va_of(p);
	if (!va) {
		pthread_mutex_unlock(&fake_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* The owner lookup is the one query made outside a scope. */
	if (a != CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL &&
	    !(fake_ctx() && fake_ctx()->dev == fake_mems[va->mem].dev))
		atomic_fetch_add(&fake_wrong_ctx, 1);
	if (fake_attr(va, a, data))
		res = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&fake_lock);
	return res;
}

#define FAKE_HOSTS 8
static struct {
	uintptr_t start;
	size_t size;
} fake_hosts[FAKE_HOSTS];
atomic_int fake_host_queries;
atomic_int fake_device_queries;

int fake_host_register(void *p, size_t n)
{
	int i, ret = -1;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < FAKE_HOSTS && ret; i++)
		if (!fake_hosts[i].size) {
			fake_hosts[i].start = (uintptr_t)p;
			fake_hosts[i].size = n;
			ret = 0;
		}
	pthread_mutex_unlock(&fake_lock);
	return ret;
}

void fake_host_unregister(void *p)
{
	int i;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < FAKE_HOSTS; i++)
		if (fake_hosts[i].size && fake_hosts[i].start == (uintptr_t)p)
			fake_hosts[i].size = 0;
	pthread_mutex_unlock(&fake_lock);
}

/* What CUDA says of pinned host memory at p, if p is some; fake_lock
 * held.  1 if it answered. */
static int fake_host_attr(uintptr_t p, CUpointer_attribute a, void *data)
{
	int i;

	for (i = 0; i < FAKE_HOSTS; i++) {
		uintptr_t s = fake_hosts[i].start;

		if (!fake_hosts[i].size || p < s ||
		    p - s >= fake_hosts[i].size)
			continue;
		switch (a) {
		case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
			*(unsigned int *)data = CU_MEMORYTYPE_HOST;
			return 1;
		case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
			*(CUdeviceptr *)data = s;
			return 1;
		case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
			*(size_t *)data = fake_hosts[i].size;
			return 1;
		default:
			return 0;
		}
	}
	return 0;
}

/* Any address, any context: what is not known gets the empty value. */
CUresult fake_PointerGetAttributes(unsigned int n,
				   CUpointer_attribute *attrs,
				   void **data, CUdeviceptr p)
{
	CUresult res = CUDA_SUCCESS;
	struct fake_va *va;
	unsigned int i;

	pthread_mutex_lock(&fake_lock);
	va = fake_va_of(p);
	atomic_fetch_add(va ? &fake_device_queries : &fake_host_queries, 1);
	for (i = 0; i < n && res == CUDA_SUCCESS; i++)
		if ((va || !fake_host_attr(p, attrs[i], data[i])) &&
		    fake_attr(va, attrs[i], data[i]))
			res = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&fake_lock);
	return res;
}

/* The range of p for a call that needs the owner's context. */
static CUresult fake_range_call(CUdeviceptr p, struct fake_va **out)
{
	struct fake_va *va = fake_va_of(p);

	if (!va)
		return CUDA_ERROR_NOT_FOUND;
	*out = va;
	return fake_owner_ctx(fake_mems[va->mem].dev);
}

CUresult fake_MemGetAddressRange(CUdeviceptr *base, size_t *size,
				 CUdeviceptr p)
{
	struct fake_va *va;
	CUresult res;

	pthread_mutex_lock(&fake_lock);
	res = fake_range_call(p, &va);
	if (res == CUDA_SUCCESS) {
		*base = va->base;
		*size = va->size;
	}
	pthread_mutex_unlock(&fake_lock);
	return res;
}

CUresult fake_MemGetHandleForAddressRange(void *handle,
					  CUdeviceptr p, size_t size,
					  CUmemRangeHandleType type,
					  unsigned long long flags)
{
	struct fake_va *va;
	CUresult res;

	(void)type, (void)flags;
	pthread_mutex_lock(&fake_lock);
	res = fake_range_call(p, &va);
	/* An fd's offset 0 is the start of the allocation here: not of a
	 * suballocation, nor of a handle mapped from an offset. */
	if (res == CUDA_SUCCESS &&
	    (p != va->base || size > va->size || va->mem_off))
		res = CUDA_ERROR_NOT_SUPPORTED;
	if (res == CUDA_SUCCESS)
		*(int *)handle = fcntl(fake_mems[va->mem].memfd,
				       F_DUPFD_CLOEXEC, 0);
	pthread_mutex_unlock(&fake_lock);
	return res;
}

CUresult fake_MemRetainAllocationHandle(CUmemGenericAllocationHandle *h,
					void *addr)
{
	struct fake_va *va;
	CUresult res = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&fake_lock);
	va = fake_va_of((CUdeviceptr)(uintptr_t)addr);
	if (va && !va->legacy) {
		fake_owner_ctx(fake_mems[va->mem].dev);
		fake_mems[va->mem].refs++;
		*h = (CUmemGenericAllocationHandle)va->mem + 1;
		res = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&fake_lock);
	return res;
}

static struct fake_mem *fake_handle(CUmemGenericAllocationHandle h)
{
	if (h < 1 || h > FAKE_MAX || !fake_mems[h - 1].used)
		return NULL;
	return &fake_mems[h - 1];
}

CUresult fake_MemGetAllocationPropertiesFromHandle(
	CUmemAllocationProp *prop, CUmemGenericAllocationHandle h)
{
	struct fake_mem *m;

	pthread_mutex_lock(&fake_lock);
	m = fake_handle(h);
	if (m) {
		fake_owner_ctx(m->dev);
		memset(prop, 0, sizeof(*prop));
		prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop->requestedHandleTypes = m->handle_types;
		prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop->location.id = m->dev;
	}
	pthread_mutex_unlock(&fake_lock);
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_MemExportToShareableHandle(void *out,
					 CUmemGenericAllocationHandle h,
					 CUmemAllocationHandleType type,
					 unsigned long long flags)
{
	struct fake_mem *m;
	CUresult res = CUDA_ERROR_INVALID_VALUE;

	(void)flags;
	pthread_mutex_lock(&fake_lock);
	m = fake_handle(h);
	if (m && (m->handle_types & type)) {
		fake_owner_ctx(m->dev);
		*(int *)out = fcntl(m->memfd, F_DUPFD_CLOEXEC, 0);
		res = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&fake_lock);
	return res;
}

/* Carve size bytes from a chunk of context c (fake_suballoc_max);
 * fake_lock held.  0 if there is no room. */
static CUdeviceptr fake_suballoc(struct CUctx_st *c, size_t size)
{
	struct fake_chunk *ch, *found = NULL;
	size_t off;
	int i;

	for (i = 0; i < (int)(sizeof(fake_chunks) / sizeof(fake_chunks[0]));
	     i++) {
		ch = &fake_chunks[i];
		/* A chunk whose allocations were all freed is gone. */
		if (ch->used && (!fake_mems[ch->mem].used ||
				 fake_mems[ch->mem].rm_handle != ch->rm_handle))
			ch->used = 0;
		off = (ch->next + FAKE_SUBALLOC_ALIGN - 1) &
		      ~(size_t)(FAKE_SUBALLOC_ALIGN - 1);
		if (!found && ch->used && ch->ctx == c &&
		    off + size <= FAKE_GRAN)
			found = ch;
	}
	if (found) {
		ch = found;
		fake_mems[ch->mem].refs++;
	} else {
		for (i = 0, ch = NULL; i < (int)(sizeof(fake_chunks) /
						 sizeof(fake_chunks[0])); i++)
			if (!fake_chunks[i].used) {
				ch = &fake_chunks[i];
				break;
			}
		if (!ch)
			return 0;
		ch->mem = fake_new_mem(c->dev, FAKE_GRAN, c, 0);
		if (ch->mem < 0)
			return 0;
		ch->va = fake_take_va(FAKE_GRAN);
		if (!ch->va) {
			fake_put_mem(ch->mem);
			return 0;
		}
		ch->used = 1;
		ch->rm_handle = fake_mems[ch->mem].rm_handle;
		ch->next = 0;
		ch->ctx = c;
	}
	off = (ch->next + FAKE_SUBALLOC_ALIGN - 1) &
	      ~(size_t)(FAKE_SUBALLOC_ALIGN - 1);
	if (!fake_add_va(ch->va + off, size, ch->mem, off, 1)) {
		fake_put_mem(ch->mem);
		return 0;
	}
	ch->next = off + size;
	return ch->va + off;
}

CUresult fake_MemAlloc(CUdeviceptr *p, size_t size)
{
	struct CUctx_st *c = fake_ctx();
	int m;

	if (!c)
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&fake_lock);
	if (size && size <= fake_suballoc_max) {
		*p = fake_suballoc(c, size);
		if (*p)
			fake_legacy_allocs[c->dev]++;
		pthread_mutex_unlock(&fake_lock);
		return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	}
	m = fake_new_mem(c->dev, size, c, 0);
	*p = m < 0 ? 0 : fake_new_va(size, m, 1);
	if (*p)
		fake_legacy_allocs[c->dev]++;
	pthread_mutex_unlock(&fake_lock);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static void fake_streams_drain(void);

CUresult fake_MemFree(CUdeviceptr p)
{
	struct fake_va *va;
	CUresult res;

	pthread_mutex_lock(&fake_lock);
	fake_streams_drain();
	res = fake_range_call(p, &va);
	if (res == CUDA_SUCCESS && (!va->legacy || va->base != p))
		res = CUDA_ERROR_INVALID_VALUE;
	if (res == CUDA_SUCCESS) {
		fake_put_mem(va->mem);
		va->used = 0;
	}
	pthread_mutex_unlock(&fake_lock);
	return res;
}

CUresult fake_MemCreate(CUmemGenericAllocationHandle *h, size_t size,
			const CUmemAllocationProp *prop,
			unsigned long long flags)
{
	int m;

	(void)flags;
	if (prop->location.id < 0 || prop->location.id >= FAKE_DEVS)
		return CUDA_ERROR_INVALID_DEVICE;
	pthread_mutex_lock(&fake_lock);
	fake_owner_ctx(prop->location.id);
	m = fake_new_mem(prop->location.id, size, NULL,
			 prop->requestedHandleTypes);
	pthread_mutex_unlock(&fake_lock);
	if (m < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*h = (CUmemGenericAllocationHandle)m + 1;
	return CUDA_SUCCESS;
}

CUresult fake_MemRelease(CUmemGenericAllocationHandle h)
{
	struct fake_mem *m;

	pthread_mutex_lock(&fake_lock);
	fake_streams_drain();
	m = fake_handle(h);
	if (m) {
		fake_owner_ctx(m->dev);
		fake_put_mem((int)h - 1);
	}
	pthread_mutex_unlock(&fake_lock);
	return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_MemAddressReserve(CUdeviceptr *p, size_t size,
				size_t align, CUdeviceptr addr,
				unsigned long long flags)
{
	(void)align, (void)addr, (void)flags;
	if (!fake_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&fake_lock);
	*p = fake_new_va(size, -1, 0);
	pthread_mutex_unlock(&fake_lock);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* The reservation holding [p, +size) (starting at p, if size is 0);
 * fake_lock held. */
static struct fake_va *fake_reservation(CUdeviceptr p, size_t size)
{
	int i;

	for (i = 0; i < FAKE_MAX; i++) {
		struct fake_va *va = &fake_vas[i];

		if (!va->used || !va->reservation)
			continue;
		if (size ? p >= va->base && size <= va->size &&
			   p - va->base <= va->size - size : va->base == p)
			return va;
	}
	return NULL;
}

/* Whether a handle is mapped anywhere in [p, +size); fake_lock held. */
static int fake_mapped_in(CUdeviceptr p, size_t size)
{
	int i;

	for (i = 0; i < FAKE_MAX; i++)
		if (fake_vas[i].used && !fake_vas[i].legacy &&
		    fake_vas[i].mem >= 0 && fake_vas[i].base < p + size &&
		    p < fake_vas[i].base + fake_vas[i].size)
			return 1;
	return 0;
}

CUresult fake_MemAddressFree(CUdeviceptr p, size_t size)
{
	struct fake_va *va;

	(void)size;
	pthread_mutex_lock(&fake_lock);
	va = fake_reservation(p, 0);
	if (va && !fake_mapped_in(va->base, va->size))
		va->used = 0;
	pthread_mutex_unlock(&fake_lock);
	return va ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Map [off, +size) of handle h at p, anywhere inside a reservation where
 * nothing is mapped yet. */
CUresult fake_MemMap(CUdeviceptr p, size_t size, size_t off,
		     CUmemGenericAllocationHandle h,
		     unsigned long long flags)
{
	struct fake_va *va;
	struct fake_mem *m;
	CUresult res = CUDA_ERROR_INVALID_VALUE;

	(void)flags;
	pthread_mutex_lock(&fake_lock);
	va = fake_reservation(p, size);
	m = fake_handle(h);
	if (va && m && size && off <= m->size && size <= m->size - off &&
	    !fake_mapped_in(p, size)) {
		fake_owner_ctx(m->dev);
		if (fake_add_va(p, size, (int)h - 1, off, 0)) {
			m->refs++;
			res = CUDA_SUCCESS;
		} else {
			res = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	pthread_mutex_unlock(&fake_lock);
	return res;
}

/* Unmap every handle mapped in [p, +size), which must hold them whole. */
CUresult fake_MemUnmap(CUdeviceptr p, size_t size)
{
	CUresult res = CUDA_ERROR_INVALID_VALUE;
	struct fake_va *va;
	int i, pass;

	pthread_mutex_lock(&fake_lock);
	fake_streams_drain();
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < FAKE_MAX; i++) {
			va = &fake_vas[i];
			if (!va->used || va->legacy || va->mem < 0 ||
			    va->base < p || va->base - p >= size)
				continue;
			if (pass == 0 && va->size > size - (va->base - p)) {
				res = CUDA_ERROR_INVALID_VALUE;
				goto out;
			}
			if (pass == 0) {
				res = CUDA_SUCCESS;
				continue;
			}
			fake_owner_ctx(fake_mems[va->mem].dev);
			fake_put_mem(va->mem);
			va->used = 0;
		}
		if (res != CUDA_SUCCESS)
			break;
	}
out:
	pthread_mutex_unlock(&fake_lock);
	return res;
}

CUresult fake_MemSetAccess(CUdeviceptr p, size_t size,
			   const CUmemAccessDesc *desc, size_t n)
{
	struct fake_va *va;

	(void)size, (void)n;
	if (fake_set_access_fails != CUDA_SUCCESS)
		return fake_set_access_fails;
	pthread_mutex_lock(&fake_lock);
	va = fake_va_of(p);
	if (va)
		fake_owner_ctx(desc->location.id);
	pthread_mutex_unlock(&fake_lock);
	return va ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_MemGetAllocationGranularity(size_t *g,
					  const CUmemAllocationProp *prop,
					  CUmemAllocationGranularity_flags flags)
{
	(void)flags;
	pthread_mutex_lock(&fake_lock);
	fake_owner_ctx(prop->location.id);
	pthread_mutex_unlock(&fake_lock);
	*g = FAKE_GRAN;
	return CUDA_SUCCESS;
}

/* --- streams and copies (copy-only pins) --- */

/*
 * The harsher side of the driver's timing: a copy to the GPU on a stream
 * reads the host memory as late as the driver may, when something waits
 * for it (the stream, an event recorded after it, a copy queued after it
 * on the stream, or freeing GPU memory), so a caller that changes or frees
 * its source before that sends the changed bytes or reads freed memory
 * (ASan).  A copy from the GPU lands at once, as early as it may, so a
 * caller that queues one into memory it still reads sees the bytes change
 * under it.  Either way the wait is what the caller must do anyway.  A
 * copy on the legacy stream first runs what the context's blocking
 * streams hold, as the driver orders them.  (The driver reads a pageable
 * source before the call returns; the library must not count on that
 * for pinned memory, so here every source is read late.)
 */
struct fake_pending {
	CUdeviceptr dst;
	const void *src;
	size_t n;
	unsigned long long seq;
};

#define FAKE_PENDING 64
struct CUstream_st {
	int used;
	CUcontext ctx;
	unsigned int flags;
	unsigned long long seq;		/* of the last copy queued */
	int npending;
	struct fake_pending pending[FAKE_PENDING];
	CUresult late;			/* a queued copy that failed */
};

#define FAKE_STREAMS 16
static struct CUstream_st fake_streams[FAKE_STREAMS];

/* Run st's queued copies up to seq; fake_lock held. */
static void fake_run_pending(struct CUstream_st *st, unsigned long long seq)
{
	struct fake_pending *q;
	struct fake_va *va;
	struct fake_mem *m;
	int i, k = 0;

	for (i = 0; i < st->npending; i++) {
		q = &st->pending[i];
		if (q->seq > seq) {
			st->pending[k++] = *q;
			continue;
		}
		va = fake_va_of(q->dst);
		m = va ? &fake_mems[va->mem] : NULL;
		/* Freed since it was queued: freeing waits for the copies
		 * (fake_streams_drain), so only a dead context's remain. */
		if (!m || q->n > va->size - (q->dst - va->base) ||
		    pwrite(m->memfd, q->src, q->n,
			   (off_t)(va->mem_off + (q->dst - va->base))) !=
		    (ssize_t)q->n)
			st->late = CUDA_ERROR_ILLEGAL_ADDRESS;
	}
	st->npending = k;
}

/* Before GPU memory is freed or unmapped: the driver waits for the copies
 * queued to it; fake_lock held. */
static void fake_streams_drain(void)
{
	int i;

	for (i = 0; i < FAKE_STREAMS; i++)
		if (fake_streams[i].used)
			fake_run_pending(&fake_streams[i], ~0ULL);
}

/* Wait for st's copies up to seq: the first failure of one. */
static CUresult fake_wait(struct CUstream_st *st, unsigned long long seq)
{
	CUresult res;

	pthread_mutex_lock(&fake_lock);
	fake_run_pending(st, seq);
	res = st->late;
	st->late = CUDA_SUCCESS;
	pthread_mutex_unlock(&fake_lock);
	return res;
}
atomic_int fake_dma_copies;	/* done on a non-blocking stream */
atomic_int fake_blocking_copies;	/* done on any other stream */
CUresult fake_dma_fail;		/* the next copy's result, if set */

CUresult fake_StreamCreate(CUstream *st, unsigned int flags)
{
	CUresult res = CUDA_ERROR_OUT_OF_MEMORY;
	int i;

	if (!fake_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < FAKE_STREAMS; i++) {
		if (fake_streams[i].used)
			continue;
		memset(&fake_streams[i], 0, sizeof(fake_streams[i]));
		fake_streams[i].used = 1;
		fake_streams[i].ctx = fake_ctx();
		fake_streams[i].flags = flags;
		*st = &fake_streams[i];
		res = CUDA_SUCCESS;
		break;
	}
	pthread_mutex_unlock(&fake_lock);
	return res;
}

/* A stream is used in its own context only, which must be alive; the
 * null stream is the current context's default stream. */
static CUresult fake_stream_check(CUstream st)
{
	if (!st)
		return fake_ctx() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
	if (!st->used)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!st->ctx->alive)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	if (fake_ctx() != st->ctx) {
		atomic_fetch_add(&fake_wrong_ctx, 1);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	return CUDA_SUCCESS;
}

static void fake_forget_stream(struct CUstream_st *st);

/* The copies queued run before the stream goes (the driver finishes
 * them), but nobody hears how they went. */
CUresult fake_StreamDestroy(CUstream st)
{
	CUresult res = st ? fake_stream_check(st) : CUDA_ERROR_INVALID_HANDLE;

	if (res == CUDA_SUCCESS) {
		fake_wait(st, ~0ULL);
		fake_forget_stream(st);
		st->used = 0;
	}
	return res;
}

CUresult fake_StreamSynchronize(CUstream st)
{
	CUresult res = fake_stream_check(st);

	return res == CUDA_SUCCESS && st ? fake_wait(st, ~0ULL) : res;
}

/* Events: its context, used in that context alone (the sim's rule,
 * stream.c), and the copies it waits for: those queued on its stream
 * before it was recorded. */
struct CUevent_st {
	int used;
	CUcontext ctx;
	struct CUstream_st *st;
	unsigned long long seq;
};

#define FAKE_EVENTS 32
static struct CUevent_st fake_events[FAKE_EVENTS];

CUresult fake_EventCreate(CUevent *ev, unsigned int flags)
{
	CUresult res = CUDA_ERROR_OUT_OF_MEMORY;
	int i;

	if (!fake_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	if (flags & ~7u)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < FAKE_EVENTS; i++) {
		if (fake_events[i].used)
			continue;
		fake_events[i] = (struct CUevent_st){ 1, fake_ctx(), NULL, 0 };
		*ev = &fake_events[i];
		res = CUDA_SUCCESS;
		break;
	}
	pthread_mutex_unlock(&fake_lock);
	return res;
}

/* Events recorded on st, which goes, wait for nothing more (its slot may
 * serve another stream next). */
static void fake_forget_stream(struct CUstream_st *st)
{
	int i;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < FAKE_EVENTS; i++)
		if (fake_events[i].st == st)
			fake_events[i].st = NULL;
	pthread_mutex_unlock(&fake_lock);
}

static CUresult fake_event_check(CUevent ev)
{
	if (!ev || !ev->used)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!ev->ctx->alive)
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	if (fake_ctx() != ev->ctx) {
		atomic_fetch_add(&fake_wrong_ctx, 1);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	return CUDA_SUCCESS;
}

CUresult fake_EventDestroy(CUevent ev)
{
	CUresult res = fake_event_check(ev);

	if (res == CUDA_SUCCESS)
		ev->used = 0;
	return res;
}

CUresult fake_EventRecord(CUevent ev, CUstream st)
{
	CUresult res = fake_event_check(ev);

	if (res == CUDA_SUCCESS)
		res = fake_stream_check(st);
	if (res == CUDA_SUCCESS) {
		pthread_mutex_lock(&fake_lock);
		ev->st = st;
		ev->seq = st ? st->seq : 0;
		pthread_mutex_unlock(&fake_lock);
	}
	return res;
}

CUresult fake_EventSynchronize(CUevent ev)
{
	CUresult res = fake_event_check(ev);

	if (res == CUDA_SUCCESS && ev->st)
		res = fake_wait(ev->st, ev->seq);
	return res;
}

/*
 * The harsher side of the driver: legacy memory is copied only in the
 * context that allocated it, and a copy stays inside one allocation.
 */
static CUresult fake_copy(CUdeviceptr p, void *host, size_t n, CUstream st,
			  int to_gpu)
{
	struct fake_va *va;
	struct fake_mem *m;
	CUresult res = fake_stream_check(st);
	CUcontext ctx = st ? st->ctx : fake_ctx();
	ssize_t done;
	int i;

	if (res != CUDA_SUCCESS)
		return res;
	if (fake_dma_fail) {
		res = fake_dma_fail;
		fake_dma_fail = CUDA_SUCCESS;
		return res;
	}
	pthread_mutex_lock(&fake_lock);
	va = fake_va_of(p);
	m = va ? &fake_mems[va->mem] : NULL;
	if (!m || n > va->size - (p - va->base) ||
	    (va->legacy ? m->ctx != ctx : m->dev != ctx->dev)) {
		if (m && m->dev != ctx->dev)
			atomic_fetch_add(&fake_wrong_ctx, 1);
		pthread_mutex_unlock(&fake_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (st && to_gpu && st->npending == FAKE_PENDING)
		fake_run_pending(st, st->pending[0].seq);
	if (st && to_gpu) {
		st->pending[st->npending++] = (struct fake_pending){
			p, host, n, ++st->seq };
		done = (ssize_t)n;
	} else {
		/* In the stream's order: after the copies queued before;
		 * on the legacy stream, after the context's blocking
		 * streams'. */
		for (i = 0; i < FAKE_STREAMS; i++) {
			struct CUstream_st *o = &fake_streams[i];

			if (o == st || (!st && o->used && o->ctx == ctx &&
					!(o->flags & CU_STREAM_NON_BLOCKING)))
				fake_run_pending(o, ~0ULL);
		}
		done = to_gpu ? pwrite(m->memfd, host, n,
				       (off_t)(va->mem_off + (p - va->base))) :
				pread(m->memfd, host, n,
				      (off_t)(va->mem_off + (p - va->base)));
	}
	pthread_mutex_unlock(&fake_lock);
	atomic_fetch_add(st && st->flags & CU_STREAM_NON_BLOCKING ?
			 &fake_dma_copies : &fake_blocking_copies, 1);
	return done == (ssize_t)n ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN;
}

CUresult fake_MemcpyHtoDAsync(CUdeviceptr dst, const void *src,
			      size_t n, CUstream st)
{
	return fake_copy(dst, (void *)src, n, st, 1);
}

CUresult fake_MemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n,
			      CUstream st)
{
	return fake_copy(src, dst, n, st, 0);
}

CUresult fake_MemHostAlloc(void **p, size_t size, unsigned int flags)
{
	(void)flags;
	if (!fake_ctx())
		return CUDA_ERROR_INVALID_CONTEXT;
	*p = malloc(size);
	if (*p && fake_host_register(*p, size)) {
		free(*p);
		*p = NULL;
	}
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult fake_MemFreeHost(void *p)
{
	fake_host_unregister(p);
	free(p);
	return CUDA_SUCCESS;
}

#define FAKE_FN(field, sym) .field = fake_##field,
const struct gdr_cuda_syms fake_syms = {
	.dev = { GDR_CUDA_DEVICE_FUNCS(FAKE_FN) },
	.mem = { GDR_CUDA_MEMORY_FUNCS(FAKE_FN) },
	.ctx = { GDR_CUDA_CONTEXT_FUNCS(FAKE_FN) },
};
#undef FAKE_FN

/* --- for the tests --- */

/* Which device owns p, and its memfd and offset: the GPU's view. */
int fake_locate(CUdeviceptr p, int *fd, off_t *off)
{
	struct fake_va *va;
	int dev = -1;

	pthread_mutex_lock(&fake_lock);
	va = fake_va_of(p);
	if (va) {
		dev = fake_mems[va->mem].dev;
		*fd = fake_mems[va->mem].memfd;
		*off = (off_t)(va->mem_off + (p - va->base));
	}
	pthread_mutex_unlock(&fake_lock);
	return dev;
}

int fake_owner(CUdeviceptr p)
{
	int fd;
	off_t off;

	return fake_locate(p, &fd, &off);
}

/* Read or write n bytes of device memory at p, as the GPU would. */
int fake_gpu_rw(CUdeviceptr p, void *buf, size_t n, int write)
{
	int fd;
	off_t off;

	if (fake_locate(p, &fd, &off) < 0)
		return -1;
	return (write ? pwrite(fd, buf, n, off) : pread(fd, buf, n, off)) ==
	       (ssize_t)n ? 0 : -1;
}

/* Outstanding physical allocations (legacy and VMM). */
int fake_live_mems(void)
{
	int i, n = 0;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < FAKE_MAX; i++)
		n += fake_mems[i].used;
	pthread_mutex_unlock(&fake_lock);
	return n;
}

/* The live chunk whose addresses hold p; fake_lock held. */
static struct fake_chunk *fake_chunk_of(CUdeviceptr p)
{
	size_t i;

	for (i = 0; i < sizeof(fake_chunks) / sizeof(fake_chunks[0]); i++) {
		struct fake_chunk *ch = &fake_chunks[i];

		if (ch->used && fake_mems[ch->mem].used &&
		    fake_mems[ch->mem].rm_handle == ch->rm_handle &&
		    p >= ch->va && p - ch->va < FAKE_GRAN)
			return ch;
	}
	return NULL;
}

/* Whether an allocation of memory mem lies in [p, +len); fake_lock held. */
static int fake_allocated_in(int mem, CUdeviceptr p, size_t len)
{
	int i;

	for (i = 0; i < FAKE_MAX; i++)
		if (fake_vas[i].used && fake_vas[i].mem == mem &&
		    fake_vas[i].base < p + len &&
		    p < fake_vas[i].base + fake_vas[i].size)
			return 1;
	return 0;
}

CUresult fake_cuda_rm_export(CUdeviceptr p, size_t len, int *dev,
			     uint32_t *handle, uint64_t *off)
{
	CUdeviceptr obj_va, lo, hi;
	struct fake_chunk *ch;
	struct fake_va *va;
	CUresult res;
	int mem;

	pthread_mutex_lock(&fake_lock);
	va = fake_va_of(p);
	ch = va ? NULL : fake_chunk_of(p);
	if (!va && !ch) {
		pthread_mutex_unlock(&fake_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	mem = va ? va->mem : ch->mem;
	obj_va = va ? va->base - va->mem_off : ch->va;
	/* Legacy memory: its whole object (a chunk's free space too); a
	 * mapped handle: what is mapped of it there. */
	lo = va && !va->legacy ? va->base : obj_va;
	hi = va && !va->legacy ? va->base + va->size :
	     obj_va + fake_mems[mem].rm_size;
	*dev = fake_mems[mem].dev;
	res = fake_owner_ctx(*dev);
	if (res == CUDA_SUCCESS &&
	    (!len || p < lo || len > hi - p || !fake_allocated_in(mem, p, len)))
		res = CUDA_ERROR_INVALID_VALUE;
	/* A device that cannot export dma-bufs exports nothing. */
	if (res == CUDA_SUCCESS && !fake_dmabuf_supported[*dev])
		res = CUDA_ERROR_NOT_SUPPORTED;
	if (res == CUDA_SUCCESS) {
		*handle = fake_mems[mem].rm_handle;
		*off = p - obj_va;
	}
	pthread_mutex_unlock(&fake_lock);
	return res;
}

int fake_cuda_rm_object(uint32_t handle, int *dev, int *memfd,
			uint64_t *len)
{
	int i, ret = -1;

	pthread_mutex_lock(&fake_lock);
	for (i = 0; i < FAKE_MAX; i++) {
		if (!fake_mems[i].used || fake_mems[i].rm_handle != handle)
			continue;
		*memfd = fcntl(fake_mems[i].memfd, F_DUPFD_CLOEXEC, 0);
		*dev = fake_mems[i].dev;
		*len = fake_mems[i].rm_size;
		ret = *memfd < 0 ? -1 : 0;
		break;
	}
	pthread_mutex_unlock(&fake_lock);
	return ret;
}

const char *const fake_start_names[NR_STARTS] = {
	"no context", "the owner's primary context",
	"a context of the owner's own", "another device's primary context",
	"a context of another device's own",
};

/* Make the start context current for device dev; returns it. */
CUcontext fake_enter_start(enum fake_start st, int dev)
{
	int other = (dev + 1) % FAKE_DEVS;
	CUcontext c = NULL;

	switch (st) {
	case START_OWN_PRIMARY:
	case START_OTHER_PRIMARY:
		fake_DevicePrimaryCtxRetain(&c, st == START_OWN_PRIMARY ?
					    dev : other);
		/* The application's reference, dropped by fake_leave_start. */
		break;
	case START_OWN_USER:
		c = fake_ctx_create(dev, 0);
		break;
	case START_OTHER_USER:
		c = fake_ctx_create(other, 1);
		break;
	default:
		break;
	}
	fake_cur = c;
	return c;
}

void fake_leave_start(enum fake_start st, int dev)
{
	if (st == START_OWN_PRIMARY)
		fake_primary_release(dev);
	else if (st == START_OTHER_PRIMARY)
		fake_primary_release((dev + 1) % FAKE_DEVS);
	fake_cur = NULL;
}
