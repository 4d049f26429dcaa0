// SPDX-License-Identifier: MIT
/*
 * Copy-only pins (copy_only.h): GPU memory the backend cannot map, served
 * by DMA on a private stream of the memory's own context.
 *
 * Where the bytes go is decided when each copy runs, from the address:
 * CUDA tells the owning context in one query (cuPointerGetAttributes, a
 * fraction of a microsecond beside the DMA), so the pin needs no CUDA
 * object of its own and a window that covers several allocations (UCX
 * pins 64 KiB-aligned windows around small buffers) copies into
 * whichever one holds the bytes.
 *
 * One queue per context: a non-blocking stream, so that a copy never
 * waits for the application's work on the legacy default stream (a
 * kernel spinning on a flag the CPU is about to write would otherwise
 * deadlock it), and a pinned bounce buffer, which saves the pageable
 * path's staging (about 1 µs a read on an H200).  Queues live as long as
 * the process; one whose context was destroyed is made again.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "copy_only.h"
#include "cuda_api.h"
#include "internal.h"
#include "log.h"

/* Copies up to this size go through the queue's pinned buffer. */
#define BOUNCE_SIZE	(64UL << 10)

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

struct queue {
	struct queue *next;
	CUcontext key;		/* the memory's context; NULL: dev's primary */
	int dev;
	pthread_mutex_t lock;	/* one copy at a time: stream and bounce */
	CUstream stream;	/* NULL until made, and after its context died */
	void *bounce;
};

static struct queue *queues;
static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;

static _Thread_local char unmappable_why[512];

int gdr_pin_unmappable(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(unmappable_why, sizeof(unmappable_why), fmt, ap);
	va_end(ap);
	return GDR_PIN_UNMAPPABLE;
}

/* GDRMAP_COPY_ONLY=0 turns copy-only pins off (read at each such pin). */
static int enabled(void)
{
	const char *v = getenv("GDRMAP_COPY_ONLY");

	return !(v && !strcmp(v, "0"));
}

enum cpu_view { CPU_UNMAPPED, CPU_RESERVED, CPU_READABLE };

/*
 * How the CPU sees addr: not mapped at all, mapped without access (the
 * address space CUDA reserves for device memory), or readable memory.
 */
static enum cpu_view cpu_view(uint64_t addr)
{
	long page = sysconf(_SC_PAGESIZE);
	int fds[2], readable;

	if (page <= 0)
		page = 4096;
	/* ENOMEM: nothing is mapped there.  (msync, not mincore: QEMU's
	 * user-mode emulation refuses mincore on inaccessible pages.) */
	if (msync((void *)(uintptr_t)(addr & ~(uint64_t)(page - 1)),
		  (size_t)page, MS_ASYNC) && errno == ENOMEM)
		return CPU_UNMAPPED;
	/* write() from an address the CPU cannot read fails with EFAULT.
	 * Without a pipe (no fd left) nothing is known: the copies check. */
	if (pipe2(fds, O_CLOEXEC))
		return CPU_RESERVED;
	readable = write(fds[1], (void *)(uintptr_t)addr, 1) == 1;
	close(fds[0]);
	close(fds[1]);
	return readable ? CPU_READABLE : CPU_RESERVED;
}

/*
 * Is [addr, +size) GPU memory, as far as one can tell at pin time?  0 if
 * so; else an errno, with why filled.
 */
static int check_gpu_memory(uint64_t addr, uint64_t size, char *why,
			    size_t len)
{
	uint64_t ends[2] = { addr, addr + size - 1 };
	struct gdr_cuda_ptr p;
	int i, known = 0;

	for (i = 0; i < 2; i++) {
		gdr_cuda_pointer(ends[i], &p);
		if (p.managed) {
			snprintf(why, len, "0x%llx is managed memory (cuMemAllocManaged), which cannot be pinned for the CPU: allocate with cuMemAlloc or cuMemCreate",
				 (unsigned long long)ends[i]);
			return EINVAL;
		}
		if (p.type == CU_MEMORYTYPE_HOST) {
			snprintf(why, len, "0x%llx is host memory, not GPU memory: the CPU can use it directly, no pin is needed",
				 (unsigned long long)ends[i]);
			return EINVAL;
		}
		known |= p.dev >= 0;
	}
	if (known)
		return 0;
	/*
	 * CUDA knows neither end: a window around a small allocation whose
	 * ends fall between allocations (legal, gdrdrv pins it) looks so,
	 * as does memory that is not the GPU's.  The first lies in address
	 * space CUDA reserved, which the CPU cannot read.
	 */
	switch (cpu_view(addr)) {
	case CPU_RESERVED:
		return 0;
	case CPU_READABLE:
		snprintf(why, len, "0x%llx is host memory, not GPU memory (CUDA does not know it): pin memory from cuMemAlloc or cuMemCreate",
			 (unsigned long long)addr);
		return EINVAL;
	default:
		snprintf(why, len, "0x%llx is not memory CUDA knows (not allocated, or already freed): pin memory from cuMemAlloc or cuMemCreate",
			 (unsigned long long)addr);
		return EINVAL;
	}
}

