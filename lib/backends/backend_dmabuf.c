// SPDX-License-Identifier: MIT
/*
 * The dmabuf backend: CUDA exports the pinned range as a dma-buf
 * (cuMemGetHandleForAddressRange) and the CPU mmaps it; no kernel module.
 *
 * Mapping a dma-buf needs driver support that GDRCopy 2.6 expects from
 * CUDA 13.3 drivers (not seen yet: the H200's 580 driver exports the fd
 * but refuses its mmap, ENOTSUPP).  No version number tells reliably, so each device is tried once per process
 * on a small allocation, in its own context: gdr_open tries the device of
 * the calling thread's context (else the first that reports dma-buf
 * support) and moves on to the next backend if it fails; a pin on another
 * device tries that device first.
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

#define PROBE_SIZE (2UL << 20)

static const struct gdr_cuda *cu;
static char load_why[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void)
{
	cu = gdr_cuda_get(load_why, sizeof(load_why));
}

/* Export a dma-buf of [ptr, +size) in s; the fd or -1 (and *res). */
static int export_dmabuf(const struct gdr_cuda_scope *s, CUdeviceptr ptr,
			 size_t size, int force_pcie, CUresult *res)
{
	int fd = -1;

	*res = s->call->MemGetHandleForAddressRange(&fd, ptr, size,
			CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
			force_pcie ? CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE : 0);
	return *res == CUDA_SUCCESS ? fd : -1;
}

/* Export and mmap the probe's memory. */
static int try_memory(struct gdr_cuda_scope *s, CUdeviceptr ptr, char *why,
		      size_t why_len)
{
	int supported = 0, fd, err;
	CUresult res;
	void *va;
	char msg[160];

	cu->DeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
			       s->dev);
	if (!supported) {
		snprintf(why, why_len,
			 "CUDA device %d or its driver does not support dma-buf export",
			 s->dev);
		return ENOTSUP;
	}
	fd = export_dmabuf(s, ptr, PROBE_SIZE, 0, &res);
	if (fd < 0) {
		snprintf(why, why_len,
			 "cuMemGetHandleForAddressRange on device %d failed: %s",
			 s->dev, gdr_cuda_error(cu, res, msg, sizeof(msg)));
		return ENOTSUP;
	}
	va = mmap(NULL, PROBE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (va == MAP_FAILED) {
		int e = errno;

		snprintf(why, why_len,
			 "this driver exports dma-bufs but refuses their mmap (%s%s); GDRCopy 2.6 expects CUDA 13.3 drivers to allow it (none seen yet)",
			 e == ENOTSUPP_KERNEL ? "ENOTSUPP" : strerror(e),
			 e == ENOTSUPP_KERNEL ? ", errno 524" : "");
		err = ENOTSUP;
	} else {
		munmap(va, PROBE_SIZE);
		err = 0;
	}
	close(fd);
	return err;
}

static struct gdr_dev_probe probes =
	GDR_DEV_PROBE_INIT(PROBE_SIZE, try_memory);

/* The device to try at open: the calling thread's, else the first one
 * that says it can export dma-bufs, else 0 (whose try says why not). */
static int device_to_try(void)
{
	int dev, supported;

	if (gdr_cuda_current_device(&dev) == CUDA_SUCCESS)
		return dev;
	for (dev = 0; dev < cu->device_count; dev++) {
		supported = 0;
		cu->DeviceGetAttribute(&supported,
				       CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev);
		if (supported)
			return dev;
	}
	return 0;
}

static int dmabuf_open(struct gdr *g, char *why, size_t why_len)
{
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
	return gdr_dev_probe(&probes, device_to_try(), why, why_len);
}

