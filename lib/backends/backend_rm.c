// SPDX-License-Identifier: MIT
/*
 * The rm backend: any CUDA memory mapped for the CPU through nvidia.ko's
 * own resource manager (RM), from user space, with no kernel module but
 * NVIDIA's.
 *
 * A pin learns which RM memory objects lie behind its window (libcuda's
 * dma-buf export names them, rm_capture.c), duplicates each into the
 * library's own RM client (rm_client.c) and keeps the duplicates; a map
 * asks RM for a CPU mapping of each stretch, side by side in one
 * reserved range of the process's address space, so that a window over
 * several objects is one contiguous mapping (cudaMalloc suballocates
 * small buffers from larger objects, and UCX pins 64 KiB windows around
 * them; rm_window.c).  The duplicate holds the memory: freed by CUDA
 * while pinned, it stays valid behind the mapping until the unpin, as
 * with gdrdrv's persistent mode; gdr_get_callback_flag says it was freed
 * (buffer_id.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "base/log.h"
#include "dev_probe.h"
#include "rm_abi.h"
#include "rm_client.h"
#include "rm_os.h"
#include "rm_window.h"

/* Pages of the asked-for range looked at to find the owning device. */
#define OWNER_SCAN_PAGES 64
/* The probe allocation made once per device. */
#define PROBE_SIZE (64UL << 10)

static const struct gdr_cuda *cu;
static size_t host_page;


/* The device owning some byte of [addr, +size), or -1; *what says what
 * else was found there. */
static int owner_of(uint64_t addr, uint64_t size, struct gdr_cuda_ptr *what)
{
	uint64_t pg = addr & ~(uint64_t)(host_page - 1), end = addr + size;
	int n;

	gdr_cuda_pointer(addr, what);
	for (n = 0; what->dev < 0 && !what->managed && what->type == 0 &&
	     n < OWNER_SCAN_PAGES && (pg += host_page) < end; n++)
		gdr_cuda_pointer(pg, what);
	return what->dev;
}

static int gpu_of_device(int dev, struct rm_gpu **gpu, char *why,
			 size_t why_len)
{
	int domain = 0, bus = 0, slot = 0;

	cu->DeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev);
	cu->DeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
	cu->DeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev);
	return gdr_rm_gpu((uint32_t)domain, (uint32_t)bus, (uint32_t)slot, gpu,
			  why, why_len);
}

static int coherent(int dev)
{
	int v = 0;

	cu->DeviceGetAttribute(&v,
		CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
		dev);
	return v;
}

/*
 * The whole chain once on the probe's memory: pin, map, write
 * through the mapping and read by DMA, and the other way round.  A
 * driver that lets each step pass but maps the wrong memory is caught.
 */
static int try_memory(struct gdr_cuda_scope *s, CUdeviceptr ptr, char *why,
		      size_t why_len)
{
	struct rm_gpu *gpu;
	struct rm_pin *p;
	uint64_t win, win_len = PROBE_SIZE, want = 0x5eedf00d0badcafeULL, got;
	volatile uint64_t *m;
	CUresult res;
	void *va;
	char msg[160], pin_why[RM_WHY_LEN];
	int err;

	err = gpu_of_device(s->dev, &gpu, why, why_len);
	if (err)
		return err;
	win = ptr;
	p = rm_window_pin(s, gpu, ptr, PROBE_SIZE, &win, &win_len, &err,
			  pin_why);
	if (!p) {
		snprintf(why, why_len, "%s", pin_why);
		return err == GDR_PIN_UNMAPPABLE ? ENOTSUP : err;
	}
	err = rm_window_map(p, win, host_page, &va, why, why_len);
	if (err)
		goto unpin;
	m = (volatile uint64_t *)((char *)va + (ptr - win));
	res = s->call->MemcpyHtoDAsync(ptr, &want, sizeof(want), NULL);
	if (res == CUDA_SUCCESS)
		res = s->call->StreamSynchronize(NULL);
	got = *m;
	if (res == CUDA_SUCCESS && got == want) {
		*m = ~want;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		(void)*m;	/* a read flushes the write-combined store */
		res = s->call->MemcpyDtoHAsync(&got, ptr, sizeof(got), NULL);
		if (res == CUDA_SUCCESS)
			res = s->call->StreamSynchronize(NULL);
	}
	if (res != CUDA_SUCCESS) {
		snprintf(why, why_len, "a copy to check the mapping failed: %s",
			 gdr_cuda_error(cu, res, msg, sizeof(msg)));
		err = EIO;
	} else if (got != ~want) {
		snprintf(why, why_len, "RM mapped device %d's memory for the CPU, but the mapping does not show what the GPU holds (read 0x%llx): this driver maps some other way; load gdrdrv",
			 s->dev, (unsigned long long)got);
		err = EIO;
	}
	rm_window_unmap(p);
unpin:
	rm_window_free(p);
	return err;
}

static struct gdr_dev_probe probes =
	GDR_DEV_PROBE_INIT(PROBE_SIZE, try_memory);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_why[256];

static void load(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	host_page = pg > 0 ? (size_t)pg : 4096;
	cu = gdr_cuda_get(load_why, sizeof(load_why));
}

