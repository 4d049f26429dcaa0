// SPDX-License-Identifier: MIT
/*
 * The vulkan backend: CPU mappings of video memory with no kernel module.
 *
 * A CUDA VMM allocation (cuMemCreate) whose handle types include POSIX
 * file descriptors is exported as an fd, imported into Vulkan on the
 * device-local, host-visible memory type of the GPU with the same UUID,
 * and mapped with vkMapMemory: a write-combined mapping of BAR1.
 *
 * An import costs about 11 µs per MiB of the whole allocation, whatever
 * range is pinned, so every pin of one allocation shares one import
 * (reference-counted, freed with its last pin), and one vkMapMemory of it
 * while any of those pins is mapped.  The import holds a reference on the
 * allocation: memory freed by CUDA while pinned stays valid behind the
 * mapping until the last pin of it goes, as with gdrdrv's persistent mode.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "base/log.h"
#include "diag/diag.h"
#include "diag/vulkan_api.h"

/* One imported allocation, shared by all of its pins. */
struct vk_import {
	struct vk_import *next;
	CUmemGenericAllocationHandle handle;	/* retained once */
	int dev;				/* the CUDA device it is on */
	CUdeviceptr base;			/* where it is mapped in CUDA */
	size_t size;
	const struct gdr_vk_gpu *gpu;
	gvk_device_memory mem;
	unsigned int pins;
	unsigned int maps;			/* mapped pins */
	char *cpu;				/* vkMapMemory, while maps */
};

static struct vk_import *imports;
static pthread_mutex_t imports_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct gdr_cuda *cu;
static const struct gdr_vk *vk;

/* DIAG_VK_GPU: does the running Vulkan map one of CUDA's GPUs? */
static void check_vk_gpu(struct diag_report *r)
{
	uint8_t uuids[16][16];
	const struct diag_vk_dev *devs;
	const char *vk_why;
	int i, k = 0, ndev = gdr_vk_devices(&devs, &vk_why);
	CUuuid u;

	/* Device queries take the ordinal, as import_allocation's does. */
	for (i = 0; cu && i < cu->device_count && k < 16; i++)
		if (cu->DeviceGetUuid(&u, i) == CUDA_SUCCESS)
			memcpy(uuids[k++], u.bytes, sizeof(uuids[0]));
	diag_vk_gpu(r, vk_why, devs, ndev, (const uint8_t (*)[16])uuids, k);
}

/* After the first failure, every cause the diagnosis finds, each with
 * its fix: one missing piece must not hide the next. */
static void explain(struct diag_report *r, char *why, size_t why_len)
{
	static const struct diag_env here = { .root = "" };
	size_t used = strlen(why);

	diag_run(&here, r);
	check_vk_gpu(r);
	snprintf(why + used, why_len - used, "; what stops it here:");
	if (!diag_explain(r, why, why_len))
		why[used] = '\0';
}

static int vulkan_open(struct gdr *g, char *why, size_t why_len)
{
	struct diag_report *r = calloc(1, sizeof(*r));

	(void)g;
	if (!r) {
		snprintf(why, why_len, "out of memory");
		return ENOMEM;
	}
	cu = gdr_cuda_get(why, why_len);
	vk = cu ? gdr_vk_get(why, why_len) : NULL;
	if (vk) {
		check_vk_gpu(r);
		if (r->f[DIAG_VK_GPU].state != DIAG_BAD) {
			free(r);
			return 0;
		}
		snprintf(why, why_len, "Vulkan cannot map CUDA's GPU");
	}
	explain(r, why, why_len);
	free(r);
	return ENODEV;
}

static const char *cuerr(CUresult res, char *buf, size_t len)
{
	return gdr_cuda_error(cu, res, buf, len);
}

/* Find the import of a retained allocation handle; imports_lock held. */
static struct vk_import *find_import(CUmemGenericAllocationHandle handle)
{
	struct vk_import *imp;

	for (imp = imports; imp; imp = imp->next)
		if (imp->handle == handle)
			return imp;
	return NULL;
}

static const char *const vmm_advice =
	"load gdrdrv, or allocate with cuMemCreate with the POSIX file descriptor handle type and gpuDirectRDMACapable (gdrmap_mem_alloc does; in PyTorch, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)";

/*
 * Export the allocation behind handle and import it into Vulkan, on the
 * Vulkan device with the UUID of the CUDA device that owns it; inside s,
 * the owner's scope.  On success the import owns the retained handle;
 * on failure *err_out is left alone, or set to gdr_pin_unmappable() for
 * an allocation that cannot be exported.  imports_lock held.
 */
