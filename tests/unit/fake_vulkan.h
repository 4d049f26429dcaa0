/* SPDX-License-Identifier: MIT */
/*
 * A fake Vulkan for the vulkan backend's host tests, over fake_cuda.h: it
 * lists the fake CUDA GPUs in another order (vk_order), imports the fds
 * the fake CUDA exports, maps them with mmap, and counts imports and
 * imports that went to a Vulkan device with another UUID.
 *
 * It replaces lib/diag/vulkan.c: defining gdr_vk_get, gdr_vk_devices and
 * gdr_vk_gpu_by_uuid here keeps the linker from taking them from the
 * library's archive, so include it in one file of a test program.
 */
#ifndef GDRMAP_TEST_FAKE_VULKAN_H
#define GDRMAP_TEST_FAKE_VULKAN_H

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag/diag.h"
#include "fake_cuda.h"
#include "diag/vulkan_api.h"

static struct gdr_vk fvk;
static const int vk_order[FAKE_DEVS] = { 2, 0, 1 };	/* CUDA device */
static struct fake_vk_mem {
	int used;
	int fd;
	size_t size;
	void *cpu;
} vk_mems[FAKE_MAX];
static int wrong_device, imports;

/* The CUDA device whose memory fd is, or -1. */
static int device_of_fd(int fd)
{
	struct stat a, b;
	int i;

	if (fstat(fd, &a))
		return -1;
	for (i = 0; i < FAKE_MAX; i++)
		if (fake_mems[i].used && !fstat(fake_mems[i].memfd, &b) &&
		    a.st_ino == b.st_ino && a.st_dev == b.st_dev)
			return fake_mems[i].dev;
	return -1;
}

/* The fake gvk_device of Vulkan GPU i is i + 1 (never NULL). */
static int vk_gpu_index(gvk_device dev)
{
	return (int)(intptr_t)dev - 1;
}

static gvk_result fvk_allocate(gvk_device dev,
			       const struct gvk_memory_allocate_info *info,
			       const void *cb, gvk_device_memory *mem)
{
	const struct gvk_import_memory_fd_info *imp = info->pNext;
	int i;

	(void)cb;
	for (i = 0; i < FAKE_MAX && vk_mems[i].used; i++)
		;
	if (i == FAKE_MAX || !imp ||
	    imp->sType != GVK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR)
		return GVK_ERROR_INVALID_EXTERNAL_HANDLE;
	imports++;
	if (device_of_fd(imp->fd) != vk_order[vk_gpu_index(dev)])
		wrong_device++;
	vk_mems[i].used = 1;
	vk_mems[i].fd = imp->fd;	/* the import owns it now */
	vk_mems[i].size = info->allocationSize;
	*mem = (gvk_device_memory)i + 1;
	return GVK_SUCCESS;
}

static void fvk_free(gvk_device dev, gvk_device_memory mem, const void *cb)
{
	(void)dev, (void)cb;
	close(vk_mems[mem - 1].fd);
	vk_mems[mem - 1].used = 0;
}

static gvk_result fvk_map(gvk_device dev, gvk_device_memory mem,
			  uint64_t off, uint64_t size, uint32_t flags,
			  void **out)
{
	struct fake_vk_mem *m = &vk_mems[mem - 1];

	(void)dev, (void)off, (void)size, (void)flags;
	m->cpu = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd,
		      0);
	if (m->cpu == MAP_FAILED)
		return GVK_ERROR_MEMORY_MAP_FAILED;
	*out = m->cpu;
	return GVK_SUCCESS;
}

static void fvk_unmap(gvk_device dev, gvk_device_memory mem)
{
	(void)dev;
	munmap(vk_mems[mem - 1].cpu, vk_mems[mem - 1].size);
}

const struct gdr_vk *gdr_vk_get(char *why, size_t why_len)
{
	int i;

	(void)why, (void)why_len;
	if (!fvk.nr_gpus) {
		fvk.allocate_memory = fvk_allocate;
		fvk.free_memory = fvk_free;
		fvk.map_memory = fvk_map;
		fvk.unmap_memory = fvk_unmap;
		for (i = 0; i < FAKE_DEVS; i++) {
			fake_uuid(vk_order[i], fvk.gpus[i].uuid);
			fvk.gpus[i].dev = (gvk_device)(intptr_t)(i + 1);
		}
		fvk.nr_gpus = FAKE_DEVS;
	}
	return &fvk;
}

/* What gdr_open checks CUDA's GPUs against: every fake GPU, mappable. */
int gdr_vk_devices(const struct diag_vk_dev **devs, const char **why)
{
	static struct diag_vk_dev seen[FAKE_DEVS];
	int i;

	gdr_vk_get(NULL, 0);
	for (i = 0; i < FAKE_DEVS; i++) {
		memcpy(seen[i].uuid, fvk.gpus[i].uuid, sizeof(seen[i].uuid));
		snprintf(seen[i].name, sizeof(seen[i].name), "fake GPU %d", i);
		seen[i].mappable = true;
	}
	*devs = seen;
	*why = NULL;
	return FAKE_DEVS;
}

const struct gdr_vk_gpu *gdr_vk_gpu_by_uuid(const uint8_t uuid[16],
					    char *why, size_t why_len)
{
	unsigned int i;

	gdr_vk_get(why, why_len);
	for (i = 0; i < fvk.nr_gpus; i++)
		if (!memcmp(fvk.gpus[i].uuid, uuid, GVK_UUID_SIZE))
			return &fvk.gpus[i];
	snprintf(why, why_len, "no such Vulkan GPU");
	return NULL;
}

#endif /* GDRMAP_TEST_FAKE_VULKAN_H */
