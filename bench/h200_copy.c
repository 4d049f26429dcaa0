// SPDX-License-Identifier: MIT
/*
 * Copy and pin costs through a real GPU mapping, for bench/results/.
 *
 * One process measures, on one mapping of GPU memory (gdrmap_open's backend):
 *  - latency of one copy call, per size, offsets 0 and 3, both directions:
 *    gdr_copy_to/from_mapping (the API, the routine set chosen for this
 *    CPU), each built routine set called directly, libc memcpy, and, if
 *    GDRCOPY_LIB names a GDRCopy 2.6 libgdrapi.so, its exported 64-byte
 *    routines (what its dispatcher uses for 64-byte aligned bulk); then
 *    cuMemcpyHtoD/DtoH from pinned host memory, the same sizes;
 *  - bandwidth of large copies both ways;
 *  - pin, map, unmap and unpin costs, for allocations of 2 MiB, 64 MiB and
 *    1 GiB, first pin (Vulkan import) and a second pin of the same
 *    allocation (shared import) apart.
 * Method: the median over batches of calls, timed with CLOCK_MONOTONIC;
 * every copy's data is checked once against cuMemcpy before timing.
 * Output: a table on stdout, and CSV rows (kind,name,dir,size,offset,ns)
 * on the file named by argv[1] if given.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"
#include "cuda_funcs.h"
#include "cuda_load.h"
#include "isa/copy.h"
#include "gdrapi.h"

#define ALLOC	(256UL << 20)
#define BATCHES	31

typedef void (*copy_fn)(void *dst, const void *src, size_t n);

static struct {
	__typeof__(&CUDA_FN_NAME(Init)) Init;
	__typeof__(&CUDA_FN_NAME(DeviceGet)) DeviceGet;
	__typeof__(&CUDA_FN_NAME(DevicePrimaryCtxRetain)) DevicePrimaryCtxRetain;
	__typeof__(&CUDA_FN_NAME(CtxSetCurrent)) CtxSetCurrent;
	__typeof__(&CUDA_FN_NAME(MemAllocHost)) MemAllocHost;
	__typeof__(&CUDA_FN_NAME(MemcpyHtoD)) MemcpyHtoD;
	__typeof__(&CUDA_FN_NAME(MemcpyDtoH)) MemcpyDtoH;
	__typeof__(&CUDA_FN_NAME(DriverGetVersion)) DriverGetVersion;
	__typeof__(&CUDA_FN_NAME(CtxSynchronize)) CtxSynchronize;
} cu;

static FILE *csv;
static gdr_t g;
static gdr_mh_t mh;
static char *map;		/* CPU pointer to the start of the allocation */
static unsigned long dbase;	/* its GPU address */
static unsigned char *host;	/* pinned host memory */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void record(const char *kind, const char *name, const char *dir,
		   size_t size, size_t off, double ns)
{
	if (csv)
		fprintf(csv, "%s,%s,%s,%zu,%zu,%.1f\n", kind, name, dir, size,
			off, ns);
}

/* Calls per batch: enough for ~20 µs, at least 1. */
static int batch_calls(double est_ns)
{
	int n = (int)(20000 / est_ns);

	return n < 1 ? 1 : n > 1000 ? 1000 : n;
}

/* Median ns per call of fn(dst, src, size) over batches. */
static double time_copy(copy_fn fn, void *dst, const void *src, size_t size)
{
	double t[BATCHES], t0, est;
	int b, i, n;

	for (i = 0; i < 3; i++)
		fn(dst, src, size);
	t0 = now_ns();
	fn(dst, src, size);
	est = now_ns() - t0;
	n = batch_calls(est);
	for (b = 0; b < BATCHES; b++) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			fn(dst, src, size);
		t[b] = (now_ns() - t0) / n;
	}
	return median(t, BATCHES);
}

/* The API path, as an application calls it. */
static void api_to(void *dst, const void *src, size_t n)
{
	gdr_copy_to_mapping(mh, dst, src, n);
}

