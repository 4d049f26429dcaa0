// SPDX-License-Identifier: MIT
/*
 * Which CUDA driver queries answer for a pointer under which current
 * context: none, the owner's primary context, a context the program
 * created itself on the owner, another device's primary context.  The
 * simulated GPU's libcuda shim models the answers this prints; run it on
 * each GPU machine kind (bench/probes/run-probes.sh).
 *
 * Build on a machine with the CUDA toolkit:
 *   cc -O1 -o cuda_ctx_probe cuda_ctx_probe.c -I/usr/local/cuda/include -lcuda
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MUST(call)							\
	do {								\
		CUresult r_ = (call);					\
		if (r_ != CUDA_SUCCESS) {				\
			const char *n_ = NULL;				\
			cuGetErrorName(r_, &n_);			\
			fprintf(stderr, "%s:%d: %s = %s\n", __FILE__,	\
				__LINE__, #call, n_ ? n_ : "?");	\
			exit(1);					\
		}							\
	} while (0)

static const char *rn(CUresult r)
{
	const char *n = NULL;

	cuGetErrorName(r, &n);
	return n ? n : "?";
}

struct ptr {
	const char *name;
	CUdeviceptr p;
	int dev;
};

static void query(const char *ctxname, const struct ptr *pt)
{
	unsigned long long u = 0;
	CUcontext c = NULL;
	CUdeviceptr base = 0;
	size_t size = 0;
	CUmemGenericAllocationHandle h = 0;
	int ord = -1, fd = -1;
	CUresult r;

	printf("%-14s %-18s", ctxname, pt->name);
	r = cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, pt->p);
	printf(" ordinal=%s(%d)", rn(r), ord);
	r = cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, pt->p);
	printf(" context=%s(%s)", rn(r), c ? "set" : "null");
	u = 0;
	r = cuPointerGetAttribute(&u, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, pt->p);
	printf(" range_start=%s(%s)", rn(r), u ? "set" : "0");
	r = cuPointerGetAttribute(&u, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, pt->p);
	printf(" memtype=%s", rn(r));
	r = cuPointerGetAttribute(&u, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, pt->p);
	printf(" handle_types=%s(%llu)", rn(r), u);
	r = cuMemGetAddressRange(&base, &size, pt->p);
	printf(" addr_range=%s", rn(r));
	r = cuMemRetainAllocationHandle(&h, (void *)pt->p);
	printf(" retain=%s", rn(r));
	if (r == CUDA_SUCCESS) {
		CUmemAllocationProp prop;

		memset(&prop, 0, sizeof(prop));
		r = cuMemGetAllocationPropertiesFromHandle(&prop, h);
		printf(" props=%s(dev %d)", rn(r), prop.location.id);
		r = cuMemExportToShareableHandle(&fd, h,
			CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
		printf(" export=%s", rn(r));
		if (fd >= 0)
			close(fd);
		cuMemRelease(h);
	}
	fd = -1;
	r = cuMemGetHandleForAddressRange(&fd, pt->p, 2 << 20,
		CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	printf(" dmabuf=%s\n", rn(r));
	if (fd >= 0)
		close(fd);
}

static CUdeviceptr vmm_alloc(int dev, size_t size)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h;
	CUdeviceptr p;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	MUST(cuMemCreate(&h, size, &prop, 0));
	MUST(cuMemAddressReserve(&p, size, 0, 0, 0));
	MUST(cuMemMap(p, size, 0, h, 0));
	MUST(cuMemRelease(h));
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	MUST(cuMemSetAccess(p, size, &acc, 1));
	return p;
}

int main(void)
{
	struct ptr ptrs[16];
	CUcontext prim[8], user[8], cur;
	int n, np = 0, d, i;
	const size_t sz = 2 << 20;
	char name[32];

	MUST(cuInit(0));
	MUST(cuDeviceGetCount(&n));
	if (n > 8)
		n = 8;
	printf("devices %d\n", n);
	for (d = 0; d < n; d++) {
		CUdevice dev;
		CUdeviceptr p;

		MUST(cuDeviceGet(&dev, d));
		MUST(cuDevicePrimaryCtxRetain(&prim[d], dev));
		MUST(cuCtxSetCurrent(prim[d]));
		MUST(cuMemAlloc(&p, sz));
		snprintf(name, sizeof(name), "legacy@%d", d);
		ptrs[np++] = (struct ptr){ strdup(name), p, d };
		p = vmm_alloc(d, sz);
		snprintf(name, sizeof(name), "vmm@%d", d);
		ptrs[np++] = (struct ptr){ strdup(name), p, d };
		MUST(cuCtxCreate(&user[d], NULL, 0, dev));	/* now current */
		MUST(cuMemAlloc(&p, sz));
		snprintf(name, sizeof(name), "legacy-user@%d", d);
		ptrs[np++] = (struct ptr){ strdup(name), p, d };
		MUST(cuCtxSetCurrent(NULL));
	}
	for (i = 0; i < np; i++) {
		MUST(cuCtxSetCurrent(NULL));
		query("none", &ptrs[i]);
		for (d = 0; d < n; d++) {
			snprintf(name, sizeof(name), "primary@%d", d);
			MUST(cuCtxSetCurrent(prim[d]));
			query(name, &ptrs[i]);
			snprintf(name, sizeof(name), "user@%d", d);
			MUST(cuCtxSetCurrent(user[d]));
			query(name, &ptrs[i]);
		}
	}
	/* What the primary context retain does to the current one. */
	MUST(cuCtxSetCurrent(user[0]));
	MUST(cuDevicePrimaryCtxRetain(&cur, 0));
	MUST(cuCtxGetCurrent(&cur));
	printf("after PrimaryCtxRetain under user@0: current is %s\n",
	       cur == user[0] ? "user@0" : cur == prim[0] ? "primary@0" : "other");
	return 0;
}
