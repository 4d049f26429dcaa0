// SPDX-License-Identifier: MIT
/*
 * The diagnosis's check of a running Vulkan against CUDA: it must
 * enumerate, with memory the CPU can map, a GPU with one of CUDA's UUIDs.
 */
#include <string.h>

#include "check.h"
#include "diag_fake.h"

static struct diag_report r;

#define VKGPU (&r.f[DIAG_VK_GPU])

static const uint8_t h100[16] = { 0xba, 0x37, 0x5c, 0x5e, 0x85, 0x88, 0x7a,
	0xb0, 0xa1, 0x0e, 0xee, 0xb7, 0x9e, 0xc9, 0x0d, 0x4a };
static const uint8_t other[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
	14, 15, 16 };

int main(void)
{
	struct diag_vk_dev devs[2];
	uint8_t cuda[2][16];
	char id[41];

	diag_uuid_str(h100, id);
	CHECK(!strcmp(id, "GPU-ba375c5e-8588-7ab0-a10e-eeb79ec90d4a"),
	      "nvidia-smi's form: %s", id);

	memset(devs, 0, sizeof(devs));
	memcpy(devs[0].uuid, other, 16);
	snprintf(devs[0].name, sizeof(devs[0].name), "llvmpipe");
	devs[0].mappable = true;
	memcpy(devs[1].uuid, h100, 16);
	snprintf(devs[1].name, sizeof(devs[1].name), "NVIDIA H100");
	devs[1].mappable = true;
	memcpy(cuda[0], h100, 16);

	memset(&r, 0, sizeof(r));
	diag_vk_gpu(&r, NULL, devs, 2, (const uint8_t (*)[16])cuda, 1);
	CHECK(VKGPU->state == DIAG_OK && strstr(VKGPU->msg, "NVIDIA H100") &&
	      strstr(VKGPU->msg, id), "found and mappable: %s", VKGPU->msg);

	devs[1].mappable = false;
	diag_vk_gpu(&r, NULL, devs, 2, (const uint8_t (*)[16])cuda, 1);
	CHECK(VKGPU->state == DIAG_BAD && strstr(VKGPU->fix, "Resizable BAR"),
	      "found, not mappable: %s / %s", VKGPU->msg, VKGPU->fix);

	diag_vk_gpu(&r, NULL, devs, 1, (const uint8_t (*)[16])cuda, 1);
	CHECK(VKGPU->state == DIAG_BAD && strstr(VKGPU->msg, "llvmpipe (GPU-01020304") &&
	      strstr(VKGPU->msg, id),
	      "only another device: both named: %s", VKGPU->msg);
	CHECK(strstr(VKGPU->fix, "VK_LOADER_DEBUG") != NULL, "fix: %s",
	      VKGPU->fix);

	memcpy(cuda[1], h100, 16);
	memcpy(cuda[0], other, 16);
	devs[1].mappable = true;
	devs[0].mappable = false;
	diag_vk_gpu(&r, NULL, devs, 2, (const uint8_t (*)[16])cuda, 2);
	CHECK(VKGPU->state == DIAG_OK && strstr(VKGPU->msg, "NVIDIA H100"),
	      "CUDA's second GPU is the one Vulkan maps: %s", VKGPU->msg);

	diag_vk_gpu(&r, NULL, devs, 0, (const uint8_t (*)[16])cuda, 2);
	CHECK(VKGPU->state == DIAG_BAD && strstr(VKGPU->msg, "no device at all"),
	      "nothing enumerated: %s", VKGPU->msg);

	diag_vk_gpu(&r, NULL, devs, 2, (const uint8_t (*)[16])cuda, 0);
	CHECK(VKGPU->state == DIAG_UNKNOWN, "no CUDA GPU to look for: %s",
	      VKGPU->msg);

	/* Vulkan did not start: a cause only if nothing before explains it. */
	fake_new();
	fake_gpu_machine();
	fake_run(&r, NULL);
	diag_vk_gpu(&r, "vkCreateInstance failed (-9)", devs, -1,
		    (const uint8_t (*)[16])cuda, 2);
	CHECK(VKGPU->state == DIAG_BAD && strstr(VKGPU->msg, "(-9)") &&
	      strstr(VKGPU->fix, "VK_LOADER_DEBUG"),
	      "loader and driver load, yet no instance: %s", VKGPU->msg);
	fake_unlink("/lib/libvulkan.so.1");
	fake_run(&r, NULL);
	diag_vk_gpu(&r, "the Vulkan loader is not installed", devs, -1,
		    (const uint8_t (*)[16])cuda, 2);
	CHECK(VKGPU->state == DIAG_UNKNOWN,
	      "no loader: the loader finding explains it: %s", VKGPU->msg);
	diag_vk_gpu(&r, NULL, devs, -1, (const uint8_t (*)[16])cuda, 2);
	CHECK(VKGPU->state == DIAG_UNKNOWN, "never tried: unknown");

	/* CUDA runs two GPUs on a machine with no NVIDIA device files and no
	 * NVIDIA GPU on the PCI bus (the test VM's simulated GPUs): not "no
	 * GPU, run on one that has". */
	fake_new();
	fake_run(&r, NULL);
	CHECK(r.f[DIAG_DEVICES].state == DIAG_BAD &&
	      strstr(r.f[DIAG_DEVICES].fix, "run on one that has"),
	      "no GPU anywhere: run on one that has: %s", r.f[DIAG_DEVICES].fix);
	diag_vk_gpu(&r, NULL, devs, -1, (const uint8_t (*)[16])cuda, 2);
	CHECK(r.f[DIAG_DEVICES].state == DIAG_BAD &&
	      strstr(r.f[DIAG_DEVICES].msg, "CUDA runs 2 GPUs") &&
	      strstr(r.f[DIAG_DEVICES].msg, "/dev/nvidiactl") &&
	      !strstr(r.f[DIAG_DEVICES].fix, "run on one that has") &&
	      strstr(r.f[DIAG_DEVICES].fix, "gdrdrv"),
	      "CUDA's GPUs without NVIDIA's driver: %s / %s",
	      r.f[DIAG_DEVICES].msg, r.f[DIAG_DEVICES].fix);
	/* An NVIDIA GPU on the bus keeps its own words. */
	fake_new();
	fake_gpu_machine();
	fake_unlink("/dev/nvidiactl");
	fake_run(&r, NULL);
	diag_vk_gpu(&r, NULL, devs, -1, (const uint8_t (*)[16])cuda, 2);
	CHECK(strstr(r.f[DIAG_DEVICES].msg, "though an NVIDIA GPU is on the PCI bus"),
	      "GPU on the bus: %s", r.f[DIAG_DEVICES].msg);
	fake_done();
	return test_done();
}