static void api_from(void *dst, const void *src, size_t n)
{
	gdr_copy_from_mapping(mh, dst, src, n);
}

static void libc_memcpy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

static void cuda_htod(void *dst, const void *src, size_t n)
{
	cu.MemcpyHtoD(dbase + (uintptr_t)((char *)dst - map), src, n);
}

static void cuda_dtoh(void *dst, const void *src, size_t n)
{
	cu.MemcpyDtoH(dst, dbase + (uintptr_t)((const char *)src - map), n);
}

/* Check once that fn moved the right bytes (against cuMemcpy). */
static int verify(copy_fn fn, int to_gpu, size_t size, size_t off)
{
	static unsigned char ref[1 << 20], got[1 << 20];
	size_t n = size < sizeof(ref) ? size : sizeof(ref), i;

	for (i = 0; i < n; i++)
		ref[i] = (unsigned char)(rand() | 1);
	if (to_gpu) {
		memcpy(host + off, ref, n);
		fn(map + off, host + off, n);
		cu.MemcpyDtoH(got, dbase + off, n);
	} else {
		cu.MemcpyHtoD(dbase + off, ref, n);
		/* From pageable memory the copy may still be in flight. */
		cu.CtxSynchronize();
		memset(host + off, 0, n);
		fn(host + off, map + off, n);
		memcpy(got, host + off, n);
	}
	return memcmp(ref, got, n) == 0;
}

struct routine {
	const char *name;
	copy_fn to, from;
	int lines_only;		/* 64-byte aligned whole lines only */
	size_t only_size;	/* if not 0: this size at offset 0 only */
};

/* The floor of a small write: one aligned 8-byte store and a fence. */
static void raw_store8(void *dst, const void *src, size_t n)
{
	uint64_t v;

	(void)n;
	memcpy(&v, src, 8);
	*(volatile uint64_t *)dst = v;
	__builtin_ia32_sfence();
}

static void latency_table(const struct routine *r, int nr)
{
	static const size_t sizes[] = { 1, 4, 8, 16, 32, 64, 128, 256, 1024,
					4096, 16384, 65536, 262144, 1 << 20 };
	static const size_t offs[] = { 0, 3 };
	int i, d;
	unsigned int s, o;

	for (d = 0; d < 2; d++) {
		printf("\n%s latency, ns per call (median of %d batches)\n",
		       d == 0 ? "write (host -> GPU)" : "read (GPU -> host)",
		       BATCHES);
		printf("%8s %4s", "size", "off");
		for (i = 0; i < nr; i++)
			printf(" %12s", r[i].name);
		printf("\n");
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			for (o = 0; o < 2; o++) {
				size_t size = sizes[s], off = offs[o];

				printf("%8zu %4zu", size, off);
				for (i = 0; i < nr; i++) {
					copy_fn fn = d == 0 ? r[i].to : r[i].from;
					double ns;

					if (!fn || (r[i].lines_only &&
						    (off || size % 64)) ||
					    (r[i].only_size &&
					     (off || size != r[i].only_size))) {
						printf(" %12s", "-");
						continue;
					}
					if (!verify(fn, d == 0, size, off)) {
						printf(" %12s", "WRONG");
						record("latency", r[i].name,
						       d ? "read" : "write",
						       size, off, -1);
						continue;
					}
					ns = d == 0 ?
					     time_copy(fn, map + off, host + off, size) :
					     time_copy(fn, host + off, map + off, size);
					printf(" %12.0f", ns);
					record("latency", r[i].name,
					       d ? "read" : "write", size, off, ns);
				}
				printf("\n");
				fflush(stdout);
			}
		}
	}
}

