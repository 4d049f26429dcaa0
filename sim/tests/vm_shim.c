// SPDX-License-Identifier: MIT
/*
 * The simulated GPU through its libcuda shim (inside the VM, nvsim.ko
 * loaded): device queries, cuMemAlloc placement, copies and memsets at
 * every offset that matters, pointer attributes, VMM, contexts owning
 * memory, out-of-memory, and nothing left behind.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "vm_sim.h"

/* Device queries of one device. */
static void check_one_device(int d)
{
	char name[128], bus[32];
	CUuuid u1, u2;
	int v;
	size_t total;

	CU_OK(cuDeviceGetName(name, sizeof(name), d));
	CHECK(strstr(name, "simulated") && strstr(name, "not real hardware"),
	      "name '%s'", name);
	CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED, d));
	CHECK(v == 1, "RDMA %d", v);
	CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, d));
	CHECK(v == 1, "UVA %d", v);
	CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, d));
	CHECK(v == 0, "dma-buf %d", v);
	CU_OK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d));
	CHECK(v == 1, "VMM %d", v);
	CU_IS(cuDeviceGetAttribute(&v, -1, d), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuDeviceGetAttribute(NULL, 1, d), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuDeviceGetUuid(&u1, d));
	CU_OK(cuDeviceGetUuid_v2(&u2, d));
	CHECK(!memcmp(&u1, &u2, sizeof(u1)), "uuids differ");
	CU_OK(cuDeviceTotalMem(&total, d));
	CHECK(total >= SIM_MIB && !(total % SIM_PAGE), "total %zu", total);
	CHECK(nvsim_gpu_count(d, "used_pages") >= 0,
	      "no /proc/driver/nvsim/gpu%d", d);
	CU_OK(cuDeviceGetPCIBusId(bus, sizeof(bus), d));
	CHECK(strlen(bus) == 16 && bus[8] == ':', "bus id '%s'", bus);
}

/* Every device, each with its own UUID and PCI address. */
static void check_device(void)
{
	char bus0[32], bus[32], name[64];
	CUuuid u0, u;
	CUdevice dev;
	int n, d;

	CU_OK(cuDeviceGetCount(&n));
	CHECK(n >= 1 && n <= NVSIM_MAX_DEVICES, "%d devices", n);
	for (d = 0; d < n; d++) {
		CU_OK(cuDeviceGet(&dev, d));
		CHECK(dev == d, "cuDeviceGet(%d) gives %d", d, dev);
		check_one_device(d);
	}
	CU_IS(cuDeviceGet(&dev, n), CUDA_ERROR_INVALID_DEVICE);
	CU_IS(cuDeviceGet(&dev, -1), CUDA_ERROR_INVALID_DEVICE);
	CU_IS(cuDeviceGetName(name, sizeof(name), n), CUDA_ERROR_INVALID_DEVICE);
	CU_IS(cuDeviceGetUuid(&u, n), CUDA_ERROR_INVALID_DEVICE);
	CU_OK(cuDeviceGetUuid(&u0, 0));
	CU_OK(cuDeviceGetPCIBusId(bus0, sizeof(bus0), 0));
	for (d = 1; d < n; d++) {
		CU_OK(cuDeviceGetUuid(&u, d));
		CHECK(memcmp(&u, &u0, sizeof(u)), "devices 0 and %d: one UUID", d);
		CU_OK(cuDeviceGetPCIBusId(bus, sizeof(bus), d));
		CHECK(strcmp(bus, bus0), "devices 0 and %d: one bus id %s", d, bus);
	}
}

