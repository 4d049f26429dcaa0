// SPDX-License-Identifier: MIT
/*
 * gdrmap extension: allocate GPU memory that every backend can pin, the
 * module-free ones included (CUDA VMM with the POSIX file descriptor
 * handle type, GPUDirect RDMA capable where the GPU supports it).
 */
#include <errno.h>
#include <string.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "base/log.h"

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
	struct gdr_cuda_scope s;
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
	res = gdr_cuda_enter(device, &s);
	if (res != CUDA_SUCCESS) {
		gdr_err("%s", gdr_cuda_scope_error(&s, res, why, sizeof(why)));
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
	res = s.call->MemGetAllocationGranularity(&gran, &prop,
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
	res = s.call->MemCreate(&handle, size, &prop, 0);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemCreate", res);
		goto leave;
	}
	res = s.call->MemAddressReserve(&ptr, size, gran, 0, 0);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemAddressReserve", res);
		goto release;
	}
	res = s.call->MemMap(ptr, size, 0, handle, 0);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemMap", res);
		goto free_va;
	}
	memset(&access, 0, sizeof(access));
	access.location = prop.location;
	access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	res = s.call->MemSetAccess(ptr, size, &access, 1);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemSetAccess", res);
		goto unmap;
	}
	/* The mapping holds the memory; the handle is not needed any more. */
	s.call->MemRelease(handle);
	gdr_cuda_leave(&s);
	*dptr = (unsigned long)ptr;
	return 0;

unmap:
	s.call->MemUnmap(ptr, size);
free_va:
	s.call->MemAddressFree(ptr, size);
release:
	s.call->MemRelease(handle);
leave:
	gdr_cuda_leave(&s);
	return err;
}

GDR_API int gdrmap_mem_free(unsigned long dptr)
{
	const struct gdr_cuda *cu = gdr_cuda_get(NULL, 0);
	struct gdr_cuda_scope s;
	CUdeviceptr base = 0;
	size_t size = 0;
	CUresult res;
	int err = 0;

	if (!cu || !dptr) {
		gdr_err("%s", !dptr ? "dptr is 0" : "CUDA is not loaded");
		return EINVAL;
	}
	if (gdr_cuda_enter_owner(dptr, &s) != CUDA_SUCCESS) {
		gdr_err("0x%lx is not an address returned by gdrmap_mem_alloc",
			dptr);
		return EINVAL;
	}
	res = s.call->MemGetAddressRange(&base, &size, dptr);
	if (res != CUDA_SUCCESS || base != dptr) {
		gdr_err("0x%lx is not an address returned by gdrmap_mem_alloc",
			dptr);
		err = EINVAL;
		goto leave;
	}
	res = s.call->MemUnmap(base, size);
	if (res != CUDA_SUCCESS) {
		err = cuda_failed(cu, "cuMemUnmap", res);
		goto leave;
	}
	res = s.call->MemAddressFree(base, size);
	if (res != CUDA_SUCCESS)
		err = cuda_failed(cu, "cuMemAddressFree", res);
leave:
	gdr_cuda_leave(&s);
	return err;
}
