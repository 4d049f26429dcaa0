// SPDX-License-Identifier: MIT
/*
 * The BAR1 size from NVML (libnvidia-ml.so.1, loaded at run time), for
 * machines whose sysfs does not show the GPU's BARs (some VMs).  Only the
 * three NVML calls used are declared, from NVML's documented API.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "doctor.h"

typedef struct nvml_device *nvml_device_t;
struct nvml_bar1_memory {
	unsigned long long total, free, used;
};

unsigned long long nvml_bar1_size(const char *busid)
{
	int (*init)(void), (*shutdown)(void);
	int (*by_bus)(const char *, nvml_device_t *);
	int (*bar1)(nvml_device_t, struct nvml_bar1_memory *);
	struct nvml_bar1_memory mem = { 0 };
	nvml_device_t dev;
	void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		return 0;
	*(void **)&init = dlsym(lib, "nvmlInit_v2");
	*(void **)&shutdown = dlsym(lib, "nvmlShutdown");
	*(void **)&by_bus = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&bar1 = dlsym(lib, "nvmlDeviceGetBAR1MemoryInfo");
	/* NVML_SUCCESS is 0. */
	if (init && shutdown && by_bus && bar1 && !init()) {
		if (by_bus(busid, &dev) || bar1(dev, &mem))
			mem.total = 0;
		shutdown();
	}
	dlclose(lib);
	return mem.total;
}
