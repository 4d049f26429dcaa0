// SPDX-License-Identifier: MIT
/*
 * CUDA, loaded at run time.  The library never needs CUDA to pin through
 * gdrdrv, but when a pin fails, the process's own libcuda (if it has
 * loaded one) can tell what the address really is, which turns "Invalid
 * argument" into advice.  RTLD_NOLOAD: a process that has not loaded CUDA
 * is not made to.
 */
#include <dlfcn.h>
#include <stdio.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"
#include "internal.h"

typedef CUresult (*get_attr_fn)(void *data, CUpointer_attribute attribute,
				CUdeviceptr ptr);

static get_attr_fn loaded_get_attr(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	get_attr_fn fn;

	if (!lib)
		return NULL;
	/* The library stays loaded: the process loaded it before us. */
	*(void **)&fn = dlsym(lib, "cuPointerGetAttribute");
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