static int rm_open(struct gdr *g, char *why, size_t why_len)
{
	int dev, err;

	(void)g;
	pthread_once(&load_once, load);
	if (!cu) {
		snprintf(why, why_len, "%s", load_why);
		return ENODEV;
	}
	if (!cu->device_count) {
		snprintf(why, why_len, "CUDA sees no device");
		return ENODEV;
	}
	err = gdr_rm_client(why, why_len);
	if (err)
		return err;
	err = gdr_rm_os()->export_ready(why, why_len);
	if (err)
		return err;
	/* The calling thread's device, else the first. */
	if (gdr_cuda_current_device(&dev) != CUDA_SUCCESS)
		dev = 0;
	return gdr_dev_probe(&probes, dev, why, why_len);
}

static int rm_pin(struct gdr *g, struct gdr_region *r, uint64_t p2p_token,
		  uint32_t va_space)
{
	struct gdr_cuda_ptr what;
	struct gdr_cuda_scope s;
	struct rm_gpu *gpu;
	struct rm_pin *p;
	uint64_t win = r->pin_addr, win_len = r->pin_size;
	char why[RM_WHY_LEN];
	CUresult res;
	int dev, err;

	(void)g, (void)p2p_token, (void)va_space;
	dev = owner_of(r->addr, r->size, &what);
	if (what.managed) {
		gdr_err("0x%llx is managed memory (cuMemAllocManaged), which cannot be mapped for the CPU this way: pin memory from cuMemAlloc or cuMemCreate",
			(unsigned long long)r->addr);
		return EINVAL;
	}
	if (dev < 0)
		return gdr_pin_unmappable("CUDA knows no device memory in [0x%llx, +%llu)",
					  (unsigned long long)r->addr,
					  (unsigned long long)r->size);
	if (gdr_force_pcie_refused(r, dev))
		return EOPNOTSUPP;
	if (r->pin_flags & GDR_PIN_FLAG_FORCE_PCIE) {
		/* RM chooses the path of a CPU mapping itself: it cannot be
		 * asked for BAR1 where the coherent link serves. */
		gdr_err("GDR_PIN_FLAG_FORCE_PCIE: the rm backend maps as the driver chooses, over the coherent link here: pin without the flag, or load gdrdrv");
		return EOPNOTSUPP;
	}
	err = gdr_dev_probe(&probes, dev, why, sizeof(why));
	if (!err)
		err = gpu_of_device(dev, &gpu, why, sizeof(why));
	if (err) {
		gdr_err("the rm backend cannot map memory of CUDA device %d: %s",
			dev, why);
		return err;
	}
	res = gdr_cuda_enter(dev, &s);
	if (res != CUDA_SUCCESS) {
		gdr_err("%s", gdr_cuda_scope_error(&s, res, why, sizeof(why)));
		return ENODEV;
	}
	p = rm_window_pin(&s, gpu, r->addr, r->size, &win, &win_len, &err, why);
	gdr_cuda_leave(&s);
	if (!p)
		return err;
	r->pin_addr = win;
	r->pin_size = win_len;
	r->bpriv = p;
	r->bhandle = (uint64_t)dev;
	gdr_buffer_id_record(r);
	return 0;
}

static int rm_unpin(struct gdr *g, struct gdr_region *r)
{
	(void)g;
	rm_window_free(r->bpriv);
	r->bpriv = NULL;
	return 0;
}

static int rm_map(struct gdr *g, struct gdr_region *r, size_t len,
		  gdr_mapping_type_t want, void **va, gdr_mapping_type_t *got)
{
	gdr_mapping_type_t type = coherent((int)r->bhandle) ?
				  GDR_MAPPING_TYPE_CACHING :
				  GDR_MAPPING_TYPE_WC;
	char why[RM_WHY_LEN];
	int err;

	(void)g;
	if (want != GDR_MAPPING_TYPE_NONE && want != type) {
		gdr_err("the rm backend maps this memory %s only, as the driver chooses: map with GDR_MAP_FLAG_DEFAULT",
			type == GDR_MAPPING_TYPE_WC ? "write-combined" :
			"cached");
		return EOPNOTSUPP;
	}
	err = rm_window_map(r->bpriv, r->pin_addr, len, va, why, sizeof(why));
	if (err) {
		gdr_err("%s", why);
		return err;
	}
	*got = type;
	return 0;
}

static int rm_unmap(struct gdr *g, struct gdr_region *r, void *va,
		    size_t len)
{
	(void)g, (void)va, (void)len;
	rm_window_unmap(r->bpriv);
	return 0;
}

static int rm_get_attribute(struct gdr *g, gdr_attr_t attr, int *v)
{
	(void)g;
	/* Pins keep their memory alive; GDR_PIN_FLAG_FORCE_PCIE is refused
	 * (rm_pin). */
	*v = attr == GDR_ATTR_USE_PERSISTENT_MAPPING;
	return 0;
}

const struct gdr_backend gdr_backend_rm = {
	.name = "rm",
	.id = GDRMAP_BACKEND_RM,
	.open = rm_open,
	.pin = rm_pin,
	.unpin = rm_unpin,
	.get_callback_flag = gdr_buffer_id_callback_flag,
	.get_info = gdr_get_info_host_pages,
	.map = rm_map,
	.unmap = rm_unmap,
	.get_attribute = rm_get_attribute,
};