static void bandwidth(const struct routine *r, int nr)
{
	size_t wsize = 64UL << 20, rsize = 8UL << 20;
	double t[9], t0;
	int i, k;

	printf("\nbandwidth, GB/s (median of 9): write %zu MiB, read %zu MiB\n",
	       wsize >> 20, rsize >> 20);
	for (i = 0; i < nr; i++) {
		double w = 0, rd = 0;

		if (r[i].only_size)
			continue;
		if (r[i].to) {
			for (k = 0; k < 9; k++) {
				t0 = now_ns();
				r[i].to(map, host, wsize);
				t[k] = now_ns() - t0;
			}
			w = wsize / median(t, 9);
			record("bandwidth", r[i].name, "write", wsize, 0, w);
		}
		if (r[i].from) {
			for (k = 0; k < 5; k++) {
				t0 = now_ns();
				r[i].from(host, map, rsize);
				t[k] = now_ns() - t0;
			}
			rd = rsize / median(t, 5);
			t[5] = t[6] = t[7] = t[8] = 0;
			record("bandwidth", r[i].name, "read", rsize, 0, rd);
		}
		printf("%14s  write %6.2f  read %6.3f\n", r[i].name, w, rd);
	}
}

/* Pin/map/unmap/unpin costs for one allocation size. */
static void pin_costs(size_t alloc)
{
	enum { REPS = 15 };
	double first[REPS], second[REPS], mapt[REPS], unmapt[REPS];
	double unpin2[REPS], last[REPS], t0;
	unsigned long d;
	gdr_mh_t a, b;
	void *va;
	int k;

	if (gdrmap_mem_alloc(0, alloc, &d)) {
		printf("  %zu MiB: allocation failed\n", alloc >> 20);
		return;
	}
	for (k = 0; k < REPS; k++) {
		t0 = now_ns();
		gdr_pin_buffer(g, d, 65536, 0, 0, &a);
		first[k] = now_ns() - t0;
		t0 = now_ns();
		gdr_pin_buffer(g, d + alloc / 2, 65536, 0, 0, &b);
		second[k] = now_ns() - t0;
		t0 = now_ns();
		gdr_map(g, b, &va, 65536);
		mapt[k] = now_ns() - t0;
		t0 = now_ns();
		gdr_unmap(g, b, va, 65536);
		unmapt[k] = now_ns() - t0;
		t0 = now_ns();
		gdr_unpin_buffer(g, b);
		unpin2[k] = now_ns() - t0;
		t0 = now_ns();
		gdr_unpin_buffer(g, a);
		last[k] = now_ns() - t0;
	}
	gdrmap_mem_free(d);
	printf("  %5zu MiB  %10.1f %10.1f %8.1f %8.1f %10.1f %10.1f\n",
	       alloc >> 20, median(first, REPS) / 1e3, median(second, REPS) / 1e3,
	       median(mapt, REPS) / 1e3, median(unmapt, REPS) / 1e3,
	       median(unpin2, REPS) / 1e3, median(last, REPS) / 1e3);
	record("pin", "first_pin", "-", alloc, 0, median(first, REPS));
	record("pin", "second_pin", "-", alloc, 0, median(second, REPS));
	record("pin", "map", "-", alloc, 0, median(mapt, REPS));
	record("pin", "unmap", "-", alloc, 0, median(unmapt, REPS));
	record("pin", "unpin_shared", "-", alloc, 0, median(unpin2, REPS));
	record("pin", "unpin_last", "-", alloc, 0, median(last, REPS));
}