static int copy_only_unpin(struct gdr *g, struct gdr_region *r)
{
	(void)g, (void)r;
	return 0;
}

static int copy_only_get_info(struct gdr *g, struct gdr_region *r,
			      struct gdr_pin_info *info)
{
	(void)g;
	info->va = r->pin_addr;
	info->mapped_size = r->pin_size;
	info->page_size = GPU_PAGE_SIZE;
	/* No CPU mapping of any type: "mapped" reads 0. */
	info->mapping_type = GDR_MAPPING_TYPE_NONE;
	return 0;
}

static int copy_only_map(struct gdr *g, struct gdr_region *r, size_t len,
			 gdr_mapping_type_t want, void **va,
			 gdr_mapping_type_t *got)
{
	static const char name[] = "gdrmap copy-only: use gdr_copy_*";
	void *p;

	(void)g;
	if (want != GDR_MAPPING_TYPE_NONE) {
		gdr_err("[0x%llx, +%llu) is pinned copy-only (the %s backend cannot map it): it has no CPU mapping of any type; map with GDR_MAP_FLAG_DEFAULT and copy with gdr_copy_to/from_mapping, or load gdrdrv",
			(unsigned long long)r->addr,
			(unsigned long long)r->size, g->ops.name);
		return EOPNOTSUPP;
	}
	/* No access: a load or store through the pointer faults at once,
	 * rather than reading or writing something else. */
	p = mmap(NULL, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		gdr_err("reserving %zu bytes of address space failed: %s", len,
			strerror(errno));
		return ENOMEM;
	}
	/* Shown in /proc/PID/maps and core dumps (Linux 5.17+). */
	prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, len,
	      (unsigned long)name);
	*va = p;
	*got = GDR_MAPPING_TYPE_NONE;
	return 0;
}

static int copy_only_unmap(struct gdr *g, struct gdr_region *r, void *va,
			   size_t len)
{
	(void)g, (void)r;
	return munmap(va, len) ? errno : 0;
}

/* The slots the core calls on a region (open, close, pin and the
 * instance-wide ones stay the backend's). */
static const struct gdr_backend copy_only_ops = {
	.name = "copy-only",
	.unpin = copy_only_unpin,
	.get_callback_flag = gdr_buffer_id_callback_flag,
	.get_info = copy_only_get_info,
	.get_info_v1 = copy_only_get_info,
	.map = copy_only_map,
	.unmap = copy_only_unmap,
};

int gdr_copy_only_pin(struct gdr *g, struct gdr_region *r, const char *caller)
{
	char why[512];
	int err;

	if (!enabled()) {
		gdr_err("%s: %s (GDRMAP_COPY_ONLY=0 refuses to pin it copy-only: unset it to have gdr_copy_* serve it by DMA)",
			caller, unmappable_why);
		return EINVAL;
	}
	err = check_gpu_memory(r->addr, r->size, why, sizeof(why));
	if (err) {
		gdr_err("%s: %s", caller, why);
		return err;
	}
	/* The window the core computed: the backend may have narrowed it. */
	r->pin_addr = r->addr & GPU_PAGE_MASK;
	r->pin_size = ((r->addr + r->size + GPU_PAGE_SIZE - 1) & GPU_PAGE_MASK) -
		      r->pin_addr;
	r->bhandle = 0;
	r->bpriv = NULL;
	gdr_buffer_id_record(r);
	r->ops = &copy_only_ops;
	atomic_fetch_or_explicit(&r->state, REGION_COPY_ONLY,
				 memory_order_release);
	gdr_info("%s: [0x%llx, +%llu) pinned copy-only: %s; gdr_copy_to/from_mapping move its bytes by DMA, a load or store through the mapping faults",
		 caller, (unsigned long long)r->addr,
		 (unsigned long long)r->size, unmappable_why);
	(void)g;
	return 0;
}

/* The queue for memory of context key (NULL: dev's primary). */
static struct queue *queue_of(CUcontext key, int dev)
{
	struct queue *q;

	pthread_mutex_lock(&queues_lock);
	for (q = queues; q; q = q->next)
		if (q->key == key && q->dev == dev)
			break;
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (q) {
			q->key = key;
			q->dev = dev;
			pthread_mutex_init(&q->lock, NULL);
			q->next = queues;
			queues = q;
		}
	}
	pthread_mutex_unlock(&queues_lock);
	return q;
}