static void check_alloc_placement(void)
{
	CUdeviceptr d, d2, base;
	size_t size;
	unsigned long long id1, id2;
	unsigned int type;

	/* Small: sub-allocated, not 64 KiB aligned (as on the H200). */
	CU_OK(cuMemAlloc(&d, 100));
	CHECK(d % SIM_PAGE == 0x200, "small allocation at %#llx", d);
	CU_OK(cuMemGetAddressRange(&base, &size, d + 50));
	CHECK(base == d && size == 100, "range %#llx+%zu", base, size);
	CU_IS(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				    d - 0x200), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemGetAddressRange(&base, &size, d + 100), CUDA_ERROR_NOT_FOUND);
	CU_IS(cuMemFree(d + 4), CUDA_ERROR_INVALID_VALUE);

	/* 64 KiB and up: aligned; 2 MiB and up: 2 MiB aligned. */
	CU_OK(cuMemAlloc(&d2, SIM_PAGE));
	CHECK(d2 % SIM_PAGE == 0, "64 KiB allocation at %#llx", d2);
	CU_OK(cuPointerGetAttribute(&id1, CU_POINTER_ATTRIBUTE_BUFFER_ID, d));
	CU_OK(cuPointerGetAttribute(&id2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d2));
	CHECK(id1 && id2 && id1 != id2, "buffer ids %llu %llu", id1, id2);
	CU_OK(cuMemFree(d));
	CU_OK(cuMemFree(d2));
	CU_IS(cuMemFree(d2), CUDA_ERROR_INVALID_VALUE);

	CU_OK(cuMemAlloc(&d, 3 * SIM_MIB));
	CHECK(d % (2 * SIM_MIB) == 0, "3 MiB allocation at %#llx", d);
	CU_OK(cuMemFree(d));
	CU_IS(cuMemAlloc(&d, 0), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemAlloc(&d, (size_t)1 << 62), CUDA_ERROR_OUT_OF_MEMORY);
}

/* Copies at offsets around 64 KiB pages, read back at the same offsets. */
static void check_copies(void)
{
	const size_t len = 5 * SIM_PAGE + 123;
	static const size_t offs[] = { 0, 1, 7, 4095, SIM_PAGE - 1, SIM_PAGE,
				       SIM_PAGE + 3, 3 * SIM_PAGE - 100 };
	uint8_t *h = malloc(len), *g = malloc(len);
	CUdeviceptr d, d2;
	size_t i, n;
	uint32_t w;

	REQUIRE(h && g, "malloc");
	CU_OK(cuMemAlloc(&d, len));
	CU_OK(cuMemAlloc(&d2, len));
	sim_fill(h, len, 0, 1);
	CU_OK(cuMemcpyHtoD(d, h, len));
	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		n = len - offs[i];
		memset(g, 0, len);
		CU_OK(cuMemcpyDtoH(g, d + offs[i], n));
		CHECK(sim_mismatch(g, n, offs[i], 1) < 0,
		      "DtoH at offset %zu differs at %ld", offs[i],
		      sim_mismatch(g, n, offs[i], 1));
	}
	/* Partial overwrite in the middle, across a page boundary. */
	sim_fill(h, 1000, SIM_PAGE - 500, 2);
	CU_OK(cuMemcpyHtoD(d + SIM_PAGE - 500, h, 1000));
	CU_OK(cuMemcpyDtoH(g, d, len));
	CHECK(sim_mismatch(g, SIM_PAGE - 500, 0, 1) < 0, "before the write");
	CHECK(sim_mismatch(g + SIM_PAGE - 500, 1000, SIM_PAGE - 500, 2) < 0,
	      "the write");
	CHECK(sim_mismatch(g + SIM_PAGE + 500, len - SIM_PAGE - 500,
			   SIM_PAGE + 500, 1) < 0, "after the write");

	/* Device to device, and UVA cuMemcpy in every direction. */
	sim_fill(h, len, 0, 3);
	CU_OK(cuMemcpy(d, (CUdeviceptr)(uintptr_t)h, len));
	CU_OK(cuMemcpyDtoD(d2, d, len));
	memset(g, 0, len);
	CU_OK(cuMemcpy((CUdeviceptr)(uintptr_t)g, d2, len));
	CHECK(sim_mismatch(g, len, 0, 3) < 0, "DtoD/UVA round trip");
	/* Overlapping device copy behaves as memmove, both directions. */
	CU_OK(cuMemcpy(d + 1000, d, 3 * SIM_PAGE));
	CU_OK(cuMemcpyDtoH(g, d + 1000, 3 * SIM_PAGE));
	CHECK(sim_mismatch(g, 3 * SIM_PAGE, 0, 3) < 0, "overlap upward");
	CU_OK(cuMemcpy(d, d + 1000, 3 * SIM_PAGE));
	CU_OK(cuMemcpyDtoH(g, d, 3 * SIM_PAGE));
	CHECK(sim_mismatch(g, 3 * SIM_PAGE, 0, 3) < 0, "overlap downward");

	/* Memsets. */
	CU_OK(cuMemsetD8(d + 3, 0xab, SIM_PAGE + 10));
	CU_OK(cuMemcpyDtoH(g, d, SIM_PAGE + 20));
	CHECK(g[2] == sim_pattern(2, 3) && g[3] == 0xab &&
	      g[SIM_PAGE + 12] == 0xab && g[SIM_PAGE + 13] != 0xab,
	      "cuMemsetD8 bounds");
	CU_OK(cuMemsetD32(d + 4, 0x11223344, 2 * SIM_PAGE / 4));
	CU_OK(cuMemcpyDtoH(&w, d + 2 * SIM_PAGE, 4));
	CHECK(w == 0x11223344, "cuMemsetD32 %#x", w);
	CU_IS(cuMemsetD32(d + 2, 0, 4), CUDA_ERROR_INVALID_VALUE);

	/* Out of range: errors, never a crash. */
	CU_IS(cuMemcpyDtoH(g, d + len - 10, 64 * 1024),
	      CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemcpyHtoD(d, NULL, 10), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemcpyDtoH((void *)8, d, 10), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemsetD8(d + len - 1, 0, 2 * SIM_PAGE),
	      CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemcpyDtoD(d2, d, 6 * SIM_PAGE), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemcpyDtoD(d2, d, len + 1), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemcpy(d2 + len, (CUdeviceptr)(uintptr_t)g, 1),
	      CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemFree(d));
	CU_OK(cuMemFree(d2));
	free(h);
	free(g);
}

