// SPDX-License-Identifier: MIT
/*
 * gdrmap extension: allocate GPU memory that every backend can pin, the
 * module-free ones included (CUDA VMM with the POSIX file descriptor
 * handle type, GPUDirect RDMA capable where the GPU supports it).
 */
#include <errno.h>
#include <string.h>

#include "cuda_api.h"
#include "internal.h"
#include "log.h"

static int cuda_failed(const struct gdr_cuda *cu, const char *what,
		       CUresult res)
{
	char err[160];

	gdr_err("%s failed: %s", what, gdr_cuda_error(cu, res, err,
							sizeof(err)));
	return res == CUDA_ERROR_OUT_OF_MEMORY ? ENOMEM : EINVAL;
}

GDR_API int gdrmap_mem_alloc(int device, size_t size, unsigned long *dptr)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc access;
	CUmemGenericAllocationHandle handle;
	struct gdr_cuda_ctx ctx;
	const struct gdr_cuda *cu;
	CUdeviceptr ptr = 0;
	size_t gran = 0;
	int rdma = 0, posix_fd = 0, err;
	CUresult res;
	char why[256];

	if (!dptr || !size) {
		gdr_err("%s", !dptr ? "dptr is NULL" : "size is 0");
		return EINVAL;
	}
	cu = gdr_cuda_get(why, sizeof(why));
	if (!cu) {
		gdr_err("%s", why);
		return ENODEV;
	}
	if (gdr_cuda_ctx_enter(cu, device, &ctx)) {
		gdr_err("CUDA device %d cannot be used (no such device?)",
			device);
		return ENODEV;
	}
	cu->DeviceGetAttribute(&rdma,
		CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
		device);
	cu->DeviceGetAttribute(&posix_fd,
		CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
		device);
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	/* Without fd export only gdrdrv can pin it, which is still useful. */
	prop.requestedHandleTypes = posix_fd ?
		CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR :
		CU_MEM_HANDLE_TYPE_NONE;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = device;
	prop.allocFlags.gpuDirectRDMACapable = rdma ? 1 : 0;
	res = cu->MemGetAllocationGranularity(&gran, &prop,
					      CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (res != CUDA_SUCCESS || !gran) {
		err = cuda_failed(cu, "cuMemGetAllocationGranularity", res);
		goto leave;
	}
	if (size > SIZE_MAX - gran) {
		gdr_err("size %zu is too large", size);
		err = EINVAL;
		goto leave;
	}
	size = (size + gran - 1) / gran * gran;
	res = cu->MemCreate(&handle, size, &prop, 0);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemCreate", res);
		goto leave;
	}
	res = cu->MemAddressReserve(&ptr, size, gran, 0, 0);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemAddressReserve", res);
		goto release;
	}
	res = cu->MemMap(ptr, size, 0, handle, 0);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemMap", res);
		goto free_va;
	}
	memset(&access, 0, sizeof(access));
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	res = cu->MemSetAccess(ptr, size, &access, 1);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemSetAccess", res);
		goto unmap;
	}
	/* The mapping holds the memory; the handle is not needed any more. */
	cu->MemRelease(handle);
	gdr_cuda_ctx_leave(cu, &ctx);
	*dptr = (unsigned long)ptr;
	return 0;

unmap:
	cu->MemUnmap(ptr, size);
free_va:
	cu->MemAddressFree(ptr, size);
release:
	cu->MemRelease(handle);
leave:
	gdr_cuda_ctx_leave(cu, &ctx);
	return err;
}

GDR_API int gdrmap_mem_free(unsigned long dptr)
{
	const struct gdr_cuda *cu = gdr_cuda_get(NULL, 0);
	CUdeviceptr base = 0;
	size_t size = 0;
	CUresult res;

	if (!cu || !dptr) {
		gdr_err("%s", !dptr ? "dptr is 0" : "CUDA is not loaded");
		return EINVAL;
	}
	res = cu->MemGetAddressRange(&base, &size, dptr);
	if (res != CUDA_SUCCESS || base != dptr) {
		gdr_err("0x%lx is not an address returned by gdrmap_mem_alloc",
			dptr);
		return EINVAL;
	}
	res = cu->MemUnmap(base, size);
	if (res != CUDA_SUCCESS)
		return cuda_failed(cu, "cuMemUnmap", res);
	res = cu->MemAddressFree(base, size);
	if (res != CUDA_SUCCESS)
		return cuda_failed(cu, "cuMemAddressFree", res);
	return 0;
}
