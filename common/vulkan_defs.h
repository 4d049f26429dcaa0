/* SPDX-License-Identifier: MIT */
/*
 * The few Vulkan declarations the vulkan backend needs, written in-tree
 * from the Vulkan specification's names, values and layouts (LP64), so
 * that nothing here needs the Vulkan headers or loader to build: the
 * loader (libvulkan.so.1) is opened at run time.  Names carry a gvk_/GVK_
 * prefix so they never clash with the real header; tests/unit/
 * test_abi_vulkan.c checks every layout against <vulkan/vulkan_core.h>.
 */
#ifndef GDRMAP_VULKAN_DEFS_H
#define GDRMAP_VULKAN_DEFS_H

#include <stdint.h>

typedef int32_t gvk_result;
#define GVK_SUCCESS				0
#define GVK_ERROR_OUT_OF_HOST_MEMORY		(-1)
#define GVK_ERROR_OUT_OF_DEVICE_MEMORY		(-2)
#define GVK_ERROR_INITIALIZATION_FAILED		(-3)
#define GVK_ERROR_DEVICE_LOST			(-4)
#define GVK_ERROR_MEMORY_MAP_FAILED		(-5)
#define GVK_ERROR_EXTENSION_NOT_PRESENT		(-7)
#define GVK_ERROR_INCOMPATIBLE_DRIVER		(-9)
#define GVK_ERROR_TOO_MANY_OBJECTS		(-10)
#define GVK_ERROR_INVALID_EXTERNAL_HANDLE	(-1000072003)

#define GVK_STRUCTURE_TYPE_APPLICATION_INFO		0
#define GVK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO		1
#define GVK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO	2
#define GVK_STRUCTURE_TYPE_DEVICE_CREATE_INFO		3
#define GVK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO		5
#define GVK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2	1000059001
#define GVK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES	1000071004
#define GVK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR	1000074000

#define GVK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT	0x1
#define GVK_MEMORY_PROPERTY_HOST_VISIBLE_BIT	0x2
#define GVK_MEMORY_PROPERTY_HOST_COHERENT_BIT	0x4
#define GVK_MEMORY_PROPERTY_HOST_CACHED_BIT	0x8

#define GVK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT	0x1

#define GVK_UUID_SIZE			16
#define GVK_MAX_MEMORY_TYPES		32
#define GVK_MAX_MEMORY_HEAPS		16
#define GVK_MAX_EXTENSION_NAME_SIZE	256
#define GVK_WHOLE_SIZE			(~0ULL)
#define GVK_MAKE_API_VERSION(variant, major, minor, patch) \
	((((uint32_t)(variant)) << 29) | (((uint32_t)(major)) << 22) | \
	 (((uint32_t)(minor)) << 12) | ((uint32_t)(patch)))
#define GVK_API_VERSION_1_1	GVK_MAKE_API_VERSION(0, 1, 1, 0)

#define GVK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME "VK_KHR_external_memory_fd"

typedef struct gvk_instance_t *gvk_instance;		/* VkInstance */
typedef struct gvk_physical_device_t *gvk_physical_device;
typedef struct gvk_device_t *gvk_device;		/* VkDevice */
typedef uint64_t gvk_device_memory;			/* VkDeviceMemory */

struct gvk_application_info {
	int32_t sType;
	const void *pNext;
	const char *pApplicationName;
	uint32_t applicationVersion;
	const char *pEngineName;
	uint32_t engineVersion;
	uint32_t apiVersion;
};

struct gvk_instance_create_info {
	int32_t sType;
	const void *pNext;
	uint32_t flags;
	const struct gvk_application_info *pApplicationInfo;
	uint32_t enabledLayerCount;
	const char *const *ppEnabledLayerNames;
	uint32_t enabledExtensionCount;
	const char *const *ppEnabledExtensionNames;
};

struct gvk_device_queue_create_info {
	int32_t sType;
	const void *pNext;
	uint32_t flags;
	uint32_t queueFamilyIndex;
	uint32_t queueCount;
	const float *pQueuePriorities;
};

struct gvk_device_create_info {
	int32_t sType;
	const void *pNext;
	uint32_t flags;
	uint32_t queueCreateInfoCount;
	const struct gvk_device_queue_create_info *pQueueCreateInfos;
	uint32_t enabledLayerCount;
	const char *const *ppEnabledLayerNames;
	uint32_t enabledExtensionCount;
	const char *const *ppEnabledExtensionNames;
	const void *pEnabledFeatures;
};