static struct vk_import *import_allocation(const struct gdr_cuda_scope *s,
					   struct gdr_region *r,
					   CUmemGenericAllocationHandle handle,
					   int *err_out)
{
	CUmemAllocationProp prop;
	struct vk_import *imp;
	const struct gdr_vk_gpu *gpu;
	CUuuid uuid;
	CUresult res;
	char why[1024], err[160];
	int fd = -1;
	gvk_result vres;

	memset(&prop, 0, sizeof(prop));
	res = s->call->MemGetAllocationPropertiesFromHandle(&prop, handle);
	if (res != CUDA_SUCCESS) {
		gdr_err("cannot read the properties of the allocation at 0x%llx: %s",
			(unsigned long long)r->addr, cuerr(res, err, sizeof(err)));
		return NULL;
	}
	if (!(prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
		*err_out = gdr_pin_unmappable("the cuMemCreate allocation at 0x%llx has no POSIX file descriptor handle type, so Vulkan cannot import it: for a CPU mapping, %s",
					      (unsigned long long)r->addr,
					      vmm_advice);
		return NULL;
	}
	imp = calloc(1, sizeof(*imp));
	if (!imp)
		return NULL;
	res = s->call->MemGetAddressRange(&imp->base, &imp->size, r->addr);
	if (res != CUDA_SUCCESS) {
		gdr_err("cuMemGetAddressRange(0x%llx) on CUDA device %d failed: %s",
			(unsigned long long)r->addr, s->dev,
			cuerr(res, err, sizeof(err)));
		goto free_imp;
	}
	res = cu->DeviceGetUuid(&uuid, s->dev);
	if (res != CUDA_SUCCESS) {
		gdr_err("cuDeviceGetUuid(%d) failed: %s", s->dev,
			cuerr(res, err, sizeof(err)));
		goto free_imp;
	}
	gpu = gdr_vk_gpu_by_uuid((const uint8_t *)uuid.bytes, why, sizeof(why));
	if (!gpu) {
		gdr_err("CUDA device %d: %s", s->dev, why);
		goto free_imp;
	}
	res = s->call->MemExportToShareableHandle(&fd, handle,
					CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
					0);
	if (res != CUDA_SUCCESS) {
		gdr_err("cuMemExportToShareableHandle failed: %s",
			cuerr(res, err, sizeof(err)));
		goto free_imp;
	}
	{
		struct gvk_import_memory_fd_info import = {
			.sType = GVK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
			.handleType = GVK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
			.fd = fd,
		};
		struct gvk_memory_allocate_info alloc = {
			.sType = GVK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
			.pNext = &import,
			.allocationSize = imp->size,
			.memoryTypeIndex = gpu->mem_type,
		};

		vres = vk->allocate_memory(gpu->dev, &alloc, NULL, &imp->mem);
	}
	if (vres != GVK_SUCCESS) {
		/* A failed import leaves the fd to us. */
		close(fd);
		gdr_err("Vulkan could not import the allocation at 0x%llx (%zu bytes): error %d%s",
			(unsigned long long)imp->base, imp->size, vres,
			vres == GVK_ERROR_OUT_OF_DEVICE_MEMORY ?
			" (BAR1 space exhausted? unpin unused buffers)" : "");
		goto free_imp;
	}
	imp->handle = handle;
	imp->dev = s->dev;
	imp->gpu = gpu;
	imp->next = imports;
	imports = imp;
	return imp;

free_imp:
	free(imp);
	return NULL;
}

/* Give an allocation handle back to CUDA, in its device's context. */
static void release_handle(int dev, CUmemGenericAllocationHandle handle)
{
	struct gdr_cuda_scope s;
	CUresult res;
	char err[160];

	res = gdr_cuda_enter(dev, &s);
	if (res != CUDA_SUCCESS) {
		gdr_warn("the allocation handle stays retained: %s",
			 gdr_cuda_scope_error(&s, res, err, sizeof(err)));
		return;
	}
	s.call->MemRelease(handle);
	gdr_cuda_leave(&s);
}

static void release_import(struct vk_import *imp)
{
	struct vk_import **p;

	for (p = &imports; *p; p = &(*p)->next) {
		if (*p == imp) {
			*p = imp->next;
			break;
		}
	}
	vk->free_memory(imp->gpu->dev, imp->mem, NULL);
	release_handle(imp->dev, imp->handle);
	free(imp);
}

static int vulkan_pin(struct gdr *g, struct gdr_region *r, uint64_t p2p_token,
		      uint32_t va_space)
{
	CUmemGenericAllocationHandle handle;
	struct gdr_cuda_scope s;
	struct vk_import *imp;
	unsigned int managed = 0;
	int err = EINVAL;
	CUresult res;
	char msg[256];

	(void)g, (void)p2p_token, (void)va_space;
	res = gdr_cuda_enter_owner(r->addr, &s);
	if (res != CUDA_SUCCESS && s.dev < 0)
		/* Maybe between allocations, as the ends of a window around
		 * a small buffer are: the copy-only pin tells. */
		return gdr_pin_unmappable("CUDA knows no allocation at 0x%llx",
					  (unsigned long long)r->addr);
	if (res != CUDA_SUCCESS) {
		gdr_err("%s: pin memory from cuMemCreate",
			gdr_cuda_scope_error(&s, res, msg, sizeof(msg)));
		return ENODEV;
	}
	if (gdr_force_pcie_refused(r, s.dev)) {
		err = EOPNOTSUPP;
		goto leave;
	}
	if (s.call->PointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED,
					r->addr) == CUDA_SUCCESS && managed) {
		gdr_err("0x%llx is managed memory, which cannot be mapped for the CPU this way: %s",
			(unsigned long long)r->addr, vmm_advice);
		goto leave;
	}
	res = s.call->MemRetainAllocationHandle(&handle,
						(void *)(uintptr_t)r->addr);
	if (res != CUDA_SUCCESS) {
		err = gdr_pin_unmappable("0x%llx is not memory from cuMemCreate (cuMemAlloc or cudaMalloc memory, which Vulkan cannot import): for a CPU mapping, %s",
					 (unsigned long long)r->addr,
					 vmm_advice);
		goto leave;
	}
	pthread_mutex_lock(&imports_lock);
	imp = find_import(handle);
	if (imp) {
		/* The import already holds a reference. */
		s.call->MemRelease(handle);
	} else {
		imp = import_allocation(&s, r, handle, &err);
		if (!imp) {
			s.call->MemRelease(handle);
			pthread_mutex_unlock(&imports_lock);
			goto leave;
		}
	}
	if (r->pin_addr < imp->base ||
	    r->pin_addr + r->pin_size > imp->base + imp->size) {
		err = gdr_pin_unmappable("[0x%llx, +%llu) runs past its cuMemCreate allocation [0x%llx, +%zu), and one mapping covers one allocation",
					 (unsigned long long)r->addr,
					 (unsigned long long)r->size,
					 (unsigned long long)imp->base,
					 imp->size);
		if (!imp->pins)
			release_import(imp);
	} else {
		imp->pins++;
		r->bpriv = imp;
		gdr_buffer_id_record(r);
		err = 0;
	}
	pthread_mutex_unlock(&imports_lock);
leave:
	gdr_cuda_leave(&s);
	return err;
}