static int load_cuda(void)
{
	const struct cuda_sym syms[] = {
		CUDA_FN_SYM(Init, &cu.Init),
		CUDA_FN_SYM(DeviceGet, &cu.DeviceGet),
		CUDA_FN_SYM(DevicePrimaryCtxRetain, &cu.DevicePrimaryCtxRetain),
		CUDA_FN_SYM(CtxSetCurrent, &cu.CtxSetCurrent),
		CUDA_FN_SYM(MemAllocHost, &cu.MemAllocHost),
		CUDA_FN_SYM(MemcpyHtoD, &cu.MemcpyHtoD),
		CUDA_FN_SYM(MemcpyDtoH, &cu.MemcpyDtoH),
		CUDA_FN_SYM(DriverGetVersion, &cu.DriverGetVersion),
		CUDA_FN_SYM(CtxSynchronize, &cu.CtxSynchronize),
	};
	CUcontext ctx;
	CUdevice dev;

	if (cuda_load_syms(syms, sizeof(syms) / sizeof(syms[0]), NULL))
		return -1;
	if (cu.Init(0) || cu.DeviceGet(&dev, 0) ||
	    cu.DevicePrimaryCtxRetain(&ctx, dev) || cu.CtxSetCurrent(ctx))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct routine r[16];
	const struct gdr_copy_impl *const *impl;
	const char *gdrcopy = getenv("GDRCOPY_LIB");
	gdr_info_t info;
	int nr = 0, backend = 0, ver = 0;
	void *va;
	size_t i;

	if (load_cuda()) {
		fprintf(stderr, "no CUDA device\n");
		return 77;
	}
	csv = argc > 1 ? fopen(argv[1], "w") : NULL;
	if (csv)
		fprintf(csv, "kind,name,dir,size,offset,value\n");
	cu.DriverGetVersion(&ver);
	{
		/* What a process pays once: backend probing and set-up. */
		double t0 = now_ns();

		g = gdrmap_open();
		printf("gdrmap_open: %.1f ms (first in this process, CUDA already initialised)\n",
		       (now_ns() - t0) / 1e6);
		record("open", "gdr_open", "-", 0, 0, now_ns() - t0);
	}
	if (!g) {
		fprintf(stderr, "gdrmap_open failed: %s\n", gdrmap_last_error());
		return 1;
	}
	gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &backend);
	printf("backend %d, CUDA driver %d, WC routine set: %s\n", backend, ver,
	       gdr_copy_for_type(GDR_MAPPING_TYPE_WC)->name);
	if (gdrmap_mem_alloc(0, ALLOC, &dbase) ||
	    gdr_pin_buffer(g, dbase, ALLOC, 0, 0, &mh) ||
	    gdr_map(g, mh, &va, ALLOC) || gdr_get_info(g, mh, &info) ||
	    cu.MemAllocHost((void **)&host, ALLOC)) {
		fprintf(stderr, "allocation, pin or map failed\n");
		return 1;
	}
	map = (char *)va + (dbase - info.va);
	for (i = 0; i < ALLOC; i++)
		host[i] = (unsigned char)(i * 131 + 7) | 1;

	r[nr++] = (struct routine){ "gdrmap", api_to, api_from };
	for (impl = gdr_copy_impls; *impl; impl++)
		if ((*impl)->supported())
			r[nr++] = (struct routine){ (*impl)->name,
						    (*impl)->to_mapping,
						    (*impl)->from_mapping };
	r[nr++] = (struct routine){ "memcpy", libc_memcpy, libc_memcpy };
	if (gdrcopy) {
		void *lib = dlopen(gdrcopy, RTLD_NOW);
		copy_fn st = NULL, ld = NULL;

		if (lib) {
			*(void **)&st = dlsym(lib, "memcpy_uncached_store_movdir64b");
			*(void **)&ld = dlsym(lib, "memcpy_uncached_load_avx2");
		}
		if (st && ld)
			r[nr++] = (struct routine){ "gdrcopy2.6-64B", st, ld, 1 };
		else
			fprintf(stderr, "GDRCOPY_LIB=%s: routines not found\n",
				gdrcopy);
	}
	r[nr++] = (struct routine){ "store8+sfence", raw_store8, NULL, 0, 8 };
	r[nr++] = (struct routine){ "cuMemcpy", cuda_htod, cuda_dtoh };

	latency_table(r, nr);
	bandwidth(r, nr);

	printf("\npin costs, µs (median of 15): 64 KiB pins\n");
	printf("  %9s  %10s %10s %8s %8s %10s %10s\n", "alloc", "first pin",
	       "2nd pin", "map", "unmap", "unpin 2nd", "last unpin");
	pin_costs(2UL << 20);
	pin_costs(64UL << 20);
	pin_costs(1UL << 30);

	gdr_unmap(g, mh, va, ALLOC);
	gdr_unpin_buffer(g, mh);
	gdrmap_mem_free(dbase);
	gdr_close(g);
	if (csv)
		fclose(csv);
	return 0;
}