/* VkPhysicalDeviceProperties: only the head is read; the limits and the
 * sparse properties are carried as bytes of the right size. */
struct gvk_physical_device_properties {
	uint32_t apiVersion;
	uint32_t driverVersion;
	uint32_t vendorID;
	uint32_t deviceID;
	int32_t deviceType;
	char deviceName[256];
	uint8_t pipelineCacheUUID[GVK_UUID_SIZE];
	uint64_t limits_and_sparse[66];
};

struct gvk_physical_device_properties2 {
	int32_t sType;
	void *pNext;
	struct gvk_physical_device_properties properties;
};

struct gvk_physical_device_id_properties {
	int32_t sType;
	void *pNext;
	uint8_t deviceUUID[GVK_UUID_SIZE];
	uint8_t driverUUID[GVK_UUID_SIZE];
	uint8_t deviceLUID[8];
	uint32_t deviceNodeMask;
	uint32_t deviceLUIDValid;
};

struct gvk_memory_type {
	uint32_t propertyFlags;
	uint32_t heapIndex;
};

struct gvk_memory_heap {
	uint64_t size;
	uint32_t flags;
};

struct gvk_physical_device_memory_properties {
	uint32_t memoryTypeCount;
	struct gvk_memory_type memoryTypes[GVK_MAX_MEMORY_TYPES];
	uint32_t memoryHeapCount;
	struct gvk_memory_heap memoryHeaps[GVK_MAX_MEMORY_HEAPS];
};

struct gvk_queue_family_properties {
	uint32_t queueFlags;
	uint32_t queueCount;
	uint32_t timestampValidBits;
	uint32_t minImageTransferGranularity[3];
};

struct gvk_extension_properties {
	char extensionName[GVK_MAX_EXTENSION_NAME_SIZE];
	uint32_t specVersion;
};

struct gvk_memory_allocate_info {
	int32_t sType;
	const void *pNext;
	uint64_t allocationSize;
	uint32_t memoryTypeIndex;
};

struct gvk_import_memory_fd_info {
	int32_t sType;
	const void *pNext;
	uint32_t handleType;
	int fd;
};

typedef void (*gvk_void_function)(void);
typedef gvk_void_function (*gvk_get_instance_proc_addr_fn)(gvk_instance,
							   const char *);
typedef gvk_result (*gvk_create_instance_fn)(
	const struct gvk_instance_create_info *, const void *, gvk_instance *);
typedef void (*gvk_destroy_instance_fn)(gvk_instance, const void *);
typedef gvk_result (*gvk_enumerate_physical_devices_fn)(
	gvk_instance, uint32_t *, gvk_physical_device *);
typedef void (*gvk_get_physical_device_properties2_fn)(
	gvk_physical_device, struct gvk_physical_device_properties2 *);
typedef void (*gvk_get_physical_device_memory_properties_fn)(
	gvk_physical_device, struct gvk_physical_device_memory_properties *);
typedef void (*gvk_get_physical_device_queue_family_properties_fn)(
	gvk_physical_device, uint32_t *, struct gvk_queue_family_properties *);
typedef gvk_result (*gvk_enumerate_device_extension_properties_fn)(
	gvk_physical_device, const char *, uint32_t *,
	struct gvk_extension_properties *);
typedef gvk_result (*gvk_create_device_fn)(
	gvk_physical_device, const struct gvk_device_create_info *,
	const void *, gvk_device *);
typedef void (*gvk_destroy_device_fn)(gvk_device, const void *);
typedef gvk_result (*gvk_allocate_memory_fn)(
	gvk_device, const struct gvk_memory_allocate_info *, const void *,
	gvk_device_memory *);
typedef void (*gvk_free_memory_fn)(gvk_device, gvk_device_memory,
				   const void *);
typedef gvk_result (*gvk_map_memory_fn)(gvk_device, gvk_device_memory,
					uint64_t offset, uint64_t size,
					uint32_t flags, void **);
typedef void (*gvk_unmap_memory_fn)(gvk_device, gvk_device_memory);

#endif /* GDRMAP_VULKAN_DEFS_H */
