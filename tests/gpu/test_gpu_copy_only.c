// SPDX-License-Identifier: MIT
/*
 * Copy-only pins on a real GPU (lib/paths/copy_only_pins.h), where the backend
 * is a module-free one: cuMemAlloc memory allocated in the primary context and
 * in a context of the test's own, VMM memory without a POSIX fd handle
 * type, and the 64 KiB window UCX pins around a 16-byte buffer, each
 * pinned, mapped and copied both ways at several sizes (poisoned, every
 * byte checked against cuMemcpy); a load through the pointer faults; a
 * kernel spinning on the legacy default stream, waiting for the CPU to
 * write a flag into copy-only memory, is not waited for (the copy runs
 * on a stream of its own) and its counter reads fresh.
 * On every GPU, from every kind of current context (gpu.h).  On GPU 0,
 * from its primary context, it also prints the latency of 8-byte copies
 * next to the DMA floor measured the same way in the same run.
 */
#include <signal.h>
#include <time.h>

#include "faults.h"
#include "gpu.h"
#include "kernels.h"

#define LAT_ITERS	2000

#define VMM_SIZE	(2UL << 20)

/* 2 MiB of VMM memory on dev with no shareable handle type, or 0. */
static CUdeviceptr vmm_nofd(int dev)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
	CUmemAccessDesc access = {
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	CUdeviceptr p = 0;

	if (!cu.MemCreate || !cu.MemSetAccess)
		return 0;
	CU_ON(dev, cu.MemCreate(&h, VMM_SIZE, &prop, 0));
	CU_ON(dev, cu.MemAddressReserve(&p, VMM_SIZE, 0, 0, 0));
	CU_ON(dev, cu.MemMap(p, VMM_SIZE, 0, h, 0));
	CU_ON(dev, cu.MemSetAccess(p, VMM_SIZE, &access, 1));
	CU_ON(dev, cu.MemRelease(h));
	return p;
}

static void vmm_free(int dev, CUdeviceptr p)
{
	CU_ON(dev, cu.MemUnmap(p, VMM_SIZE));
	CU_ON(dev, cu.MemAddressFree(p, VMM_SIZE));
}

static unsigned int seed = 4242;

/*
 * Pin the window [start, +win) of GPU dev, check it is copy-only, and
 * copy n bytes at gpu (inside it) both ways, poison around them.
 */
static void window(const struct gpu_case *c, const char *what,
		   CUdeviceptr start, size_t win, CUdeviceptr gpu, size_t n)
{
	unsigned char *data = malloc(n + 64), *back = malloc(n + 64);
	unsigned char *seen = malloc(n + 64);
	gdr_info_t info;
	gdr_mh_t mh;
	char *va = NULL, *p;
	void *other;
	long bad;

	if (!data || !back || !seen)
		abort();
	LIB(gdr_pin_buffer(c->g, start, win, 0, 0, &mh), 0);
	LIB(gdr_map(c->g, mh, (void **)&va, win), 0);
	LIB(gdr_get_info(c->g, mh, &info), 0);
	CHECK(info.mapping_type == GDR_MAPPING_TYPE_NONE && !info.mapped,
	      "%s: pinned copy-only (mapping type %d)", what,
	      info.mapping_type);
	if (!va)
		goto out;
	p = va + (gpu - info.va);

	fill_random(data, n, &seed);
	memset(seen, 0xA5, n);
	/* From pageable memory, cuMemcpyHtoD may return before its DMA
	 * lands, and a copy-only copy is not ordered after it. */
	CU_ON(c->dev, cu.MemcpyHtoD(gpu, seen, n));
	CU_ON(c->dev, cu.CtxSynchronize());
	LIB(gdr_copy_to_mapping(mh, p, data, n), 0);
	CU_ON(c->dev, cu.MemcpyDtoH(seen, gpu, n));
	bad = first_diff(seen, data, n);
	CHECK(bad < 0, "%s, %s: write of %zu bytes: byte %ld wrong", what,
	      gpu_start_names[c->start], n, bad);

	fill_random(data, n, &seed);
	CU_ON(c->dev, cu.MemcpyHtoD(gpu, data, n));
	CU_ON(c->dev, cu.CtxSynchronize());
	memset(back, 0xA5, n + 2);
	LIB(gdr_copy_from_mapping(mh, back + 1, p, n), 0);
	bad = first_diff(back + 1, data, n);
	CHECK(bad < 0 && back[0] == 0xA5 && back[n + 1] == 0xA5,
	      "%s, %s: read of %zu bytes: byte %ld wrong", what,
	      gpu_start_names[c->start], n, bad);

	if (n == 8) {
		CHECK(load_faults(p), "%s: a load through the pointer faults",
		      what);
		LIB(gdr_unmap(c->g, mh, va, win), 0);
		LIB(gdr_map_v2(c->g, mh, &other, win,
			       GDR_MAP_FLAG_REQ_WC_MAPPING), EOPNOTSUPP);
		LIB(gdr_map(c->g, mh, (void **)&va, win), 0);
	}
	LIB(gdr_unmap(c->g, mh, va, win), 0);
out:
	LIB(gdr_unpin_buffer(c->g, mh), 0);
	free(data);
	free(back);
	free(seen);
}

