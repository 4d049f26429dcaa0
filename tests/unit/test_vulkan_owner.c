// SPDX-License-Identifier: MIT
/*
 * The vulkan backend on a fake CUDA of several devices and a fake Vulkan
 * that lists the same GPUs in another order: pins of memory of every
 * device from every starting context run their CUDA calls in the owner's
 * context, import into the Vulkan device with the owner's UUID, move the
 * right bytes, and give every allocation handle back on the last unpin.
 *
 * The fake Vulkan replaces lib/vulkan.c: defining gdr_vk_get,
 * gdr_vk_devices and gdr_vk_gpu_by_uuid here keeps the linker from taking
 * them from the library's archive.
 */
#include <sys/stat.h>

#include "owner_pins.h"
#include "vulkan_api.h"

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

int main(void)
{
	char why[512];
	unsigned long vmm[FAKE_DEVS];
	CUdeviceptr legacy;
	gdr_t g;
	int d, st, err = 0, live;

	gdr_cuda_use_syms(&fake_syms);
	for (d = 0; d < FAKE_DEVS; d++)
		CHECK_RET(gdrmap_mem_alloc(d, 4 << 20, &vmm[d]), 0);
	live = fake_live_mems();
	g = gdr_open_backend(&gdr_backend_vulkan, why, sizeof(why), &err);
	CHECK(g != NULL, "vulkan opens: %s", why);
	if (!g)
		return test_done();

	for (d = 0; d < FAKE_DEVS; d++) {
		for (st = 0; st < NR_STARTS; st++) {
			pin_and_copy(g, d, st, vmm[d], 100, 3000);
			pin_and_copy(g, d, st, vmm[d], 65536 + 3, 5000);
		}
	}
	CHECK(imports == 2 * FAKE_DEVS * NR_STARTS && wrong_device == 0,
	      "%d of %d imports went to a Vulkan device with another UUID",
	      wrong_device, imports);
	CHECK(fake_live_mems() == live, "every handle given back (%d left)",
	      fake_live_mems() - live);

	/* Legacy memory is refused, the context kept. */
	fake_ctx_create(1, 2);
	CHECK(fake_MemAlloc(&legacy, 1 << 20) == CUDA_SUCCESS, "legacy memory");
	pin_refused(g, 1, legacy, EINVAL, "not memory from cuMemCreate");
	/* The owner's context cannot be made current: ENODEV, as
	 * gdr_pin_buffer(3) says, naming the device. */
	fake_ctx_broken[0] = 1;
	pin_refused(g, 0, vmm[0], ENODEV,
		    "no context of CUDA device 0 can be made current");
	fake_ctx_broken[0] = 0;
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}
