// SPDX-License-Identifier: MIT
/*
 * Could a large copy from or to pageable memory pin the caller's buffer
 * for the length of the call (cuMemHostRegister, DMA straight, then
 * cuMemHostUnregister) instead of staging it through pinned buffers and
 * copying it out with the CPUs?  The staged path's reads at 4-16 MiB are
 * held to about 1.5-2x cuMemcpy by the CPUs' copy out (docs/best-path.md);
 * the copy engine alone moves 4 MiB in about 83 µs.  So it comes down to
 * what pinning and unpinning 4 MiB costs.  Per size and direction, timed
 * in turns round by round, p50 (min) in µs:
 *   cuMemcpy       cuMemcpyHtoD/DtoH from the pageable buffer;
 *   reg+dma+unreg  register, cuMemcpy*Async on a non-blocking stream +
 *                  sync, unregister;
 *   reg+unreg      the pinning alone;
 *   staged         gdrmap's staged path (gdrmap_copy_*_via);
 *   gdrmap         gdrmap_copy_* as it chooses;
 *   pinned dma     cuMemcpy*Async from a cuMemHostAlloc buffer (the floor).
 * Before timing, reg+dma+unreg's bytes are checked both ways against a
 * pattern, every byte, with the destination poisoned first.
 *
 * Build on a machine with the CUDA toolkit and gdrmap built in BUILD:
 *   cc -O2 -o host_register_probe host_register_probe.c \
 *      -I/usr/local/cuda/include -Iinclude -LBUILD/lib -lgdrapi \
 *      -Wl,-rpath,BUILD/lib -L/usr/local/cuda/lib64/stubs -lcuda
 * usage: host_register_probe [ROUNDS]
 */
#include <cuda.h>
#include <gdrapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

enum { CUMEMCPY, REG_DMA, REG_ONLY, STAGED, GDRMAP, PINNED_DMA, NMETHODS };
static const char *const method_names[NMETHODS] = {
	"cuMemcpy", "reg+dma+unreg", "reg+unreg", "staged", "gdrmap",
	"pinned dma",
};

static CUstream stream;
static gdr_mh_t mh;
static char *map;
static unsigned char *pinned, *pageable;

static void gdrmap_copy(CUdeviceptr d, size_t n, int to_gpu, int path)
{
	int err = to_gpu ?
		  gdrmap_copy_to_mapping_via(mh, map, pageable, n, path) :
		  gdrmap_copy_from_mapping_via(mh, pageable, map, n, path);

	(void)d;
	if (err) {
		fprintf(stderr, "gdrmap copy failed: %s\n",
			gdrmap_last_error());
		exit(1);
	}
}

static void copy(int m, CUdeviceptr d, size_t n, int to_gpu)
{
	void *h = m == PINNED_DMA ? (void *)pinned : (void *)pageable;

	switch (m) {
	case CUMEMCPY:
		MUST(to_gpu ? cuMemcpyHtoD(d, h, n) : cuMemcpyDtoH(h, d, n));
		return;
	case STAGED:
		gdrmap_copy(d, n, to_gpu, GDRMAP_COPY_PATH_STAGED);
		return;
	case GDRMAP:
		gdrmap_copy(d, n, to_gpu, GDRMAP_COPY_PATH_AUTO);
		return;
	case REG_ONLY:
		MUST(cuMemHostRegister(h, n, 0));
		MUST(cuMemHostUnregister(h));
		return;
	}
	if (m == REG_DMA)
		MUST(cuMemHostRegister(h, n, 0));
	MUST(to_gpu ? cuMemcpyHtoDAsync(d, h, n, stream) :
		      cuMemcpyDtoHAsync(h, d, n, stream));
	MUST(cuStreamSynchronize(stream));
	if (m == REG_DMA)
		MUST(cuMemHostUnregister(h));
}

static void pattern(unsigned char *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 131 + seed * 7 + 1) % 251 + 1);
}

/* reg+dma+unreg moves n bytes right both ways; exits if not. */
static void check_bytes(CUdeviceptr d, size_t n, unsigned int seed)
{
	pattern(pinned, n, seed);
	MUST(cuMemcpyHtoD(d, pinned, n));
	memset(pageable, 0x5a, n);
	copy(REG_DMA, d, n, 0);
	if (memcmp(pageable, pinned, n)) {
		fprintf(stderr, "reg+dma+unreg read of %zu bytes: bytes wrong\n",
			n);
		exit(1);
	}
	pattern(pageable, n, seed + 1);
	MUST(cuMemsetD8(d, 0x5a, n));
	copy(REG_DMA, d, n, 1);
	memset(pinned, 0xa5, n);
	MUST(cuMemcpyDtoH(pinned, d, n));
	if (memcmp(pageable, pinned, n)) {
		fprintf(stderr, "reg+dma+unreg write of %zu bytes: bytes wrong\n",
			n);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1 << 20, 2 << 20, 4 << 20, 8 << 20,
					16 << 20, 64 << 20 };
	int rounds = argc > 1 ? atoi(argv[1]) : 30;
	size_t max = 64 << 20;
	double *t = malloc(sizeof(double) * rounds * NMETHODS);
	unsigned long dptr;
	void *pin;
	gdr_t g;
	char name[128];
	int drv;

	if (!t || rounds < 1)
		return 1;
	probe_cuda_start(name, sizeof(name), &drv);
	MUST(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
	MUST(cuMemHostAlloc(&pin, max, 0));
	pinned = pin;
	pageable = aligned_alloc(4096, max);
	if (!pageable)
		return 1;
	memset(pinned, 0x5a, max);
	memset(pageable, 0xa5, max);
	g = gdrmap_open();
	if (!g || gdrmap_mem_alloc(0, max, &dptr) ||
	    gdr_pin_buffer(g, dptr, max, 0, 0, &mh) ||
	    gdr_map(g, mh, (void **)&map, max)) {
		fprintf(stderr, "gdrmap: %s\n", gdrmap_last_error());
		return 1;
	}
	printf("# %s, CUDA driver %d, %d rounds, pageable host memory, p50 us (min)\n",
	       name, drv, rounds);
	for (int to_gpu = 1; to_gpu >= 0; to_gpu--)
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];

		check_bytes(dptr, n, (unsigned int)si);
		/* Untimed first; gdrmap_copy_* until its choice is made. */
		for (int m = 0; m < NMETHODS; m++)
			copy(m, dptr, n, to_gpu);
		for (int k = 0; k < 60; k++)
			copy(GDRMAP, dptr, n, to_gpu);
		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < NMETHODS; k++) {
				int m = (k + r) % NMETHODS;
				double t0 = now_us();

				copy(m, dptr, n, to_gpu);
				t[m * rounds + r] = now_us() - t0;
			}
		printf("%-4s %9zu", to_gpu ? "HtoD" : "DtoH", n);
		probe_print(t, rounds, NMETHODS, method_names, 1);
	}
	return 0;
}
