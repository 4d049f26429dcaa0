// SPDX-License-Identifier: MIT
/* The diagnosis's look at a running Vulkan: does it see CUDA's GPU? */
#include <stdio.h>
#include <string.h>

#include "diag_util.h"

void diag_uuid_str(const uint8_t u[16], char buf[41])
{
	snprintf(buf, 41,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

void diag_vk_gpu(struct diag_report *r, const char *vk_why,
		 const struct diag_vk_dev *devs, int ndev,
		 const uint8_t (*cuda)[16], int ncuda)
{
	char seen[320] = "", id[41];
	const struct diag_vk_dev *same = NULL;
	int i, k;

	/*
	 * CUDA runs GPUs, yet neither their device files nor an NVIDIA GPU
	 * on the PCI bus are here: this CUDA is not NVIDIA's driver (the
	 * simulated GPU's, say), and "no GPU here" would be wrong.  The
	 * module-free backends still need NVIDIA's driver.
	 */
	if (ncuda > 0 && r->dev_missing[0] && !r->gpu_pci[0]) {
		diag_set(r, DIAG_DEVICES, DIAG_BAD,
			 "%s missing and no NVIDIA GPU on the PCI bus, yet CUDA runs %d GPU%s: a CUDA that is not NVIDIA's driver (a simulated GPU?)",
			 r->dev_missing, ncuda, ncuda == 1 ? "" : "s");
		diag_fix(r, DIAG_DEVICES,
			 "the module-free backends need NVIDIA's driver and its device files; with this CUDA, use the gdrdrv backend");
	}

	if (ndev < 0) {
		if (vk_why && r->f[DIAG_LOADER].state == DIAG_OK &&
		    r->f[DIAG_ICD_LIB].state == DIAG_OK) {
			diag_set(r, DIAG_VK_GPU, DIAG_BAD,
				 "the NVIDIA Vulkan driver loads, yet Vulkan fails: %s",
				 vk_why);
			diag_fix(r, DIAG_VK_GPU,
				 "VK_LOADER_DEBUG=error,driver shows the driver's complaint; usually its libraries are another version than the kernel module (cat /proc/driver/nvidia/version) or libnvidia-glvkspirv.so is missing");
		} else {
			diag_set(r, DIAG_VK_GPU, DIAG_UNKNOWN,
				 "not checked: no running Vulkan");
		}
		return;
	}
	if (ncuda <= 0) {
		diag_set(r, DIAG_VK_GPU, DIAG_UNKNOWN,
			 "not checked: CUDA shows no GPU to look for");
		return;
	}
	for (i = 0; i < ndev; i++) {
		for (k = 0; k < ncuda; k++) {
			if (memcmp(devs[i].uuid, cuda[k], 16))
				continue;
			if (devs[i].mappable) {
				diag_uuid_str(cuda[k], id);
				diag_set(r, DIAG_VK_GPU, DIAG_OK,
					 "Vulkan's %s is CUDA's %s and can map its memory for the CPU",
					 devs[i].name, id);
				return;
			}
			same = &devs[i];
		}
		diag_uuid_str(devs[i].uuid, id);
		diag_cat(seen, sizeof(seen), "%s%s (%s)", i ? ", " : "",
			 devs[i].name, id);
	}
	if (same) {
		diag_set(r, DIAG_VK_GPU, DIAG_BAD,
			 "Vulkan's %s is CUDA's GPU but offers no memory type both device-local and host-visible with VK_KHR_external_memory_fd",
			 same->name);
		diag_fix(r, DIAG_VK_GPU,
			 "enable Resizable BAR (a BAR1 as large as the GPU's memory) in the firmware or hypervisor, or load gdrdrv");
		return;
	}
	diag_uuid_str(cuda[0], id);
	if (ndev)
		diag_set(r, DIAG_VK_GPU, DIAG_BAD,
			 "Vulkan enumerates %s, none with the UUID of CUDA's GPU %s%s",
			 seen, id, ncuda > 1 ? " (or another of CUDA's)" : "");
	else
		diag_set(r, DIAG_VK_GPU, DIAG_BAD,
			 "Vulkan enumerates no device at all, so not CUDA's GPU %s",
			 id);
	diag_fix(r, DIAG_VK_GPU,
		 "the NVIDIA Vulkan driver does not see this GPU: VK_LOADER_DEBUG=error,driver says why; check /dev/nvidia* and that the driver's libraries match the kernel module; in a container, give Vulkan and CUDA the same GPUs (NVIDIA_VISIBLE_DEVICES)");
}

