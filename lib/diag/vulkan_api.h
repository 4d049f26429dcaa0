/* SPDX-License-Identifier: MIT */
/*
 * Vulkan, loaded at run time from libvulkan.so.1 (vulkan.c), for the
 * vulkan backend: one instance per process, one logical device per GPU,
 * created when first needed.
 */
#ifndef GDRMAP_VULKAN_API_H
#define GDRMAP_VULKAN_API_H

#include <stddef.h>

#include "diag.h"
#include "vulkan_defs.h"

struct gdr_vk {
	gvk_get_instance_proc_addr_fn get_instance_proc_addr;
	gvk_create_instance_fn create_instance;
	gvk_destroy_instance_fn destroy_instance;
	gvk_enumerate_physical_devices_fn enumerate_physical_devices;
	gvk_get_physical_device_properties2_fn get_physical_device_properties2;
	gvk_get_physical_device_memory_properties_fn
		get_physical_device_memory_properties;
	gvk_get_physical_device_queue_family_properties_fn
		get_physical_device_queue_family_properties;
	gvk_enumerate_device_extension_properties_fn
		enumerate_device_extension_properties;
	gvk_create_device_fn create_device;
	gvk_destroy_device_fn destroy_device;
	gvk_allocate_memory_fn allocate_memory;
	gvk_free_memory_fn free_memory;
	gvk_map_memory_fn map_memory;
	gvk_unmap_memory_fn unmap_memory;
	gvk_instance instance;
	/* Every physical device enumerated, for the diagnosis. */
	int nr_seen;
	struct diag_vk_dev seen[16];
	/* Physical devices that can map video memory for the CPU. */
	unsigned int nr_gpus;
	struct gdr_vk_gpu {
		gvk_physical_device phys;
		uint8_t uuid[GVK_UUID_SIZE];
		uint32_t mem_type;	/* DEVICE_LOCAL | HOST_VISIBLE */
		char name[256];
		gvk_device dev;		/* created on first use */
	} gpus[16];
};

/*
 * The process's Vulkan instance, with the GPUs that offer a memory type
 * both DEVICE_LOCAL and HOST_VISIBLE and can import file descriptors.
 * NULL (and why) if there is none.
 */
const struct gdr_vk *gdr_vk_get(char *why, size_t why_len);

/*
 * Every physical device Vulkan enumerated (after gdr_vk_get), into *devs;
 * -1 if Vulkan did not get that far, and then why (NULL if it was never
 * tried).
 */
int gdr_vk_devices(const struct diag_vk_dev **devs, const char **why);

/* The logical device of the GPU with this UUID, created on first use;
 * NULL (and why) if no usable Vulkan GPU has it. */
const struct gdr_vk_gpu *gdr_vk_gpu_by_uuid(const uint8_t uuid[16],
					    char *why, size_t why_len);

#endif /* GDRMAP_VULKAN_API_H */
