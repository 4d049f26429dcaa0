// SPDX-License-Identifier: MIT
/*
 * The dmabuf backend: CUDA exports the pinned range as a dma-buf
 * (cuMemGetHandleForAddressRange) and the CPU mmaps it; no kernel module.
 *
 * Mapping a dma-buf needs driver support that arrived with CUDA 13.3
 * drivers; older ones export the fd but refuse its mmap (ENOTSUPP).  No
 * version number tells reliably, so gdr_open tries it once per process on
 * a small allocation and moves on to the next backend if it fails.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_api.h"
#include "internal.h"
#include "log.h"

#define ENOTSUPP_KERNEL 524
#define PROBE_SIZE (2UL << 20)

static const struct gdr_cuda *cu;
static int probe_err;
static char probe_why[256];
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

/* Export a dma-buf of [ptr, +size); the fd or -1 (and *res). */
static int export_dmabuf(CUdeviceptr ptr, size_t size, int force_pcie,
			 CUresult *res)
{
	int fd = -1;

	*res = cu->MemGetHandleForAddressRange(&fd, ptr, size,
			CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
			force_pcie ? CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE : 0);
	return *res == CUDA_SUCCESS ? fd : -1;
}

static void probe(void)
{
	struct gdr_cuda_ctx ctx;
	CUdeviceptr ptr = 0;
	int supported = 0, fd;
	CUresult res;
	void *p;
	char err[160];

	cu = gdr_cuda_get(probe_why, sizeof(probe_why));
	if (!cu) {
		probe_err = ENODEV;
		return;
	}
	cu->DeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
			       0);
	if (!supported) {
		snprintf(probe_why, sizeof(probe_why),
			 "the GPU or driver does not support dma-buf export");
		probe_err = ENOTSUP;
		return;
	}
	if (gdr_cuda_ctx_enter(cu, 0, &ctx)) {
		snprintf(probe_why, sizeof(probe_why),
			 "no CUDA context for device 0");
		probe_err = ENODEV;
		return;
	}
	probe_err = ENOMEM;
	res = cu->MemAlloc(&ptr, PROBE_SIZE);
	if (res != CUDA_SUCCESS) {
		snprintf(probe_why, sizeof(probe_why), "cuMemAlloc failed: %s",
			 gdr_cuda_error(cu, res, err, sizeof(err)));
		goto leave;
	}
	fd = export_dmabuf(ptr, PROBE_SIZE, 0, &res);
	if (fd < 0) {
		snprintf(probe_why, sizeof(probe_why),
			 "cuMemGetHandleForAddressRange failed: %s",
			 gdr_cuda_error(cu, res, err, sizeof(err)));
		probe_err = ENOTSUP;
		goto free;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;

		snprintf(probe_why, sizeof(probe_why),
			 "this driver exports dma-bufs but cannot mmap them (%s%s): a CUDA 13.3 or newer driver can",
			 e == ENOTSUPP_KERNEL ? "ENOTSUPP" : strerror(e),
			 e == ENOTSUPP_KERNEL ? ", errno 524" : "");
		probe_err = ENOTSUP;
	} else {
		munmap(p, 4096);
		probe_err = 0;
	}
	close(fd);
free:
	cu->MemFree(ptr);
leave:
	gdr_cuda_ctx_leave(cu, &ctx);
}

static int dmabuf_open(struct gdr *g, char *why, size_t why_len)
{
	(void)g;
	pthread_once(&probe_once, probe);
	if (probe_err)
		snprintf(why, why_len, "%s", probe_why);
	return probe_err;
}

static int dmabuf_pin(struct gdr *g, struct gdr_region *r, uint64_t p2p_token,
		      uint32_t va_space)
{
	size_t page = g->host_page_size;
	struct gdr_cuda_ctx ctx;
	int ordinal = -1, fd;
	CUresult res;
	char err[160];

	(void)p2p_token, (void)va_space;
	res = cu->PointerGetAttribute(&ordinal,
				      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				      r->addr);
	if (res != CUDA_SUCCESS) {
		gdr_err("0x%llx is not GPU memory CUDA knows: %s",
			(unsigned long long)r->addr,
			gdr_cuda_error(cu, res, err, sizeof(err)));
		return EINVAL;
	}
	/* A dma-buf must stay inside one allocation: export whole host pages
	 * around the range, not the 64 KiB window. */
	r->pin_addr = r->addr & ~(uint64_t)(page - 1);
	r->pin_size = ((r->addr + r->size + page - 1) & ~(uint64_t)(page - 1)) -
		      r->pin_addr;
	if (gdr_cuda_ctx_enter(cu, ordinal, &ctx))
		return ENODEV;
	fd = export_dmabuf(r->pin_addr, r->pin_size,
			   r->pin_flags & GDR_PIN_FLAG_FORCE_PCIE, &res);
	gdr_cuda_ctx_leave(cu, &ctx);
	if (fd < 0) {
		gdr_err("cuMemGetHandleForAddressRange(0x%llx, %llu) failed: %s",
			(unsigned long long)r->pin_addr,
			(unsigned long long)r->pin_size,
			gdr_cuda_error(cu, res, err, sizeof(err)));
		return EINVAL;
	}
	r->bhandle = (uint64_t)fd;
	return 0;
}

static int dmabuf_unpin(struct gdr *g, struct gdr_region *r)
{
	(void)g;
	close((int)r->bhandle);
	return 0;
}

static int dmabuf_get_info(struct gdr *g, struct gdr_region *r,
			   struct gdr_pin_info *info)
{
	info->va = r->pin_addr;
	info->mapped_size = r->pin_size;
	info->page_size = (uint32_t)g->host_page_size;
	info->mapping_type = r->map_type;
	return 0;
}

/* Coherent platforms map cached unless PCIe was asked for. */
static gdr_mapping_type_t natural_type(struct gdr_region *r)
{
	int coherent = 0, ordinal = 0;

	cu->PointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				r->addr);
	cu->DeviceGetAttribute(&coherent,
		CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
		ordinal);
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
	.get_info = dmabuf_get_info,
	.map = dmabuf_map,
	.unmap = dmabuf_unmap,
	.get_attribute = dmabuf_get_attribute,
};
