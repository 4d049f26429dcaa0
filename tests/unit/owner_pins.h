/* SPDX-License-Identifier: MIT */
/*
 * Pins of memory of every fake device (fake_cuda.h) from every starting
 * context, for the tests of the module-free backends: data moves both
 * ways through the mapping, checked byte by byte against the GPU's view,
 * and no library call leaves the thread in another context.
 */
#ifndef GDRMAP_TEST_OWNER_PINS_H
#define GDRMAP_TEST_OWNER_PINS_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_cuda.h"
#include "base/internal.h"

/* A library call that must return want and keep the current context. */
#define LIB(expr, want)							\
	do {								\
		CUcontext lib_before_ = fake_cur;			\
		CHECK_RET(expr, want);					\
		CHECK(fake_cur == lib_before_,				\
		      "%s changed the current context", #expr);		\
	} while (0)

#define PIN_AREA	16384	/* the part of the allocation checked */
#define POISON		0x5a

static inline void pattern(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131 + seed * 7 + 1) % 251 + 1);
}

/*
 * Pin [base + off, +n) from start st (a context chosen for dev, the
 * owner), write through the mapping and read back, both checked against
 * the GPU's view of PIN_AREA bytes around it (n < PIN_AREA - 8192).
 */
static inline void pin_and_copy(gdr_t g, int dev, enum fake_start st,
				CUdeviceptr base, size_t off, size_t n)
{
	unsigned char gpu[PIN_AREA], data[PIN_AREA], back[PIN_AREA + 2];
	unsigned int seed = (unsigned int)(dev * NR_STARTS + st);
	gdr_info_t info;
	gdr_mh_t mh = { 0 };
	char *va = NULL, *p;
	size_t i, area = off < 4096 ? 0 : (off & ~(size_t)4095) - 4096;
	int bad = 0;

	fake_enter_start(st, dev);
	memset(gpu, POISON, sizeof(gpu));
	CHECK(fake_gpu_rw(base + area, gpu, PIN_AREA, 1) == 0,
	      "poison the GPU side");
	LIB(gdr_pin_buffer(g, base + off, n, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, (void **)&va, n), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	if (!va)
		goto out;
	p = va + (base + off - info.va);

	pattern(data, n, seed);
	LIB(gdr_copy_to_mapping(mh, p, data, n), 0);
	CHECK(fake_gpu_rw(base + area, gpu, PIN_AREA, 0) == 0,
	      "read the GPU side");
	for (i = area; i < area + PIN_AREA; i++)
		bad += gpu[i - area] != (i >= off && i < off + n ?
					 data[i - off] : POISON);
	CHECK(bad == 0, "device %d from %s: %d of %d bytes wrong after a write through the mapping",
	      dev, fake_start_names[st], bad, PIN_AREA);

	pattern(data, n, seed + 1000);
	CHECK(fake_gpu_rw(base + off, data, n, 1) == 0, "write the GPU side");
	memset(back, POISON, sizeof(back));
	LIB(gdr_copy_from_mapping(mh, back + 1, p, n), 0);
	bad = back[0] != POISON || back[n + 1] != POISON;
	for (i = 0; i < n; i++)
		bad += back[i + 1] != data[i];
	CHECK(bad == 0, "device %d from %s: %d bytes wrong in a read through the mapping",
	      dev, fake_start_names[st], bad);

	LIB(gdr_unmap(g, mh, va, n), 0);
out:
	LIB(gdr_unpin_buffer(g, mh), 0);
	fake_leave_start(st, dev);
}

/* A pin of p, memory of dev, from another device's context: refused
 * with err, gdrmap_last_error() saying text. */
static inline void pin_refused(gdr_t g, int dev, CUdeviceptr p, int err,
			       const char *text)
{
	gdr_mh_t mh;

	fake_enter_start(START_OTHER_PRIMARY, dev);
	LIB(gdr_pin_buffer(g, p, 4096, 0, 0, &mh), err);
	CHECK(strstr(gdrmap_last_error(), text) != NULL,
	      "the refusal says \"%s\": %s", text, gdrmap_last_error());
	fake_leave_start(START_OTHER_PRIMARY, dev);
}

/* Legacy memory of dev, allocated in a context of the test's own (not
 * the one any starting context uses). */
static inline CUdeviceptr legacy_alloc(int dev, size_t size)
{
	CUcontext before = fake_cur;
	CUdeviceptr p = 0;

	fake_ctx_create(dev, 2);
	CHECK(fake_MemAlloc(&p, size) == CUDA_SUCCESS, "legacy memory on %d",
	      dev);
	fake_cur = before;
	return p;
}

/* n buffers of size bytes of legacy memory of dev, carved side by side
 * from one chunk (fake_cuda's suballocator, as cudaMalloc does). */
static inline void suballocated(int dev, CUdeviceptr *p, int n, size_t size)
{
	int i;

	fake_suballoc_max = 4096;
	for (i = 0; i < n; i++)
		p[i] = legacy_alloc(dev, size);
	fake_suballoc_max = 0;
}

/* VMM memory of dev with the given handle types (0: none). */
static inline CUdeviceptr vmm_alloc(int dev, size_t size, int types)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = types,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
	};
	CUmemAccessDesc access = {
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, dev },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	CUcontext before = fake_cur;
	CUdeviceptr p = 0;
	CUresult res;

	fake_DevicePrimaryCtxRetain(&fake_cur, dev);
	res = fake_MemCreate(&h, size, &prop, 0);
	if (res == CUDA_SUCCESS)
		res = fake_MemAddressReserve(&p, size, 0, 0, 0);
	if (res == CUDA_SUCCESS)
		res = fake_MemMap(p, size, 0, h, 0);
	if (res == CUDA_SUCCESS)
		res = fake_MemSetAccess(p, size, &access, 1);
	if (res == CUDA_SUCCESS)
		fake_MemRelease(h);	/* the mapping keeps it */
	fake_primary_release(dev);
	fake_cur = before;
	CHECK(res == CUDA_SUCCESS, "VMM memory on %d", dev);
	return p;
}

