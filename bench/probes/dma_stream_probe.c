// SPDX-License-Identifier: MIT
/*
 * Which way of asking the copy engine for a host<->GPU copy is fastest,
 * size by size: what lib/paths/dma.c does (cuMemcpy*Async on a private
 * non-blocking stream, then cuStreamSynchronize) beside the legacy stream
 * (what PyTorch's copy_ and cudaMemcpyAsync on the default stream use), a
 * created blocking stream, the synchronous cuMemcpyHtoD/DtoH, and the
 * same non-blocking stream waited for by spinning on cuStreamQuery; and
 * gdrmap's own DMA path (gdrmap_copy_*_mapping_via) on the same memory.
 * Pinned (cuMemHostAlloc) and pageable host memory; the GPU memory one
 * gdrmap_mem_alloc allocation, mapped by gdrmap.  Methods are interleaved
 * round by round so drift hits all of them alike; p50 of all rounds.
 *
 * Build on a machine with the CUDA toolkit and gdrmap installed in PREFIX:
 *   cc -O2 -o dma_stream_probe dma_stream_probe.c -I/usr/local/cuda/include \
 *      -IPREFIX/include -LPREFIX/lib -lgdrapi -lcuda
 * usage: dma_stream_probe [ROUNDS]
 */
#include <cuda.h>
#include <gdrapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

enum { NONBLOCK, LEGACY, BLOCKING, SYNC_API, SPIN, GDRMAP, NMETHODS };
static const char *const method_names[NMETHODS] = {
	"nonblock+sync", "legacy+sync", "blocking+sync", "cuMemcpy (sync)",
	"nonblock+spin", "gdrmap dma",
};

static CUstream nonblock, blocking;
static gdr_mh_t mh;
static char *map;

static void copy(int m, CUdeviceptr d, void *h, size_t n, int to_gpu)
{
	CUstream s = m == LEGACY ? 0 : m == BLOCKING ? blocking : nonblock;

	switch (m) {
	case SYNC_API:
		MUST(to_gpu ? cuMemcpyHtoD(d, h, n) : cuMemcpyDtoH(h, d, n));
		return;
	case GDRMAP:
		if ((to_gpu ? gdrmap_copy_to_mapping_via(mh, map, h, n,
							 GDRMAP_COPY_PATH_DMA) :
			      gdrmap_copy_from_mapping_via(mh, h, map, n,
							   GDRMAP_COPY_PATH_DMA))) {
			fprintf(stderr, "gdrmap dma failed: %s\n",
				gdrmap_last_error());
			exit(1);
		}
		return;
	}
	MUST(to_gpu ? cuMemcpyHtoDAsync(d, h, n, s) :
		      cuMemcpyDtoHAsync(h, d, n, s));
	if (m == SPIN) {
		CUresult r;

		while ((r = cuStreamQuery(s)) == CUDA_ERROR_NOT_READY)
			;
		MUST(r);
	} else {
		MUST(cuStreamSynchronize(s));
	}
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 4096, 32 << 10, 256 << 10, 2 << 20,
					16 << 20 };
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	size_t max = 16 << 20;
	double *t = malloc(sizeof(double) * rounds * NMETHODS);
	unsigned long dptr;
	void *pinned, *pageable;
	gdr_t g;
	char name[128];
	int drv;

	probe_cuda_start(name, sizeof(name), &drv);
	MUST(cuStreamCreate(&nonblock, CU_STREAM_NON_BLOCKING));
	MUST(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
	MUST(cuMemHostAlloc(&pinned, max, 0));
	pageable = aligned_alloc(4096, max);
	memset(pinned, 0x5a, max);
	memset(pageable, 0xa5, max);
	g = gdrmap_open();
	if (!g || gdrmap_mem_alloc(0, max, &dptr) ||
	    gdr_pin_buffer(g, dptr, max, 0, 0, &mh) ||
	    gdr_map(g, mh, (void **)&map, max)) {
		fprintf(stderr, "gdrmap: %s\n", gdrmap_last_error());
		return 1;
	}
	printf("# %s, CUDA driver %d, %d rounds, p50 us (min)\n", name, drv,
	       rounds);
	for (int host = 0; host < 2; host++)
	for (int to_gpu = 1; to_gpu >= 0; to_gpu--)
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t n = sizes[si];
		void *h = host ? pageable : pinned;

		for (int m = 0; m < NMETHODS; m++)
			copy(m, dptr, h, n, to_gpu);	/* untimed first */
		for (int r = 0; r < rounds; r++)
			for (int k = 0; k < NMETHODS; k++) {
				int m = (k + r) % NMETHODS;
				double t0 = now_us();

				copy(m, dptr, h, n, to_gpu);
				t[m * rounds + r] = now_us() - t0;
			}
		printf("%-8s %-4s %9zu", host ? "pageable" : "pinned",
		       to_gpu ? "HtoD" : "DtoH", n);
		probe_print(t, rounds, NMETHODS, method_names, 2);
	}
	return 0;
}