/* A kernel on the legacy default stream counts until the CPU writes the
 * stop flag into copy-only memory: neither the reads nor the write wait
 * for it. */
static void spinning_kernel(const struct gpu_case *c, CUdeviceptr mem)
{
	uint64_t prev = 0, now;
	uint32_t stop = 0;
	CUdeviceptr dcounter = mem, dstop = mem + 1024;
	CUmodule mod;
	CUfunction fn;
	void *args[2] = { &dcounter, &dstop };
	gdr_info_t info;
	gdr_mh_t mh;
	char *va = NULL, *counter;
	int i, backwards = 0, moved = 0;

	CU_ON(c->dev, cu.MemsetD32(mem, 0, 512));
	LIB(gdr_pin_buffer(c->g, mem, 4096, 0, 0, &mh), 0);
	LIB(gdr_map(c->g, mh, (void **)&va, 4096), 0);
	LIB(gdr_get_info(c->g, mh, &info), 0);
	if (!va)
		return;
	counter = va + (mem - info.va);
	CU_ON(c->dev, cu.ModuleLoadData(&mod, test_kernels_ptx));
	CU_ON(c->dev, cu.ModuleGetFunction(&fn, mod, "count_until_stop"));
	CU_ON(c->dev, cu.LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, args,
				      NULL));
	for (i = 0; i < 2000; i++) {
		LIB(gdr_copy_from_mapping(mh, &now, counter, 8), 0);
		backwards += now < prev;
		moved += now != prev;
		prev = now;
	}
	CHECK(moved > 100 && backwards == 0,
	      "the counter moved %d times in 2000 copy-only reads, %d backwards",
	      moved, backwards);
	stop = 1;
	LIB(gdr_copy_to_mapping(mh, counter + 1024, &stop, sizeof(stop)), 0);
	CU_ON(c->dev, cu.CtxSynchronize());
	CU_ON(c->dev, cu.ModuleUnload(mod));
	LIB(gdr_unmap(c->g, mh, va, 4096), 0);
	LIB(gdr_unpin_buffer(c->g, mh), 0);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* 8-byte copies: copy-only against bare DMA on a non-blocking stream
 * (pageable and pinned host memory), in the same process. */
