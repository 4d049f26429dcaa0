// SPDX-License-Identifier: MIT
/*
 * Copy-only pins (lib/paths/copy_only_pins.h) on a fake CUDA of several
 * devices: the memory the module-free backends cannot map (under the vulkan
 * backend cuMemAlloc memory, VMM memory without a POSIX fd handle type, a
 * window that runs past its allocation; under both, the 64 KiB window UCX pins
 * around a small buffer whose ends fall between allocations) pins, maps
 * and copies both ways, byte for byte, from every starting context, by
 * DMA on a non-blocking stream of the memory's own context; a load
 * through the pointer faults; gdr_get_info says there is no CPU mapping;
 * what is not GPU memory is still refused, with the reason; and
 * GDRMAP_COPY_ONLY=0 refuses as before.
 */
#include <pthread.h>
#include <signal.h>

#include "fake_vulkan.h"
#include "faults.h"
#include "owner_pins.h"

/* Pinned and mapped [addr, +size): the handle and the pointer to addr. */
static char *pin_map(gdr_t g, CUdeviceptr addr, size_t size, gdr_mh_t *mh,
		     char **base)
{
	gdr_info_t info;

	*base = NULL;
	LIB(gdr_pin_buffer(g, addr, size, 0, 0, mh), 0);
	LIB(gdr_map(g, *mh, (void **)base, size), 0);
	LIB(gdr_get_info(g, *mh, &info), 0);
	CHECK(info.mapping_type == GDR_MAPPING_TYPE_NONE && !info.mapped &&
	      !info.wc_mapping,
	      "a copy-only pin has no CPU mapping (type %d, mapped %d)",
	      info.mapping_type, info.mapped);
	CHECK(info.va == (addr & GPU_PAGE_MASK) && info.mapped_size >= size,
	      "info covers the 64 KiB window (va 0x%llx, size %llu)",
	      (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size);
	return *base ? *base + (addr - info.va) : NULL;
}

static void unmap_unpin(gdr_t g, gdr_mh_t mh, char *base, size_t size)
{
	LIB(gdr_unmap(g, mh, base, size), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
}

/* Write n bytes at p (GPU address gpu), read them back, each checked
 * against the GPU's view with poison around. */
static void copy_both_ways(gdr_mh_t mh, char *p, CUdeviceptr gpu, size_t n,
			   unsigned int seed)
{
	unsigned char *data = malloc(n), *back = malloc(n + 2);
	unsigned char *view = malloc(n);
	size_t i;
	int bad = 0;

	if (!data || !back || !view) {
		CHECK(0, "out of memory");
		goto out;
	}
	memset(view, POISON, n);
	CHECK(fake_gpu_rw(gpu, view, n, 1) == 0, "poison the GPU side");
	pattern(data, n, seed);
	LIB(gdr_copy_to_mapping(mh, p, data, n), 0);
	CHECK(fake_gpu_rw(gpu, view, n, 0) == 0, "read the GPU side");
	for (i = 0; i < n; i++)
		bad += view[i] != data[i];
	CHECK(bad == 0, "%d of %zu bytes wrong after a copy-only write", bad,
	      n);

	pattern(data, n, seed + 1);
	CHECK(fake_gpu_rw(gpu, data, n, 1) == 0, "write the GPU side");
	memset(back, POISON, n + 2);
	LIB(gdr_copy_from_mapping(mh, back + 1, p, n), 0);
	bad = back[0] != POISON || back[n + 1] != POISON;
	for (i = 0; i < n; i++)
		bad += back[i + 1] != data[i];
	CHECK(bad == 0, "%d of %zu bytes wrong after a copy-only read", bad,
	      n);
out:
	free(data);
	free(back);
	free(view);
}

/* The 64 KiB window UCX pins around a 16-byte buffer, whose ends fall
 * between allocations: accepted, and the buffer copies both ways. */
static void ucx_window(gdr_t g, int dev, CUdeviceptr small)
{
	CUdeviceptr start = small - GPU_PAGE_SIZE;
	size_t size = 3 * GPU_PAGE_SIZE;
	struct gdr_cuda_ptr a, b;
	gdr_mh_t mh;
	char *base, *p;

	gdr_cuda_pointer(start, &a);
	gdr_cuda_pointer(start + size - 1, &b);
	CHECK(a.dev < 0 && b.dev < 0, "CUDA knows neither end of the window");
	fake_enter_start(START_OWN_PRIMARY, dev);
	p = pin_map(g, start, size, &mh, &base);
	if (p) {
		copy_both_ways(mh, p + (small - start), small, 16, 77);
		unmap_unpin(g, mh, base, size);
	}
	fake_leave_start(START_OWN_PRIMARY, dev);
}

struct thread_arg {
	gdr_t g;
	int dev;
	CUdeviceptr mem;
	int bad;
};

static void *copier(void *v)
{
	struct thread_arg *a = v;
	unsigned char out[256], in[256];
	gdr_mh_t mh;
	char *base = NULL, *p;
	int i, j;

	/* No context on this thread: the library finds the owner's. */
	if (gdr_pin_buffer(a->g, a->mem, 4096, 0, 0, &mh) ||
	    gdr_map(a->g, mh, (void **)&base, 4096)) {
		a->bad = -1;
		return NULL;
	}
	p = base + (a->mem & (GPU_PAGE_SIZE - 1));
	for (i = 0; i < 200; i++) {
		pattern(out, sizeof(out), (unsigned int)(a->dev * 1000 + i));
		memset(in, POISON, sizeof(in));
		if (gdr_copy_to_mapping(mh, p + i, out, sizeof(out)) ||
		    gdr_copy_from_mapping(mh, in, p + i, sizeof(in))) {
			a->bad++;
			continue;
		}
		for (j = 0; j < (int)sizeof(in); j++)
			a->bad += in[j] != out[j];
	}
	gdr_unmap(a->g, mh, base, 4096);
	gdr_unpin_buffer(a->g, mh);
	return NULL;
}

/* The vulkan backend: every kind of memory it cannot map. */
static void vulkan_cases(gdr_t g)
{
	CUdeviceptr legacy[FAKE_DEVS], nofd, small, big;
	unsigned long vmm;
	struct thread_arg args[FAKE_DEVS];
	pthread_t threads[FAKE_DEVS];
	int d, st, imports_before = imports;
	gdr_mh_t mh;
	char *base, *p, host[64];
	void *va;

	for (d = 0; d < FAKE_DEVS; d++)
		legacy[d] = legacy_alloc(d, 1 << 20);

	/* cuMemAlloc memory, from every start, on every device: in the
	 * allocating context, which no start has current. */
	for (d = 0; d < FAKE_DEVS; d++) {
		for (st = 0; st < NR_STARTS; st++) {
			pin_and_copy(g, d, st, legacy[d], 100, 3000);
			pin_and_copy(g, d, st, legacy[d], 65536 + 3, 5000);
		}
	}
	CHECK(imports == imports_before, "nothing was imported into Vulkan");

	/* VMM memory without a POSIX fd handle type. */
	nofd = vmm_alloc(1, 2 << 20, 0);
	for (st = 0; st < NR_STARTS; st++)
		pin_and_copy(g, 1, st, nofd, 4096 + 5, 6000);

	/* A window past the end of a cuMemCreate allocation. */
	CHECK_RET(gdrmap_mem_alloc(2, 2 << 20, &vmm), 0);
	fake_enter_start(START_OTHER_USER, 2);
	p = pin_map(g, vmm + (2 << 20) - 4096, 65536, &mh, &base);
	if (p) {
		copy_both_ways(mh, p, vmm + (2 << 20) - 4096, 4096, 5);
		/* Past the allocation there is nothing to copy to. */
		LIB(gdr_copy_to_mapping(mh, p + 4096, host, 8), EINVAL);
		CHECK(strstr(gdrmap_last_error(), "no GPU memory at") != NULL,
		      "says so: %s", gdrmap_last_error());
		unmap_unpin(g, mh, base, 65536);
	}
	fake_leave_start(START_OTHER_USER, 2);

	/* UCX's window around a small buffer. */
	legacy_alloc(0, 16);
	small = legacy_alloc(0, 16);
	ucx_window(g, 0, small);

	/* Past the bounce buffer: straight from and to the caller's memory. */
	big = legacy_alloc(2, 1 << 20);
	fake_enter_start(START_NONE, 2);
	p = pin_map(g, big, 300000, &mh, &base);
	if (p) {
		copy_both_ways(mh, p + 1, big + 1, 200001, 9);
		/* A load or store through the pointer faults, loudly. */
		CHECK(load_faults(p), "a load through a copy-only mapping faults");
		/* Asking for a CPU mapping type is refused, and says why. */
		LIB(gdr_unmap(g, mh, base, 300000), 0);
		LIB(gdr_map_v2(g, mh, &va, 300000, GDR_MAP_FLAG_REQ_WC_MAPPING),
		    EOPNOTSUPP);
		CHECK(strstr(gdrmap_last_error(), "copy-only") != NULL,
		      "the refusal names copy-only: %s", gdrmap_last_error());
		LIB(gdr_map(g, mh, (void **)&base, 300000), 0);
		p = base;	/* big is the window's start */
		/* A DMA that fails is reported, nothing copied. */
		fake_dma_fail = CUDA_ERROR_ILLEGAL_ADDRESS;
		LIB(gdr_copy_to_mapping(mh, p, host, 8), EIO);
		CHECK(strstr(gdrmap_last_error(), "CUDA_ERROR") != NULL ||
		      strstr(gdrmap_last_error(), "failed") != NULL,
		      "the failure is explained: %s", gdrmap_last_error());
		fake_dma_fail = CUDA_SUCCESS;	/* spent, or not: none left */
		unmap_unpin(g, mh, base, 300000);
	}

	/* Freed memory: refused at copy time, with the reason. */
	p = pin_map(g, big, 4096, &mh, &base);
	fake_ctx_create(2, 2);
	CHECK(fake_MemFree(big) == CUDA_SUCCESS, "free");
	fake_cur = NULL;
	if (p) {
		LIB(gdr_copy_from_mapping(mh, host, p, 8), EINVAL);
		CHECK(strstr(gdrmap_last_error(), "freed") != NULL,
		      "names the free: %s", gdrmap_last_error());
		unmap_unpin(g, mh, base, 4096);
	}
	fake_leave_start(START_NONE, 2);

	/* Several threads at once, one device each. */
	for (d = 0; d < FAKE_DEVS; d++) {
		args[d] = (struct thread_arg){ g, d, legacy[d] + 12345, 0 };
		pthread_create(&threads[d], NULL, copier, &args[d]);
	}
	for (d = 0; d < FAKE_DEVS; d++) {
		pthread_join(threads[d], NULL);
		CHECK(args[d].bad == 0, "thread on device %d: %d wrong", d,
		      args[d].bad);
	}

	/* Refused: what is not GPU memory. */
	pin_refused(g, 0, (CUdeviceptr)(uintptr_t)host, EINVAL, "host memory");
	base = mmap(NULL, 65536, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(base, 65536);
	pin_refused(g, 0, (CUdeviceptr)(uintptr_t)base, EINVAL,
		    "not memory CUDA knows");

	/* GDRMAP_COPY_ONLY=0: refused as before, the reason and the way
	 * back named. */
	setenv("GDRMAP_COPY_ONLY", "0", 1);
	pin_refused(g, 1, legacy[1], EINVAL, "not memory from cuMemCreate");
	CHECK(strstr(gdrmap_last_error(), "GDRMAP_COPY_ONLY=0") != NULL,
	      "names the setting: %s", gdrmap_last_error());
	unsetenv("GDRMAP_COPY_ONLY");
}

/* The dmabuf backend: a window past its allocation, and UCX's window. */
static void dmabuf_cases(gdr_t g)
{
	CUdeviceptr legacy = legacy_alloc(1, 1 << 20), small;
	gdr_mh_t mh;
	char *base, *p;

	fake_enter_start(START_OTHER_PRIMARY, 1);
	p = pin_map(g, legacy + (1 << 20) - 100, 65536, &mh, &base);
	if (p) {
		copy_both_ways(mh, p, legacy + (1 << 20) - 100, 100, 11);
		unmap_unpin(g, mh, base, 65536);
	}
	fake_leave_start(START_OTHER_PRIMARY, 1);
	legacy_alloc(2, 16);
	small = legacy_alloc(2, 16);
	ucx_window(g, 2, small);
}

/*
 * A failed pin's explanation blames a range that runs past its allocation
 * only when it reaches a GPU page the allocation does not use: UCX's 64
 * KiB window around a 16-byte buffer is legal and must not be blamed.
 */
static void explanations(void)
{
	CUdeviceptr small = legacy_alloc(0, 16), page = legacy_alloc(0, 65536);
	char why[256] = "";

	CHECK(!gdr_cuda_explain_pin(small, GPU_PAGE_SIZE, why, sizeof(why)),
	      "the 64 KiB window of a 16-byte buffer is not blamed: %s", why);
	CHECK(gdr_cuda_explain_pin(page + GPU_PAGE_SIZE - 16, 4096, why,
				   sizeof(why)) &&
	      strstr(why, "runs past the end of its allocation"),
	      "a range into the next GPU page is: %s", why);
}

int main(void)
{
	char why[512];
	gdr_t g;
	int err = 0;

	signal(SIGPIPE, SIG_IGN);
	gdr_cuda_use_syms(&fake_syms);
	explanations();
	g = gdr_open_backend(&gdr_backend_vulkan, why, sizeof(why), &err);
	CHECK(g != NULL, "vulkan opens: %s", why);
	if (g) {
		vulkan_cases(g);
		CHECK_RET(gdr_close(g), 0);
	}
	g = open_dmabuf();
	if (g) {
		dmabuf_cases(g);
		CHECK_RET(gdr_close(g), 0);
	}
	CHECK(atomic_load(&fake_dma_copies) > 0 &&
	      atomic_load(&fake_blocking_copies) == 0,
	      "%d copies on non-blocking streams, %d on others",
	      atomic_load(&fake_dma_copies),
	      atomic_load(&fake_blocking_copies));
	return owner_done();
}