static int vulkan_unpin(struct gdr *g, struct gdr_region *r)
{
	struct vk_import *imp = r->bpriv;

	(void)g;
	pthread_mutex_lock(&imports_lock);
	if (!--imp->pins)
		release_import(imp);
	pthread_mutex_unlock(&imports_lock);
	r->bpriv = NULL;
	return 0;
}

static int vulkan_map(struct gdr *g, struct gdr_region *r, size_t len,
		      gdr_mapping_type_t want, void **va,
		      gdr_mapping_type_t *got)
{
	struct vk_import *imp = r->bpriv;
	gvk_result res = GVK_SUCCESS;
	void *cpu;

	(void)g, (void)len;
	if (want != GDR_MAPPING_TYPE_NONE && want != GDR_MAPPING_TYPE_WC) {
		gdr_err("the vulkan backend maps write-combined only: map with GDR_MAP_FLAG_DEFAULT");
		return EOPNOTSUPP;
	}
	pthread_mutex_lock(&imports_lock);
	if (!imp->maps) {
		res = vk->map_memory(imp->gpu->dev, imp->mem, 0, GVK_WHOLE_SIZE,
				     0, &cpu);
		if (res == GVK_SUCCESS)
			imp->cpu = cpu;
	}
	if (res == GVK_SUCCESS) {
		imp->maps++;
		*va = imp->cpu + (r->pin_addr - imp->base);
		*got = GDR_MAPPING_TYPE_WC;
	}
	pthread_mutex_unlock(&imports_lock);
	if (res != GVK_SUCCESS) {
		gdr_err("vkMapMemory of %zu bytes failed: error %d (BAR1 space exhausted?)",
			imp->size, res);
		return ENOMEM;
	}
	return 0;
}

static int vulkan_unmap(struct gdr *g, struct gdr_region *r, void *va,
			size_t len)
{
	struct vk_import *imp = r->bpriv;

	(void)g, (void)va, (void)len;
	pthread_mutex_lock(&imports_lock);
	if (!--imp->maps) {
		vk->unmap_memory(imp->gpu->dev, imp->mem);
		imp->cpu = NULL;
	}
	pthread_mutex_unlock(&imports_lock);
	return 0;
}

static int vulkan_get_attribute(struct gdr *g, gdr_attr_t attr, int *v)
{
	(void)g;
	/* Pins keep their memory alive (persistent); GDR_PIN_FLAG_FORCE_PCIE
	 * is honoured only where a coherent link exists
	 * (gdr_force_pcie_refused), which the pin tells. */
	*v = attr == GDR_ATTR_USE_PERSISTENT_MAPPING;
	return 0;
}

const struct gdr_backend gdr_backend_vulkan = {
	.name = "vulkan",
	.id = GDRMAP_BACKEND_VULKAN,
	.partial = true,	/* Vulkan imports cuMemCreate memory only */
	.open = vulkan_open,
	.pin = vulkan_pin,
	.unpin = vulkan_unpin,
	.get_callback_flag = gdr_buffer_id_callback_flag,
	.map = vulkan_map,
	.unmap = vulkan_unmap,
	.get_attribute = vulkan_get_attribute,
};