/* Make q's stream and bounce buffer in scope s; q->lock held. */
static CUresult queue_start(struct queue *q, const struct gdr_cuda_scope *s)
{
	CUresult res;

	res = s->call->StreamCreate(&q->stream, CU_STREAM_NON_BLOCKING);
	if (res != CUDA_SUCCESS) {
		q->stream = NULL;
		return res;
	}
	/* Without it, copies go straight from and to the caller's memory. */
	if (s->call->MemHostAlloc(&q->bounce, BOUNCE_SIZE, 0) != CUDA_SUCCESS)
		q->bounce = NULL;
	return CUDA_SUCCESS;
}

/* Results that mean the queue's context is gone (and its stream too). */
static int context_gone(CUresult res)
{
	return res == CUDA_ERROR_CONTEXT_IS_DESTROYED ||
	       res == CUDA_ERROR_INVALID_CONTEXT ||
	       res == CUDA_ERROR_INVALID_HANDLE;
}

/* One copy on q; q->lock held. */
static CUresult queue_copy(struct queue *q, uint64_t gpu, void *host,
			   size_t n, int to_gpu)
{
	struct gdr_cuda_scope s;
	int bounce;
	CUresult res;

	res = gdr_cuda_enter_ctx(q->key, q->dev, &s);
	if (res != CUDA_SUCCESS)
		return res;
	if (!q->stream)
		res = queue_start(q, &s);
	bounce = q->bounce && n <= BOUNCE_SIZE;
	if (res == CUDA_SUCCESS && to_gpu) {
		if (bounce)
			memcpy(q->bounce, host, n);
		res = s.call->MemcpyHtoDAsync(gpu, bounce ? q->bounce : host, n,
					      q->stream);
	} else if (res == CUDA_SUCCESS) {
		res = s.call->MemcpyDtoHAsync(bounce ? q->bounce : host, gpu, n,
					      q->stream);
	}
	if (res == CUDA_SUCCESS)
		res = s.call->StreamSynchronize(q->stream);
	if (res == CUDA_SUCCESS && !to_gpu && bounce)
		memcpy(host, q->bounce, n);
	if (context_gone(res)) {
		/* Its context was destroyed, and a new one may have its
		 * handle: the next copy makes a new stream (what is left of
		 * the old one is freed if anything is). */
		if (q->stream)
			s.call->StreamDestroy(q->stream);
		if (q->bounce)
			s.call->MemFreeHost(q->bounce);
		q->stream = NULL;
		q->bounce = NULL;
	}
	gdr_cuda_leave(&s);
	return res;
}

static int dma(uint64_t gpu, void *host, size_t n, int to_gpu,
	       const char *caller)
{
	struct gdr_cuda_ptr p;
	struct queue *q;
	CUresult res;
	char err[160];
	int tries;

	gdr_cuda_pointer(gpu, &p);
	if (p.dev < 0 || p.managed) {
		gdr_err("%s: there is no GPU memory at 0x%llx (freed since it was pinned?): a copy-only pin copies to and from the memory at the address when the copy runs, so keep it allocated while it is pinned",
			caller, (unsigned long long)gpu);
		return EINVAL;
	}
	q = queue_of(p.ctx, p.dev);
	if (!q) {
		gdr_err("%s: out of memory", caller);
		return ENOMEM;
	}
	pthread_mutex_lock(&q->lock);
	for (tries = 0; tries < 2; tries++) {
		res = queue_copy(q, gpu, host, n, to_gpu);
		if (!context_gone(res))
			break;
	}
	pthread_mutex_unlock(&q->lock);
	if (res == CUDA_SUCCESS)
		return 0;
	gdr_err("%s: copying %zu bytes %s 0x%llx on CUDA device %d failed: %s",
		caller, n, to_gpu ? "to" : "from", (unsigned long long)gpu,
		p.dev, gdr_cuda_error(gdr_cuda_get(NULL, 0), res, err,
				      sizeof(err)));
	return res == CUDA_ERROR_INVALID_VALUE ? EINVAL : EIO;
}

int gdr_copy_only_to_mapping(struct gdr_region *r, uintptr_t base,
			     void *map_ptr, const void *host, size_t n)
{
	return dma(r->pin_addr + ((uintptr_t)map_ptr - base), (void *)host, n,
		   1, "gdr_copy_to_mapping");
}

int gdr_copy_only_from_mapping(struct gdr_region *r, uintptr_t base,
			       void *host, const void *map_ptr, size_t n)
{
	return dma(r->pin_addr + ((uintptr_t)map_ptr - base), host, n, 0,
		   "gdr_copy_from_mapping");
}