static int dmabuf_pin(struct gdr *g, struct gdr_region *r, uint64_t p2p_token,
		      uint32_t va_space)
{
	size_t page = g->host_page_size;
	struct gdr_cuda_scope s;
	int fd, err;
	CUresult res;
	char msg[256];

	(void)p2p_token, (void)va_space;
	res = gdr_cuda_enter_owner(r->addr, &s);
	if (res != CUDA_SUCCESS && s.dev < 0)
		/* Maybe between allocations, as the ends of a window around
		 * a small buffer are: the copy-only pin tells. */
		return gdr_pin_unmappable("CUDA knows no allocation at 0x%llx",
					  (unsigned long long)r->addr);
	if (res != CUDA_SUCCESS) {
		gdr_err("%s", gdr_cuda_scope_error(&s, res, msg, sizeof(msg)));
		return ENODEV;
	}
	if (gdr_force_pcie_refused(r, s.dev)) {
		err = EOPNOTSUPP;
		goto leave;
	}
	err = gdr_dev_probe(&probes, s.dev, msg, sizeof(msg));
	if (err) {
		gdr_err("the dmabuf backend cannot map memory of CUDA device %d: %s",
			s.dev, msg);
		goto leave;
	}
	/* A dma-buf must stay inside one allocation: export whole host pages
	 * around the range, not the 64 KiB window. */
	r->pin_addr = r->addr & ~(uint64_t)(page - 1);
	r->pin_size = ((r->addr + r->size + page - 1) & ~(uint64_t)(page - 1)) -
		      r->pin_addr;
	fd = export_dmabuf(&s, r->pin_addr, r->pin_size,
			   r->pin_flags & GDR_PIN_FLAG_FORCE_PCIE, &res);
	if (fd < 0 && (res == CUDA_ERROR_INVALID_VALUE ||
		       res == CUDA_ERROR_NOT_SUPPORTED)) {
		/* Memory CUDA does not export this way, or a range that runs
		 * past its allocation (one dma-buf covers one allocation). */
		err = gdr_pin_unmappable("CUDA does not export [0x%llx, +%llu) as one dma-buf: %s",
					 (unsigned long long)r->pin_addr,
					 (unsigned long long)r->pin_size,
					 gdr_cuda_error(cu, res, msg,
							sizeof(msg)));
		goto leave;
	}
	if (fd < 0) {
		gdr_err("cuMemGetHandleForAddressRange(0x%llx, %llu) on CUDA device %d failed: %s",
			(unsigned long long)r->pin_addr,
			(unsigned long long)r->pin_size, s.dev,
			gdr_cuda_error(cu, res, msg, sizeof(msg)));
		err = EINVAL;
		goto leave;
	}
	r->bhandle = (uint64_t)fd;
	/* The device, for the mapping type. */
	r->bpriv = (void *)(intptr_t)s.dev;
	gdr_buffer_id_record(r);
leave:
	gdr_cuda_leave(&s);
	return err;
}

static int dmabuf_unpin(struct gdr *g, struct gdr_region *r)
{
	(void)g;
	close((int)r->bhandle);
	return 0;
}

/* Coherent platforms map cached unless PCIe was asked for. */
static gdr_mapping_type_t natural_type(struct gdr_region *r)
{
	int coherent = 0;

	cu->DeviceGetAttribute(&coherent,
		CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
		(int)(intptr_t)r->bpriv);
	return coherent && !(r->pin_flags & GDR_PIN_FLAG_FORCE_PCIE) ?
	       GDR_MAPPING_TYPE_CACHING : GDR_MAPPING_TYPE_WC;
}

static int dmabuf_map(struct gdr *g, struct gdr_region *r, size_t len,
		      gdr_mapping_type_t want, void **va,
		      gdr_mapping_type_t *got)
{
	gdr_mapping_type_t type = natural_type(r);
	void *p;

	(void)g;
	if (want != GDR_MAPPING_TYPE_NONE && want != type) {
		gdr_err("the dmabuf backend maps this memory %s only: map with GDR_MAP_FLAG_DEFAULT",
			type == GDR_MAPPING_TYPE_WC ? "write-combined" :
			"cached");
		return EOPNOTSUPP;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 (int)r->bhandle, 0);
	if (p == MAP_FAILED) {
		gdr_err("mmap of the dma-buf failed: %s", strerror(errno));
		return errno;
	}
	*va = p;
	*got = type;
	return 0;
}

static int dmabuf_unmap(struct gdr *g, struct gdr_region *r, void *va,
			size_t len)
{
	(void)g, (void)r;
	return munmap(va, len) ? errno : 0;
}

static int dmabuf_get_attribute(struct gdr *g, gdr_attr_t attr, int *v)
{
	(void)g, (void)attr;
	/* As GDRCopy 2.6 reports in dma-buf mode. */
	*v = 1;
	return 0;
}

const struct gdr_backend gdr_backend_dmabuf = {
	.name = "dmabuf",
	.id = GDRMAP_BACKEND_DMABUF,
	.open = dmabuf_open,
	.pin = dmabuf_pin,
	.unpin = dmabuf_unpin,
	.get_callback_flag = gdr_buffer_id_callback_flag,
	.get_info = gdr_get_info_host_pages,
	.map = dmabuf_map,
	.unmap = dmabuf_unmap,
	.get_attribute = dmabuf_get_attribute,
};