static void check_pointer_attributes(CUcontext ctx)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tok;
	unsigned int type = 0, flag = 7;
	CUdeviceptr d, start = 0;
	CUcontext c = NULL;
	size_t size = 0;
	int ord = -1, stackvar = 0;
	void *hp;
	CUpointer_attribute attrs[3] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
					 CU_POINTER_ATTRIBUTE_CONTEXT,
					 CU_POINTER_ATTRIBUTE_RANGE_SIZE };
	void *data[3] = { &type, &c, &size };

	CU_OK(cuMemAlloc(&d, 2 * SIM_PAGE));
	CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 5));
	CHECK(type == CU_MEMORYTYPE_DEVICE, "type %u", type);
	CU_OK(cuPointerGetAttribute(&c, CU_POINTER_ATTRIBUTE_CONTEXT, d));
	CHECK(c == ctx, "context");
	CU_OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
	CHECK(ord == 0, "ordinal %d", ord);
	CU_OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 77));
	CU_OK(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d + 77));
	CHECK(start == d && size == 2 * SIM_PAGE, "range %#llx+%zu", start, size);
	CU_OK(cuPointerGetAttribute(&flag, CU_POINTER_ATTRIBUTE_IS_MANAGED, d));
	CHECK(flag == 0, "managed %u", flag);
	CU_OK(cuPointerGetAttribute(&flag, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, d));
	CHECK(flag == 1, "rdma capable %u", flag);
	CU_OK(cuPointerGetAttribute(&flag, CU_POINTER_ATTRIBUTE_MAPPED, d));
	CHECK(flag == 1, "mapped %u", flag);
	CU_OK(cuPointerGetAttribute(&tok, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d));
	CHECK(tok.p2pToken && tok.vaSpaceToken, "tokens");
	flag = 1;
	CU_OK(cuPointerSetAttribute(&flag, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
	CU_IS(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, d),
	      CUDA_ERROR_INVALID_VALUE);

	/* Not CUDA memory. */
	CU_IS(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				    (CUdeviceptr)(uintptr_t)&stackvar),
	      CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0),
	      CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuPointerGetAttribute(&type, 9999, d), CUDA_ERROR_INVALID_VALUE);
	type = 5;
	c = (CUcontext)&stackvar;
	CU_OK(cuPointerGetAttributes(3, attrs, data, (CUdeviceptr)(uintptr_t)&stackvar));
	CHECK(type == 0 && c == NULL && size == 0, "attributes of host stack");
	CU_OK(cuPointerGetAttributes(3, attrs, data, d));
	CHECK(type == CU_MEMORYTYPE_DEVICE && c == ctx && size == 2 * SIM_PAGE,
	      "attributes of device memory");

	/* Host memory from cuMemAllocHost. */
	CU_OK(cuMemAllocHost(&hp, 1000));
	memset(hp, 1, 1000);
	CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				    (CUdeviceptr)(uintptr_t)hp + 10));
	CHECK(type == CU_MEMORYTYPE_HOST, "host type %u", type);
	CU_OK(cuMemcpyHtoD(d, hp, 1000));
	CU_OK(cuMemFreeHost(hp));
	CU_IS(cuMemFreeHost(hp), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemFree(d));
	CU_IS(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d),
	      CUDA_ERROR_INVALID_VALUE);
}