/* The verdict, once no library call made a CUDA call for memory outside
 * a context of its owner. */
static inline int owner_done(void)
{
	CHECK(atomic_load(&fake_wrong_ctx) == 0,
	      "%d CUDA calls outside the owner's context",
	      atomic_load(&fake_wrong_ctx));
	return test_done();
}

/*
 * times reads of n bytes at map (gpu's mapping) into host, poisoned
 * before each; the last one's bytes checked against a fresh pattern the
 * GPU holds.  The copy-path tests make hundreds of reads to steer the
 * choice: one check per batch keeps them fast.
 */
static inline void checked_reads(gdr_mh_t mh, const char *map,
				 CUdeviceptr gpu, unsigned char *host,
				 size_t n, int times)
{
	static unsigned int seed;
	unsigned char *want = malloc(n);
	long bad = -1;
	size_t i;
	int k;

	CHECK(want != NULL, "%zu bytes for the pattern", n);
	if (!want)
		return;
	pattern(want, n, ++seed);
	CHECK(fake_gpu_rw(gpu, want, n, 1) == 0, "fill the GPU side");
	for (k = 0; k < times; k++) {
		memset(host, POISON, n);
		LIB(gdrmap_copy_from_mapping(mh, host, map, n), 0);
	}
	for (i = 0; i < n && bad < 0; i++)
		if (host[i] != want[i])
			bad = (long)i;
	CHECK(bad < 0, "%d reads: byte %ld is 0x%02x, the GPU holds 0x%02x",
	      times, bad, bad < 0 ? 0 : host[bad], bad < 0 ? 0 : want[bad]);
	free(want);
}

/*
 * n bytes of dev's memory (cuMemCreate, POSIX fd handle) pinned and
 * mapped: phase(mh, map, the memory, arg), then unmapped and unpinned.
 */
static inline void on_mapped(gdr_t g, int dev, size_t n,
			     void (*phase)(gdr_mh_t, char *, CUdeviceptr,
					   void *),
			     void *arg)
{
	CUdeviceptr p = vmm_alloc(dev, n,
				  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	gdr_info_t info;
	void *va = NULL;
	gdr_mh_t mh;

	LIB(gdr_pin_buffer(g, p, n, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, &va, n), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	if (va) {
		phase(mh, (char *)va + (p - info.va), p, arg);
		LIB(gdr_unmap(g, mh, va, n), 0);
	}
	LIB(gdr_unpin_buffer(g, mh), 0);
}

/* The dmabuf backend over the fake driver; NULL (a failed check, with
 * why) if it does not open. */
static inline gdr_t open_dmabuf(void)
{
	char why[512];
	int err = 0;
	gdr_t g = gdr_open_backend(&gdr_backend_dmabuf, why, sizeof(why),
				   &err);

	CHECK(g != NULL, "dmabuf opens: %s", why);
	return g;
}

/* The path gdrmap_copy_* take now for n bytes of mh, reads or writes
 * (to_mapping): gdrmap_copy_path's answer. */
static inline int copy_path_now(gdr_mh_t mh, int to_mapping, size_t n)
{
	int got = -1;

	CHECK_RET(gdrmap_copy_path(mh, to_mapping, n, &got), 0);
	return got;
}

/* The whole of a test of one mapping of n bytes of device 0 through the
 * dmabuf backend (on_mapped): its exit status. */
static inline int run_on_mapped(size_t n,
				void (*phase)(gdr_mh_t, char *, CUdeviceptr,
					      void *),
				void *arg)
{
	gdr_t g = open_dmabuf();

	if (!g)
		return test_done();
	on_mapped(g, 0, n, phase, arg);
	CHECK_RET(gdr_close(g), 0);
	return owner_done();
}

#endif /* GDRMAP_TEST_OWNER_PINS_H */
