// SPDX-License-Identifier: MIT
/*
 * What copy-only pins (lib/paths/copy_only_pins.c) rely on, as NVIDIA's driver
 * answers it: cuPointerGetAttributes for legacy memory of the primary
 * context and of a created one, VMM memory, a hole between allocations
 * inside CUDA's address space, and host memory, under no context and
 * under each context; and whether an asynchronous copy on a stream of one
 * context reaches legacy memory allocated in another context of the same
 * GPU.  The simulated GPU's libcuda shim models the stricter answers.
 *
 * Build on a machine with the CUDA toolkit:
 *   cc -O1 -o copy_only_probe copy_only_probe.c -I/usr/local/cuda/include -lcuda
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

static const char *rn(CUresult r)
{
	const char *n = NULL;

	cuGetErrorName(r, &n);
	return n ? n : "?";
}

static CUcontext prim, user;

static const char *ctx_name(CUcontext c)
{
	return !c ? "null" : c == prim ? "primary" : c == user ? "user" :
	       "other";
}

static void attrs(const char *under, const char *what, CUdeviceptr p)
{
	CUpointer_attribute a[] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				    CU_POINTER_ATTRIBUTE_IS_MANAGED,
				    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				    CU_POINTER_ATTRIBUTE_CONTEXT };
	unsigned int type = 99, managed = 99;
	int ord = 99;
	CUcontext c = (CUcontext)1;
	void *d[] = { &type, &managed, &ord, &c };
	CUresult r = cuPointerGetAttributes(4, a, d, p);

	printf("attributes under %-8s of %-22s %s type=%u managed=%u ordinal=%d context=%s\n",
	       under, what, rn(r), type, managed, ord, ctx_name(c));
}

static void copy(const char *stream_ctx, CUcontext c, const char *what,
		 CUdeviceptr p)
{
	CUstream s;
	unsigned long long v = 0x1122334455667788ULL, back = 0;
	CUresult r1, r2, r3;

	MUST(cuCtxSetCurrent(c));
	MUST(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	r1 = cuMemcpyHtoDAsync(p, &v, 8, s);
	r2 = cuStreamSynchronize(s);
	r3 = cuMemcpyDtoHAsync(&back, p, 8, s);
	cuStreamSynchronize(s);
	printf("copy on a stream of the %-7s context to %-22s write %s, sync %s, read %s, %s\n",
	       stream_ctx, what, rn(r1), rn(r2), rn(r3),
	       back == v ? "round trip right" : "round trip WRONG");
	cuStreamDestroy(s);
	MUST(cuCtxSetCurrent(NULL));
}

int main(void)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h;
	CUdeviceptr lp, lu, vmm, small[3];
	CUdevice dev;
	static char host[4096];
	int i;

	MUST(cuInit(0));
	MUST(cuDeviceGet(&dev, 0));
	MUST(cuDevicePrimaryCtxRetain(&prim, dev));
	MUST(cuCtxSetCurrent(prim));
	MUST(cuMemAlloc(&lp, 1 << 20));
	for (i = 0; i < 3; i++)
		MUST(cuMemAlloc(&small[i], 16));
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	MUST(cuMemCreate(&h, 2 << 20, &prop, 0));
	MUST(cuMemAddressReserve(&vmm, 2 << 20, 0, 0, 0));
	MUST(cuMemMap(vmm, 2 << 20, 0, h, 0));
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	MUST(cuMemSetAccess(vmm, 2 << 20, &acc, 1));
	MUST(cuCtxCreate(&user, NULL, 0, dev));
	MUST(cuMemAlloc(&lu, 1 << 20));
	MUST(cuCtxSetCurrent(NULL));
	printf("small allocations: 0x%llx 0x%llx 0x%llx\n",
	       (unsigned long long)small[0], (unsigned long long)small[1],
	       (unsigned long long)small[2]);
	for (i = 0; i < 3; i++) {
		CUcontext c = i == 0 ? NULL : i == 1 ? prim : user;
		const char *n = i == 0 ? "none" : i == 1 ? "primary" : "user";

		MUST(cuCtxSetCurrent(c));
		attrs(n, "cuMemAlloc (primary)", lp);
		attrs(n, "cuMemAlloc (user)", lu);
		attrs(n, "cuMemCreate", vmm);
		attrs(n, "small[1] + 16", small[1] + 16);
		attrs(n, "small[1] & ~64K", small[1] & ~0xffffULL);
		attrs(n, "host memory", (CUdeviceptr)host);
		MUST(cuCtxSetCurrent(NULL));
	}
	copy("primary", prim, "cuMemAlloc (primary)", lp);
	copy("primary", prim, "cuMemAlloc (user)", lu);
	copy("user", user, "cuMemAlloc (primary)", lp);
	copy("user", user, "cuMemAlloc (user)", lu);
	copy("primary", prim, "cuMemCreate", vmm);
	copy("user", user, "cuMemCreate", vmm);
	return 0;
}