static void check_managed(void)
{
	unsigned int flag = 0, type = 0;
	CUdeviceptr d, base;
	size_t size;
	uint8_t *p;

	CU_IS(cuMemAllocManaged(&d, 4096, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemAllocManaged(&d, 10000, CU_MEM_ATTACH_GLOBAL));
	p = (uint8_t *)(uintptr_t)d;
	p[9999] = 7;	/* CPU accessible */
	CU_OK(cuPointerGetAttribute(&flag, CU_POINTER_ATTRIBUTE_IS_MANAGED, d + 5));
	CHECK(flag == 1, "IS_MANAGED %u", flag);
	CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d));
	CHECK(type == CU_MEMORYTYPE_DEVICE, "managed type %u", type);
	CU_OK(cuPointerGetAttribute(&flag, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, d));
	CHECK(flag == 0, "managed memory RDMA capable");
	CU_OK(cuMemGetAddressRange(&base, &size, d + 9000));
	CHECK(base == d && size == 10000, "managed range");
	CU_OK(cuMemsetD32(d, 0x01020304, 4));
	CHECK(p[0] == 4 && p[3] == 1 && p[15] == 1 && p[16] == 0,
	      "managed memset");
	CU_OK(cuMemcpyHtoD(d + 100, "abc", 3));
	CHECK(!memcmp(p + 100, "abc", 3), "managed HtoD");
	CU_OK(cuMemFree(d));
}

