// SPDX-License-Identifier: MIT
/*
 * CUDA, loaded at run time.  The module-free backends need it; the gdrdrv
 * backend only asks the process's own libcuda (if it already loaded one)
 * to explain a failed pin, which turns "Invalid argument" into advice.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_api.h"
#include "internal.h"

static struct gdr_cuda cuda;
static const struct gdr_cuda *cuda_ok;
static char cuda_why[256];
static pthread_once_t cuda_once = PTHREAD_ONCE_INIT;

static void cuda_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUresult res;

	if (!lib) {
		snprintf(cuda_why, sizeof(cuda_why),
			 "libcuda.so.1 (the NVIDIA driver's CUDA library) cannot be loaded: install the NVIDIA driver, or add its directory to LD_LIBRARY_PATH");
		return;
	}
#define GDR_CUDA_LOAD(field, sym)					\
	*(void **)&cuda.field = dlsym(lib, #sym);			\
	if (!cuda.field) {						\
		snprintf(cuda_why, sizeof(cuda_why),			\
			 "libcuda.so.1 has no %s: the NVIDIA driver is too old (CUDA 11.3 or newer needed)", \
			 #sym);						\
		return;							\
	}
	GDR_CUDA_FUNCS(GDR_CUDA_LOAD)
#undef GDR_CUDA_LOAD
	res = cuda.Init(0);
	if (res != CUDA_SUCCESS) {
		char err[128];

		snprintf(cuda_why, sizeof(cuda_why),
			 "cuInit failed: %s (is an NVIDIA GPU visible here? check nvidia-smi)",
			 gdr_cuda_error(&cuda, res, err, sizeof(err)));
		return;
	}
	cuda.DriverGetVersion(&cuda.driver_version);
	/* libcuda stays loaded for the life of the process, as CUDA expects. */
	cuda_ok = &cuda;
}

const struct gdr_cuda *gdr_cuda_get(char *why, size_t why_len)
{
	pthread_once(&cuda_once, cuda_load);
	if (!cuda_ok && why)
		snprintf(why, why_len, "%s", cuda_why);
	return cuda_ok;
}

const char *gdr_cuda_error(const struct gdr_cuda *cu, CUresult res,
			   char *buf, size_t len)
{
	const char *name = NULL, *text = NULL;

	if (cu) {
		cu->GetErrorName(res, &name);
		cu->GetErrorString(res, &text);
	}
	snprintf(buf, len, "%s (%s)", name ? name : "CUDA error",
		 text ? text : "no description");
	return buf;
}

int gdr_cuda_ctx_enter(const struct gdr_cuda *cu, CUdevice dev,
		       struct gdr_cuda_ctx *saved)
{
	CUcontext cur = NULL, primary;

	saved->dev = dev;
	saved->retained = 0;
	if (cu->CtxGetCurrent(&cur) == CUDA_SUCCESS && cur)
		return 0;
	if (cu->DevicePrimaryCtxRetain(&primary, dev) != CUDA_SUCCESS)
		return -1;
	if (cu->CtxSetCurrent(primary) != CUDA_SUCCESS) {
		cu->DevicePrimaryCtxRelease(dev);
		return -1;
	}
	saved->retained = 1;
	return 0;
}

void gdr_cuda_ctx_leave(const struct gdr_cuda *cu, struct gdr_cuda_ctx *saved)
{
	if (!saved->retained)
		return;
	cu->CtxSetCurrent(NULL);
	cu->DevicePrimaryCtxRelease(saved->dev);
	saved->retained = 0;
}

typedef CUresult (*get_attr_fn)(void *data, CUpointer_attribute attribute,
				CUdeviceptr ptr);

/* cuPointerGetAttribute of a libcuda the process loaded itself, if any. */
static get_attr_fn loaded_get_attr(void)
{
	void *lib;
	get_attr_fn fn;

	if (cuda_ok)
		return cuda_ok->PointerGetAttribute;
	lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib)
		return NULL;
	*(void **)&fn = dlsym(lib, "cuPointerGetAttribute");
	/* Still loaded afterwards: the process loaded it before us. */
	dlclose(lib);
	return fn;
}

int gdr_cuda_explain_range(uint64_t addr, uint64_t size, char *buf,
			   size_t len)
{
	get_attr_fn get_attr = loaded_get_attr();
	unsigned int type = 0, managed = 0;
	CUdeviceptr base = 0;
	size_t range = 0;

	if (!get_attr)
		return 0;
	if (get_attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, addr) !=
	    CUDA_SUCCESS) {
		snprintf(buf, len,
			 "0x%llx is not memory CUDA knows (not allocated, already freed, or plain host memory): pin memory from cuMemAlloc or cuMemCreate",
			 (unsigned long long)addr);
		return 1;
	}
	if (get_attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, addr) ==
	    CUDA_SUCCESS && managed) {
		snprintf(buf, len,
			 "0x%llx is managed memory (cuMemAllocManaged), which cannot be pinned for the CPU: allocate with cuMemAlloc or cuMemCreate",
			 (unsigned long long)addr);
		return 1;
	}
	if (type == CU_MEMORYTYPE_HOST) {
		snprintf(buf, len,
			 "0x%llx is host memory, not GPU memory: the CPU can use it directly, no pin is needed",
			 (unsigned long long)addr);
		return 1;
	}
	if (get_attr(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, addr) ==
	    CUDA_SUCCESS &&
	    get_attr(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, addr) ==
	    CUDA_SUCCESS && addr + size > base + range) {
		snprintf(buf, len,
			 "[0x%llx, +%llu) runs past the end of its allocation [0x%llx, +%zu): pin inside one allocation",
			 (unsigned long long)addr, (unsigned long long)size,
			 (unsigned long long)base, range);
		return 1;
	}
	return 0;
}
