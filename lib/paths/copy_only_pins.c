// SPDX-License-Identifier: MIT
/*
 * Copy-only pins (copy_only_pins.h): GPU memory the backend cannot map, served
 * by DMA on a private stream of the memory's own context.
 *
 * The copies are gdr_dma's (dma.c): the bytes go to whichever allocation
 * holds the address when the copy runs, so a window that covers several
 * allocations (UCX pins 64 KiB-aligned windows around small buffers)
 * copies into whichever one holds them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "base/log.h"
#include "copy_only_pins.h"
#include "dma.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

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

int gdr_copy_only_to_mapping(struct gdr_region *r, uintptr_t base,
			     void *map_ptr, const void *host, size_t n)
{
	return gdr_dma(r->pin_addr + ((uintptr_t)map_ptr - base), (void *)host,
		       n, 1, -1, NULL, "gdr_copy_to_mapping");
}

int gdr_copy_only_from_mapping(struct gdr_region *r, uintptr_t base,
			       void *host, const void *map_ptr, size_t n)
{
	return gdr_dma(r->pin_addr + ((uintptr_t)map_ptr - base), host, n, 0,
		       -1, NULL, "gdr_copy_from_mapping");
}
