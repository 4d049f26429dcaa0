// SPDX-License-Identifier: MIT
/*
 * Vulkan, loaded at run time.  Creating an instance costs tenths of a
 * second, so it is done once per process and only by processes that use
 * the vulkan backend; logical devices are created per GPU when a pin on
 * that GPU first needs one.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vulkan_api.h"

#define HOST_MAPPABLE_VRAM \
	(GVK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | \
	 GVK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)

static struct gdr_vk vk = { .nr_seen = -1 };
static const struct gdr_vk *vk_ok;
static char vk_why[512];
static bool vk_tried;
static pthread_once_t vk_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t vk_dev_lock = PTHREAD_MUTEX_INITIALIZER;

static int has_extension(gvk_physical_device phys, const char *name)
{
	struct gvk_extension_properties *ext;
	uint32_t n = 0, i;
	int found = 0;

	if (vk.enumerate_device_extension_properties(phys, NULL, &n, NULL) < 0)
		return 0;
	ext = calloc(n ? n : 1, sizeof(*ext));
	if (!ext)
		return 0;
	if (vk.enumerate_device_extension_properties(phys, NULL, &n, ext) >= 0)
		for (i = 0; i < n && !found; i++)
			found = !strcmp(ext[i].extensionName, name);
	free(ext);
	return found;
}

/* The memory type the CPU can map video memory with; -1 if none. */
static int mappable_vram_type(gvk_physical_device phys)
{
	struct gvk_physical_device_memory_properties mp;
	uint32_t i;
	int best = -1;

	memset(&mp, 0, sizeof(mp));
	vk.get_physical_device_memory_properties(phys, &mp);
	for (i = 0; i < mp.memoryTypeCount && i < GVK_MAX_MEMORY_TYPES; i++) {
		uint32_t f = mp.memoryTypes[i].propertyFlags;

		if ((f & HOST_MAPPABLE_VRAM) != HOST_MAPPABLE_VRAM)
			continue;
		/* Coherent and uncached is what a BAR mapping is. */
		if (best < 0 || (f & GVK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
			best = (int)i;
	}
	return best;
}

static void add_gpu(gvk_physical_device phys)
{
	struct gvk_physical_device_id_properties id = {
		.sType = GVK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES,
	};
	struct gvk_physical_device_properties2 props = {
		.sType = GVK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		.pNext = &id,
	};
	struct diag_vk_dev *seen = &vk.seen[vk.nr_seen++];
	struct gdr_vk_gpu *gpu;
	int type;

	vk.get_physical_device_properties2(phys, &props);
	type = mappable_vram_type(phys);
	memcpy(seen->uuid, id.deviceUUID, sizeof(seen->uuid));
	snprintf(seen->name, sizeof(seen->name), "%.63s",
		 props.properties.deviceName);
	seen->mappable = type >= 0 &&
		has_extension(phys, GVK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME);
	if (!seen->mappable)
		return;
	gpu = &vk.gpus[vk.nr_gpus++];
	gpu->phys = phys;
	gpu->mem_type = (uint32_t)type;
	memcpy(gpu->uuid, id.deviceUUID, sizeof(gpu->uuid));
	snprintf(gpu->name, sizeof(gpu->name), "%s",
		 props.properties.deviceName);
}

#define LOAD(field, name)						\
	do {								\
		*(void **)&vk.field = (void *)vk.get_instance_proc_addr( \
			vk.instance, name);				\
		if (!vk.field) {					\
			snprintf(vk_why, sizeof(vk_why),		\
				 "the Vulkan loader has no %s", name);	\
			return;						\
		}							\
	} while (0)

static void vk_load(void)
{
	struct gvk_application_info app = {
		.sType = GVK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "gdrmap",
		.pEngineName = "gdrmap",
		.apiVersion = GVK_API_VERSION_1_1,
	};
	struct gvk_instance_create_info ici = {
		.sType = GVK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};
	gvk_physical_device phys[sizeof(vk.seen) / sizeof(vk.seen[0])];
	uint32_t n = sizeof(phys) / sizeof(phys[0]), i;
	void *lib;
	gvk_result res;

	vk_tried = true;
	lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(vk_why, sizeof(vk_why),
			 "the Vulkan loader (libvulkan.so.1) is not installed: install it (Debian/Ubuntu: apt-get install libvulkan1)");
		return;
	}
	*(void **)&vk.get_instance_proc_addr =
		dlsym(lib, "vkGetInstanceProcAddr");
	if (!vk.get_instance_proc_addr) {
		snprintf(vk_why, sizeof(vk_why),
			 "libvulkan.so.1 has no vkGetInstanceProcAddr");
		return;
	}
	LOAD(create_instance, "vkCreateInstance");
	res = vk.create_instance(&ici, NULL, &vk.instance);
	if (res != GVK_SUCCESS) {
		snprintf(vk_why, sizeof(vk_why),
			 "vkCreateInstance failed (%d): the Vulkan loader found no Vulkan 1.1 driver",
			 res);
		return;
	}
	LOAD(destroy_instance, "vkDestroyInstance");
	LOAD(enumerate_physical_devices, "vkEnumeratePhysicalDevices");
	LOAD(get_physical_device_properties2,
	     "vkGetPhysicalDeviceProperties2");
	LOAD(get_physical_device_memory_properties,
	     "vkGetPhysicalDeviceMemoryProperties");
	LOAD(get_physical_device_queue_family_properties,
	     "vkGetPhysicalDeviceQueueFamilyProperties");
	LOAD(enumerate_device_extension_properties,
	     "vkEnumerateDeviceExtensionProperties");
	LOAD(create_device, "vkCreateDevice");
	LOAD(destroy_device, "vkDestroyDevice");
	LOAD(allocate_memory, "vkAllocateMemory");
	LOAD(free_memory, "vkFreeMemory");
	LOAD(map_memory, "vkMapMemory");
	LOAD(unmap_memory, "vkUnmapMemory");

	res = vk.enumerate_physical_devices(vk.instance, &n, phys);
	if (res < 0) {
		snprintf(vk_why, sizeof(vk_why),
			 "vkEnumeratePhysicalDevices failed (%d)", res);
		return;
	}
	vk.nr_seen = 0;
	for (i = 0; i < n; i++)
		add_gpu(phys[i]);
	if (!vk.nr_gpus) {
		snprintf(vk_why, sizeof(vk_why), n ?
			 "no Vulkan GPU offers memory that is both device-local and host-visible with VK_KHR_external_memory_fd (needs a GPU whose BAR1 covers its memory, e.g. resizable BAR)" :
			 "Vulkan enumerates no device");
		return;
	}
	/* The instance lives as long as the process: devices and imports
	 * hang off it and may outlive any one gdr_t. */
	vk_ok = &vk;
}

const struct gdr_vk *gdr_vk_get(char *why, size_t why_len)
{
	pthread_once(&vk_once, vk_load);
	if (!vk_ok && why)
		snprintf(why, why_len, "%s", vk_why);
	return vk_ok;
}

int gdr_vk_devices(const struct diag_vk_dev **devs, const char **why)
{
	*devs = vk.seen;
	*why = vk_tried && !vk_ok ? vk_why : NULL;
	return vk.nr_seen;
}

static int create_device(struct gdr_vk_gpu *gpu, char *why, size_t why_len)
{
	static const float priority = 1.0f;
	static const char *const exts[] = {
		GVK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME,
	};
	/* Vulkan wants a queue; the backend never submits work to it. */
	struct gvk_device_queue_create_info qci = {
		.sType = GVK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = 0,
		.queueCount = 1,
		.pQueuePriorities = &priority,
	};
	struct gvk_device_create_info dci = {
		.sType = GVK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
		.enabledExtensionCount = 1,
		.ppEnabledExtensionNames = exts,
	};
	gvk_result res = vk.create_device(gpu->phys, &dci, NULL, &gpu->dev);

	if (res != GVK_SUCCESS) {
		snprintf(why, why_len, "vkCreateDevice on %s failed (%d)",
			 gpu->name, res);
		gpu->dev = NULL;
		return -1;
	}
	return 0;
}

/* Why Vulkan has no mappable GPU with this UUID: the diagnosis's words. */
static void explain_missing(const uint8_t uuid[16], char *why, size_t why_len)
{
	struct diag_report *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(why, why_len, "Vulkan cannot map this GPU");
		return;
	}
	diag_vk_gpu(r, NULL, vk.seen, vk.nr_seen,
		    (const uint8_t (*)[16])uuid, 1);
	snprintf(why, why_len, "%s: %s", r->f[DIAG_VK_GPU].msg,
		 r->f[DIAG_VK_GPU].fix);
	free(r);
}

const struct gdr_vk_gpu *gdr_vk_gpu_by_uuid(const uint8_t uuid[16],
					    char *why, size_t why_len)
{
	struct gdr_vk_gpu *found = NULL;
	unsigned int i;

	if (!gdr_vk_get(why, why_len))
		return NULL;
	pthread_mutex_lock(&vk_dev_lock);
	for (i = 0; i < vk.nr_gpus && !found; i++)
		if (!memcmp(vk.gpus[i].uuid, uuid, GVK_UUID_SIZE))
			found = &vk.gpus[i];
	if (!found)
		explain_missing(uuid, why, why_len);
	else if (!found->dev && create_device(found, why, why_len))
		found = NULL;
	pthread_mutex_unlock(&vk_dev_lock);
	return found;
}