static void check_vmm(void)
{
	CUmemAllocationProp prop = { 0 }, got;
	CUmemAccessDesc acc = { 0 };
	CUmemGenericAllocationHandle h, h2;
	CUdeviceptr va, base, start;
	size_t gran = 0, size, rsize;
	uint8_t buf[256];
	unsigned int flag;
	long allocs0 = nvsim_count("allocations");
	int fd;

	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	prop.allocFlags.gpuDirectRDMACapable = 1;
	CU_OK(cuMemGetAllocationGranularity(&gran, &prop,
					    CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	CHECK(gran == 2 * SIM_MIB, "granularity %zu", gran);
	CU_IS(cuMemCreate(&h, gran / 2, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemCreate(&h, 2 * gran, &prop, 0));
	CU_OK(cuMemAddressReserve(&va, 4 * gran, 0, 0, 0));
	CHECK(va % gran == 0, "reservation %#llx", va);
	CU_IS(cuMemMap(va + gran, 2 * gran, 0, h + 1000, 0),
	      CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemMap(va + gran, 2 * gran, 0, h, 0));
	CU_IS(cuMemMap(va + gran, gran, 0, h, 0), CUDA_ERROR_ALREADY_MAPPED);
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CU_OK(cuMemSetAccess(va + gran, 2 * gran, &acc, 1));
	CU_IS(cuMemSetAccess(va, 2 * gran, &acc, 1), CUDA_ERROR_INVALID_VALUE);
	CHECK(nvsim_count("allocations") == allocs0 + 1, "allocations");

	sim_fill(buf, sizeof(buf), 0, 9);
	CU_OK(cuMemcpyHtoD(va + gran + 5, buf, sizeof(buf)));
	memset(buf, 0, sizeof(buf));
	CU_OK(cuMemcpyDtoH(buf, va + gran + 5, sizeof(buf)));
	CHECK(sim_mismatch(buf, sizeof(buf), 0, 9) < 0, "VMM round trip");

	CU_OK(cuMemGetAddressRange(&base, &size, va + gran + 100));
	CHECK(base == va + gran && size == 2 * gran, "mapped range");
	CU_OK(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + gran));
	CU_OK(cuPointerGetAttribute(&rsize, CU_POINTER_ATTRIBUTE_RANGE_SIZE, va + gran));
	CHECK(start == va && rsize == 4 * gran, "reserved range");
	CU_OK(cuPointerGetAttribute(&flag, CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE, va + gran));
	CHECK(flag == 1, "VMM rdma capable");

	CU_OK(cuMemRetainAllocationHandle(&h2, (void *)(uintptr_t)(va + gran + 7)));
	CHECK(h2 == h, "retained handle %llu, want %llu", h2, h);
	CU_OK(cuMemGetAllocationPropertiesFromHandle(&got, h2));
	CHECK(got.type == prop.type && got.location.id == 0 &&
	      got.allocFlags.gpuDirectRDMACapable == 1, "properties");
	CU_IS(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
	      CUDA_ERROR_NOT_SUPPORTED);
	CU_OK(cuMemRelease(h2));
	CU_OK(cuMemRelease(h));
	/* Still mapped, so still there. */
	CU_OK(cuMemcpyDtoH(buf, va + gran + 5, sizeof(buf)));
	CHECK(sim_mismatch(buf, sizeof(buf), 0, 9) < 0, "after release");
	CU_IS(cuMemUnmap(va + gran, gran), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemUnmap(va + gran, 2 * gran));
	CU_IS(cuMemUnmap(va + gran, 2 * gran), CUDA_ERROR_INVALID_VALUE);
	CU_IS(cuMemAddressFree(va, gran), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuMemAddressFree(va, 4 * gran));
	CHECK(nvsim_count("allocations") == allocs0, "allocations after");
}

static void check_contexts(CUcontext primary)
{
	long allocs0 = nvsim_count("allocations");
	CUcontext c, cur;
	CUdeviceptr d;
	CUdevice dev;

	CU_OK(cuCtxCreate(&c, 0, 0));
	CU_OK(cuCtxGetCurrent(&cur));
	CHECK(cur == c, "created context is current");
	CU_OK(cuCtxGetDevice(&dev));
	CU_OK(cuMemAlloc(&d, SIM_PAGE));
	CU_OK(cuMemAlloc(&d, 3 * SIM_PAGE));
	CHECK(nvsim_count("allocations") == allocs0 + 2, "allocations");
	CU_OK(cuCtxDestroy(c));
	CHECK(nvsim_count("allocations") == allocs0,
	      "context destruction freed %ld of 2",
	      allocs0 + 2 - nvsim_count("allocations"));
	/* cuCtxCreate pushed it: destroying it makes the previous current. */
	CU_OK(cuCtxGetCurrent(&cur));
	CHECK(cur == primary, "destroyed context: the previous is not current");
	CU_IS(cuCtxDestroy(c), CUDA_ERROR_INVALID_CONTEXT);
	CU_OK(cuCtxSetCurrent(NULL));
	CU_IS(cuMemAlloc(&d, SIM_PAGE), CUDA_ERROR_INVALID_CONTEXT);
	CU_IS(cuCtxSetCurrent(c), CUDA_ERROR_INVALID_CONTEXT);
	CU_OK(cuCtxCreate_v4(&c, NULL, 0, 0));
	CU_OK(cuCtxDestroy(c));
	CU_OK(cuCtxSetCurrent(primary));
}

/*
 * Exhaust device 0: out of memory there, while another device's memory
 * is its own and still there to allocate.
 */
static void check_out_of_memory(void)
{
	long used0 = nvsim_gpu_count(0, "used_pages");
	CUdeviceptr d[4096], other;
	CUcontext c0, c1;
	size_t total, n = 0, chunk = 4 * SIM_MIB;
	CUresult r = CUDA_SUCCESS;

	CU_OK(cuDeviceTotalMem(&total, 0));
	while (n < sizeof(d) / sizeof(d[0])) {
		r = cuMemAlloc(&d[n], chunk);
		if (r != CUDA_SUCCESS)
			break;
		n++;
	}
	CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "exhaustion gives %d", r);
	CHECK(n * chunk <= total - used0 * SIM_PAGE &&
	      (n + 1) * chunk > total - used0 * SIM_PAGE,
	      "%zu chunks of %zu in %zu", n, chunk, total);
	if (gpu_count() > 1) {
		CU_OK(cuCtxGetCurrent(&c0));
		c1 = gpu_primary(1);
		CU_OK(cuCtxSetCurrent(c1));
		CU_OK(cuMemAlloc(&other, chunk));
		CHECK(nvsim_gpu_count(1, "used_pages") >= (long)(chunk / SIM_PAGE),
		      "device 1 used_pages %ld", nvsim_gpu_count(1, "used_pages"));
		CU_OK(cuMemFree(other));
		CU_OK(cuCtxSetCurrent(c0));
		CU_OK(cuDevicePrimaryCtxRelease(1));
	}
	while (n)
		CU_OK(cuMemFree(d[--n]));
	CHECK(nvsim_gpu_count(0, "used_pages") == used0, "used_pages %ld, was %ld",
	      nvsim_gpu_count(0, "used_pages"), used0);
}

/* A process that exits with memory allocated leaves nothing behind. */
static void check_exit_frees(void)
{
	long used0 = nvsim_count("used_pages"), allocs0 = nvsim_count("allocations");
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		CUdeviceptr d;

		/* The parent's fd is not this process's: a fresh start fails
		 * cleanly rather than touching the parent's memory. */
		if (cuMemAlloc(&d, SIM_PAGE) == CUDA_SUCCESS)
			_exit(3);
		_exit(0);
	}
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/wait");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "forked child could allocate with the parent's fd: %#x", status);

	pid = fork();
	if (pid == 0) {
		char *argv[] = { "/proc/self/exe", "--alloc-and-exit", NULL };

		execv(argv[0], argv);
		_exit(4);
	}
	REQUIRE(pid > 0 && waitpid(pid, &status, 0) == pid, "fork/wait");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %#x",
	      status);
	CHECK(nvsim_count("used_pages") == used0 &&
	      nvsim_count("allocations") == allocs0,
	      "after exit: used_pages %ld (was %ld), allocations %ld (was %ld)",
	      nvsim_count("used_pages"), used0, nvsim_count("allocations"),
	      allocs0);
}

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUdeviceptr d;

	if (argc > 1 && !strcmp(argv[1], "--alloc-and-exit")) {
		sim_cuda_init();
		CU_OK(cuMemAlloc(&d, 5 * SIM_PAGE));
		CU_OK(cuMemAlloc(&d, 100));
		return 0;	/* without freeing */
	}

	ctx = sim_cuda_init();
	check_device();
	check_alloc_placement();
	check_copies();
	check_pointer_attributes(ctx);
	check_managed();
	check_vmm();
	check_contexts(ctx);
	check_out_of_memory();
	check_exit_frees();
	return test_done();
}
