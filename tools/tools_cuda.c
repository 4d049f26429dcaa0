// SPDX-License-Identifier: MIT
/* libcuda.so.1 loaded at run time for the tools (tools_cuda.h). */
#include <stdio.h>
#include <string.h>

#include "affinity.h"
#include "cuda_load.h"
#include "tools_cuda.h"

static struct tcu cu;
static int loaded;		/* 0 not tried, 1 ok, -1 failed */
static char load_why[320];
/* Primary contexts retained by tcu_use_device, by device index. */
static CUcontext primary[64];

static int load(void)
{
#define TCU_SYM(field, sym) CUDA_SYM(sym, &cu.field),
#define TCU_SYM_OPT(field, sym) CUDA_SYM_OPT(sym, &cu.field),
	const struct cuda_sym syms[] = {
		TCU_REQUIRED(TCU_SYM)
		TCU_OPTIONAL(TCU_SYM_OPT)
	};
#undef TCU_SYM
#undef TCU_SYM_OPT
	const char *what;
	char err[160];
	CUresult res;

	switch (cuda_load_syms(syms, sizeof(syms) / sizeof(syms[0]), &what)) {
	case CUDA_LOADED:
		break;
	case CUDA_NO_LIBRARY:
		snprintf(load_why, sizeof(load_why),
			 "no GPU: libcuda.so.1 (the NVIDIA driver's CUDA library) cannot be loaded; install the NVIDIA driver or add its directory to LD_LIBRARY_PATH");
		return -1;
	default:
		snprintf(load_why, sizeof(load_why),
			 "libcuda.so.1 lacks %s: the NVIDIA driver is too old",
			 what);
		return -1;
	}
	res = cu.Init(0);
	if (res != CUDA_SUCCESS) {
		snprintf(load_why, sizeof(load_why),
			 "no GPU: cuInit failed: %s; check that nvidia-smi sees a GPU",
			 tcu_error(res, err, sizeof(err)));
		return -1;
	}
	cu.DriverGetVersion(&cu.driver_version);
	if (cu.DeviceGetCount(&cu.device_count) != CUDA_SUCCESS ||
	    cu.device_count < 1) {
		snprintf(load_why, sizeof(load_why),
			 "no GPU: the CUDA driver sees no device");
		return -1;
	}
	return 1;
}

const struct tcu *tcu_load(char *why, size_t len)
{
	if (!loaded)
		loaded = load();
	if (loaded < 0) {
		if (why)
			snprintf(why, len, "%s", load_why);
		return NULL;
	}
	return &cu;
}

const char *tcu_error(CUresult res, char *buf, size_t len)
{
	const char *name = NULL, *text = NULL;

	if (cu.GetErrorName) {
		cu.GetErrorName(res, &name);
		cu.GetErrorString(res, &text);
	}
	if (name)
		snprintf(buf, len, "%s (%s)", name, text ? text : "");
	else
		snprintf(buf, len, "CUDA error %d", res);
	return buf;
}

int tcu_device_info(const struct tcu *c, int index, struct gpu_info *gi,
		    char *err, size_t errlen)
{
	char raw[64], e[160];
	CUdevice dev;
	CUresult res;

	memset(gi, 0, sizeof(*gi));
	gi->index = index;
	if (index >= c->device_count) {
		snprintf(err, errlen, "no CUDA device %d (this machine has %d)",
			 index, c->device_count);
		return -1;
	}
	res = c->DeviceGet(&dev, index);
	if (res != CUDA_SUCCESS) {
		snprintf(err, errlen, "cuDeviceGet(%d): %s", index,
			 tcu_error(res, e, sizeof(e)));
		return -1;
	}
	if (c->DeviceGetName(gi->name, sizeof(gi->name), dev) != CUDA_SUCCESS)
		snprintf(gi->name, sizeof(gi->name), "unknown");
	gi->simulated = strstr(gi->name, "simulated") != NULL ||
			strstr(gi->name, "Simulated") != NULL;
	if (c->DeviceGetPCIBusId(raw, sizeof(raw), dev) != CUDA_SUCCESS ||
	    pci_normalize(raw, gi->busid, sizeof(gi->busid)))
		gi->busid[0] = 0;
	c->DeviceTotalMem(&gi->memory, dev);
	c->DeviceGetAttribute(&gi->cc_major,
			      CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	c->DeviceGetAttribute(&gi->cc_minor,
			      CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	return 0;
}

int tcu_use_device(const struct tcu *c, int index, CUcontext *ctx,
		   char *err, size_t errlen)
{
	char e[160];
	CUdevice dev;
	CUresult res = CUDA_SUCCESS;

	if (index < 0 || index >= c->device_count ||
	    index >= (int)(sizeof(primary) / sizeof(primary[0]))) {
		snprintf(err, errlen, "no CUDA device %d (this machine has %d)",
			 index, c->device_count);
		return -1;
	}
	if (!primary[index]) {
		res = c->DeviceGet(&dev, index);
		if (res == CUDA_SUCCESS)
			res = c->DevicePrimaryCtxRetain(&primary[index], dev);
	}
	if (res == CUDA_SUCCESS)
		res = c->CtxSetCurrent(primary[index]);
	if (res != CUDA_SUCCESS) {
		snprintf(err, errlen, "no CUDA context on device %d: %s", index,
			 tcu_error(res, e, sizeof(e)));
		return -1;
	}
	if (ctx)
		*ctx = primary[index];
	return 0;
}