static void latency(const struct gpu_case *c, CUdeviceptr mem)
{
	static double t[4][LAT_ITERS];
	CUstream st;
	gdr_info_t info;
	gdr_mh_t mh;
	uint64_t v = 0x0123456789abcdefULL, *pinned = NULL;
	char *va = NULL, *p;
	double t0;
	int i;

	if (!cu.MemcpyDtoHAsync || !cu.StreamCreate)
		return;
	LIB(gdr_pin_buffer(c->g, mem, 8, 0, 0, &mh), 0);
	LIB(gdr_map(c->g, mh, (void **)&va, 8), 0);
	LIB(gdr_get_info(c->g, mh, &info), 0);
	if (!va)
		return;
	p = va + (mem - info.va);
	CU_OK(cu.StreamCreate(&st, 1 /* CU_STREAM_NON_BLOCKING */));
	CU_OK(cu.MemAllocHost((void **)&pinned, 8));
	for (i = 0; i < LAT_ITERS; i++) {
		t0 = now_us();
		gdr_copy_to_mapping(mh, p, &v, 8);
		t[0][i] = now_us() - t0;
		t0 = now_us();
		gdr_copy_from_mapping(mh, &v, p, 8);
		t[1][i] = now_us() - t0;
		t0 = now_us();
		cu.MemcpyHtoDAsync(mem, &v, 8, st);
		cu.StreamSynchronize(st);
		t[2][i] = now_us() - t0;
		t0 = now_us();
		cu.MemcpyDtoHAsync(&v, mem, 8, st);
		cu.StreamSynchronize(st);
		t[3][i] = now_us() - t0;
	}
	printf("8-byte copies, p50 of %d (us): copy-only write %.2f, read %.2f; bare cuMemcpyHtoDAsync+sync %.2f, cuMemcpyDtoHAsync+sync %.2f (pageable)\n",
	       LAT_ITERS, median(t[0], LAT_ITERS), median(t[1], LAT_ITERS),
	       median(t[2], LAT_ITERS), median(t[3], LAT_ITERS));
	for (i = 0; i < LAT_ITERS; i++) {
		t0 = now_us();
		cu.MemcpyHtoDAsync(mem, pinned, 8, st);
		cu.StreamSynchronize(st);
		t[2][i] = now_us() - t0;
		t0 = now_us();
		cu.MemcpyDtoHAsync(pinned, mem, 8, st);
		cu.StreamSynchronize(st);
		t[3][i] = now_us() - t0;
	}
	printf("8-byte copies, p50 of %d (us): bare cuMemcpyHtoDAsync+sync %.2f, cuMemcpyDtoHAsync+sync %.2f (pinned)\n",
	       LAT_ITERS, median(t[2], LAT_ITERS), median(t[3], LAT_ITERS));
	cu.MemFreeHost(pinned);
	cu.StreamDestroy(st);
	LIB(gdr_unmap(c->g, mh, va, 8), 0);
	LIB(gdr_unpin_buffer(c->g, mh), 0);
}

static void one_case(const struct gpu_case *c)
{
	static const size_t sizes[] = { 1, 8, 4096, 65536, 300000 };
	CUdeviceptr prim, user, small[3], nofd;
	CUcontext popped;
	int backend = 0, i;
	char what[64];

	gdr_get_attribute(c->g, GDRMAP_ATTR_BACKEND, &backend);
	if (backend != GDRMAP_BACKEND_VULKAN) {
		SKIP("only the vulkan backend pins memory copy-only (this is %d)",
		     backend);
		return;
	}
	CU_ON(c->dev, cu.MemAlloc(&prim, 1 << 20));
	CU_OK(cu.CtxPushCurrent(cu.user[c->dev]));
	CU_OK(cu.MemAlloc(&user, 1 << 20));
	CU_OK(cu.CtxPopCurrent(&popped));
	for (i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++) {
		size_t n = sizes[i], off = 1000 + (size_t)i * 7;

		window(c, "cuMemAlloc, primary context", prim + off, n, prim + off,
		       n);
		window(c, "cuMemAlloc, the test's context", user + off, n,
		       user + off, n);
	}
	/* UCX: 16-byte buffers, the middle one pinned as its 64 KiB window. */
	for (i = 0; i < 3; i++)
		CU_ON(c->dev, cu.MemAlloc(&small[i], 16));
	snprintf(what, sizeof(what), "64 KiB window around a 16-byte buffer");
	window(c, what, small[1] & GPU_PAGE_MASK, GPU_PAGE_SIZE, small[1], 16);

	nofd = vmm_nofd(c->dev);
	if (nofd)
		window(c, "cuMemCreate without a POSIX fd", nofd + 5, 4000,
		       nofd + 5, 4000);
	else
		SKIP("no cuMemCreate here");

	if (gpu_has_kernels())
		spinning_kernel(c, prim + (512 << 10));
	else
		SKIP("this libcuda runs no kernels");
	if (c->dev == 0 && c->start == START_PRIMARY)
		latency(c, prim);

	if (nofd)
		vmm_free(c->dev, nofd);
	for (i = 0; i < 3; i++)
		CU_ON(c->dev, cu.MemFree(small[i]));
	CU_ON(c->dev, cu.MemFree(prim));
	CU_OK(cu.CtxPushCurrent(cu.user[c->dev]));
	CU_OK(cu.MemFree(user));
	CU_OK(cu.CtxPopCurrent(&popped));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	/* The backend that pins copy-only: gdrdrv and rm map every kind of
	 * memory.  An environment that names a backend is kept. */
	setenv("GDRMAP_BACKEND", "vulkan", 0);
	return gpu_run(one_case);
}
