// SPDX-License-Identifier: MIT
/*
 * Can NVIDIA's Vulkan import a CUDA dma-buf of cuMemAlloc memory and map
 * it for the CPU (VK_EXT_external_memory_dma_buf)?  If it could, the
 * vulkan backend would map cudaMalloc memory instead of pinning it
 * copy-only.  Prints the device's memory extensions, and if dma-buf
 * import is there, imports, maps, and checks a read and a write against
 * CUDA.
 *
 * Build on a machine with the CUDA toolkit and Vulkan headers:
 *   cc -O1 -o vk_dmabuf_probe vk_dmabuf_probe.c -I/usr/local/cuda/include \
 *       -L/usr/local/cuda/lib64/stubs -lcuda -lvulkan
 */
#include <cuda.h>
#include <vulkan/vulkan.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { printf("%s = %d\n", #x, r_); return 1; } } while (0)
#define VK(x) do { VkResult r_ = (x); if (r_) { printf("%s = %d\n", #x, r_); } else printf("%s ok\n", #x); } while (0)
int main(void)
{
	CUdevice dev; CUcontext ctx; CUdeviceptr p; int fd = -1;
	CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
	CK(cuMemAlloc(&p, 2 << 20));
	CK(cuMemsetD32(p, 0x11223344, (2 << 20) / 4));
	CUresult r = cuMemGetHandleForAddressRange(&fd, p, 2 << 20, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	printf("dma-buf export of cuMemAlloc: %d fd %d\n", r, fd);
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1 };
	VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
	VkInstance inst; VK(vkCreateInstance(&ici, NULL, &inst));
	uint32_t n = 8; VkPhysicalDevice pds[8]; VK(vkEnumeratePhysicalDevices(inst, &n, pds));
	VkPhysicalDevice pd = pds[0];
	uint32_t ne = 0; vkEnumerateDeviceExtensionProperties(pd, NULL, &ne, NULL);
	VkExtensionProperties *ext = calloc(ne, sizeof(*ext)); vkEnumerateDeviceExtensionProperties(pd, NULL, &ne, ext);
	int has_dmabuf = 0, has_fd = 0, has_host = 0;
	for (uint32_t i = 0; i < ne; i++) {
		if (!strcmp(ext[i].extensionName, "VK_EXT_external_memory_dma_buf")) has_dmabuf = 1;
		if (!strcmp(ext[i].extensionName, "VK_KHR_external_memory_fd")) has_fd = 1;
		if (!strcmp(ext[i].extensionName, "VK_EXT_external_memory_host")) has_host = 1;
		if (strstr(ext[i].extensionName, "memory")) printf("ext %s\n", ext[i].extensionName);
	}
	printf("dma_buf ext %d, memory_fd %d, memory_host %d\n", has_dmabuf, has_fd, has_host);
	if (!has_dmabuf || fd < 0) return 0;
	const char *names[] = { "VK_KHR_external_memory_fd", "VK_EXT_external_memory_dma_buf" };
	float prio = 1; VkDeviceQueueCreateInfo q = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1, .pQueuePriorities = &prio };
	VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1, .pQueueCreateInfos = &q, .enabledExtensionCount = 2, .ppEnabledExtensionNames = names };
	VkDevice d; VK(vkCreateDevice(pd, &dci, NULL, &d));
	PFN_vkGetMemoryFdPropertiesKHR gp = (PFN_vkGetMemoryFdPropertiesKHR)vkGetDeviceProcAddr(d, "vkGetMemoryFdPropertiesKHR");
	VkMemoryFdPropertiesKHR mp = { .sType = VK_STRUCTURE_TYPE_MEMORY_FD_PROPERTIES_KHR };
	if (gp) { VK(gp(d, VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT, fd, &mp)); printf("memoryTypeBits 0x%x\n", mp.memoryTypeBits); }
	VkPhysicalDeviceMemoryProperties mprops; vkGetPhysicalDeviceMemoryProperties(pd, &mprops);
	for (uint32_t t = 0; t < mprops.memoryTypeCount; t++) {
		VkMemoryPropertyFlags f = mprops.memoryTypes[t].propertyFlags;
		printf("type %u flags 0x%x heap %u%s\n", t, f, mprops.memoryTypes[t].heapIndex, (mp.memoryTypeBits >> t) & 1 ? " (importable)" : "");
	}
	for (uint32_t t = 0; t < mprops.memoryTypeCount; t++) {
		VkMemoryPropertyFlags f = mprops.memoryTypes[t].propertyFlags;
		if (!((f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))) continue;
		int fd2 = dup(fd);
		VkImportMemoryFdInfoKHR imp = { .sType = VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR, .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_DMA_BUF_BIT_EXT, .fd = fd2 };
		VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &imp, .allocationSize = 2 << 20, .memoryTypeIndex = t };
		VkDeviceMemory mem; VkResult vr = vkAllocateMemory(d, &mai, NULL, &mem);
		printf("import dma-buf into type %u: %d\n", t, vr);
		if (vr) continue;
		void *cpu; vr = vkMapMemory(d, mem, 0, VK_WHOLE_SIZE, 0, &cpu);
		printf("map: %d\n", vr);
		if (!vr) { printf("read 0x%x (want 0x11223344)\n", *(volatile unsigned *)cpu); *(volatile unsigned *)((char*)cpu+64) = 0xabcdef01; __sync_synchronize(); unsigned b = 0; cuMemcpyDtoH(&b, p + 64, 4); printf("cuda sees 0x%x (want 0xabcdef01)\n", b); }
		break;
	}
	return 0;
}
