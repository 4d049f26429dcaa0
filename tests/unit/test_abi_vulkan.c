// SPDX-License-Identifier: MIT
/*
 * The in-tree Vulkan declarations (common/vulkan_defs.h) match the real
 * header's values and layouts.  Skips where <vulkan/vulkan_core.h> is not
 * installed (Debian: libvulkan-dev, which scripts/deps.sh installs).
 */
#include <stddef.h>

#include "check.h"
#include "vulkan_defs.h"

#if __has_include(<vulkan/vulkan_core.h>)
#include <vulkan/vulkan_core.h>

#define SAME_SIZE(ours, theirs)						\
	CHECK(sizeof(struct ours) == sizeof(theirs), #ours " is %zu bytes, " \
	      #theirs " %zu", sizeof(struct ours), sizeof(theirs))
#define SAME_OFF(ours, theirs, f1, f2)					\
	CHECK(offsetof(struct ours, f1) == offsetof(theirs, f2),	\
	      #ours "." #f1 " at %zu, " #theirs "." #f2 " at %zu",	\
	      offsetof(struct ours, f1), offsetof(theirs, f2))
#define SAME_VAL(ours, theirs)						\
	CHECK((long long)(ours) == (long long)(theirs), #ours " = %lld, " \
	      #theirs " = %lld", (long long)(ours), (long long)(theirs))

int main(void)
{
	SAME_VAL(GVK_SUCCESS, VK_SUCCESS);
	SAME_VAL(GVK_ERROR_OUT_OF_HOST_MEMORY, VK_ERROR_OUT_OF_HOST_MEMORY);
	SAME_VAL(GVK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_OUT_OF_DEVICE_MEMORY);
	SAME_VAL(GVK_ERROR_INITIALIZATION_FAILED, VK_ERROR_INITIALIZATION_FAILED);
	SAME_VAL(GVK_ERROR_DEVICE_LOST, VK_ERROR_DEVICE_LOST);
	SAME_VAL(GVK_ERROR_MEMORY_MAP_FAILED, VK_ERROR_MEMORY_MAP_FAILED);
	SAME_VAL(GVK_ERROR_EXTENSION_NOT_PRESENT, VK_ERROR_EXTENSION_NOT_PRESENT);
	SAME_VAL(GVK_ERROR_INCOMPATIBLE_DRIVER, VK_ERROR_INCOMPATIBLE_DRIVER);
	SAME_VAL(GVK_ERROR_TOO_MANY_OBJECTS, VK_ERROR_TOO_MANY_OBJECTS);
	SAME_VAL(GVK_ERROR_INVALID_EXTERNAL_HANDLE,
		 VK_ERROR_INVALID_EXTERNAL_HANDLE);
	SAME_VAL(GVK_STRUCTURE_TYPE_APPLICATION_INFO,
		 VK_STRUCTURE_TYPE_APPLICATION_INFO);
	SAME_VAL(GVK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		 VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
	SAME_VAL(GVK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		 VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
	SAME_VAL(GVK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		 VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
	SAME_VAL(GVK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		 VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
	SAME_VAL(GVK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
		 VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
	SAME_VAL(GVK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES,
		 VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES);
	SAME_VAL(GVK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR,
		 VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR);
	SAME_VAL(GVK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
		 VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
	SAME_VAL(GVK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
		 VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
	SAME_VAL(GVK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
		 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
	SAME_VAL(GVK_MEMORY_PROPERTY_HOST_CACHED_BIT,
		 VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
	SAME_VAL(GVK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT,
		 VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT);
	SAME_VAL(GVK_UUID_SIZE, VK_UUID_SIZE);
	SAME_VAL(GVK_MAX_MEMORY_TYPES, VK_MAX_MEMORY_TYPES);
	SAME_VAL(GVK_MAX_MEMORY_HEAPS, VK_MAX_MEMORY_HEAPS);
	SAME_VAL(GVK_WHOLE_SIZE, VK_WHOLE_SIZE);
	SAME_VAL(GVK_API_VERSION_1_1, VK_API_VERSION_1_1);

	SAME_SIZE(gvk_application_info, VkApplicationInfo);
	SAME_OFF(gvk_application_info, VkApplicationInfo, apiVersion,
		 apiVersion);
	SAME_SIZE(gvk_instance_create_info, VkInstanceCreateInfo);
	SAME_OFF(gvk_instance_create_info, VkInstanceCreateInfo,
		 ppEnabledExtensionNames, ppEnabledExtensionNames);
	SAME_SIZE(gvk_device_queue_create_info, VkDeviceQueueCreateInfo);
	SAME_OFF(gvk_device_queue_create_info, VkDeviceQueueCreateInfo,
		 pQueuePriorities, pQueuePriorities);
	SAME_SIZE(gvk_device_create_info, VkDeviceCreateInfo);
	SAME_OFF(gvk_device_create_info, VkDeviceCreateInfo,
		 ppEnabledExtensionNames, ppEnabledExtensionNames);
	SAME_OFF(gvk_device_create_info, VkDeviceCreateInfo,
		 pEnabledFeatures, pEnabledFeatures);
	SAME_SIZE(gvk_physical_device_properties, VkPhysicalDeviceProperties);
	SAME_OFF(gvk_physical_device_properties, VkPhysicalDeviceProperties,
		 deviceName, deviceName);
	SAME_OFF(gvk_physical_device_properties, VkPhysicalDeviceProperties,
		 limits_and_sparse, limits);
	CHECK(_Alignof(struct gvk_physical_device_properties) ==
	      _Alignof(VkPhysicalDeviceProperties), "properties alignment");
	SAME_SIZE(gvk_physical_device_properties2, VkPhysicalDeviceProperties2);
	SAME_OFF(gvk_physical_device_properties2, VkPhysicalDeviceProperties2,
		 properties, properties);
	SAME_SIZE(gvk_physical_device_id_properties,
		  VkPhysicalDeviceIDProperties);
	SAME_OFF(gvk_physical_device_id_properties,
		 VkPhysicalDeviceIDProperties, deviceUUID, deviceUUID);
	SAME_OFF(gvk_physical_device_id_properties,
		 VkPhysicalDeviceIDProperties, deviceLUIDValid,
		 deviceLUIDValid);
	SAME_SIZE(gvk_physical_device_memory_properties,
		  VkPhysicalDeviceMemoryProperties);
	SAME_OFF(gvk_physical_device_memory_properties,
		 VkPhysicalDeviceMemoryProperties, memoryHeapCount,
		 memoryHeapCount);
	SAME_OFF(gvk_physical_device_memory_properties,
		 VkPhysicalDeviceMemoryProperties, memoryHeaps, memoryHeaps);
	SAME_SIZE(gvk_memory_type, VkMemoryType);
	SAME_SIZE(gvk_memory_heap, VkMemoryHeap);
	SAME_SIZE(gvk_queue_family_properties, VkQueueFamilyProperties);
	SAME_SIZE(gvk_extension_properties, VkExtensionProperties);
	SAME_SIZE(gvk_memory_allocate_info, VkMemoryAllocateInfo);
	SAME_OFF(gvk_memory_allocate_info, VkMemoryAllocateInfo,
		 memoryTypeIndex, memoryTypeIndex);
	SAME_SIZE(gvk_import_memory_fd_info, VkImportMemoryFdInfoKHR);
	SAME_OFF(gvk_import_memory_fd_info, VkImportMemoryFdInfoKHR, fd, fd);
	CHECK(sizeof(gvk_device_memory) == sizeof(VkDeviceMemory),
	      "VkDeviceMemory is 64-bit");
	return test_done();
}
#else
int main(void)
{
	SKIP("<vulkan/vulkan_core.h> is not installed (apt-get install libvulkan-dev)");
	return test_done();
}
#endif
