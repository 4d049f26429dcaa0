// SPDX-License-Identifier: MIT
/*
 * What gdr_pin_buffer costs on the rm backend when each pin is of a
 * fresh cudaMalloc buffer, freed after its unpin, beside buffers that
 * live on (a program that allocates per message; test_gpu_rm_threads):
 * whether the pin finds the buffer's chunk among the objects it knows
 * (lib/backends/rm_known.h) or exports it again.  Beside it, pins of one
 * buffer that lives throughout, 2 MiB, in a chunk of its own: it vouches
 * for no other.  Interleaved, one of each per round.  The pins' exports
 * show in the library's log (GDRCOPY_ENABLE_LOGGING=1
 * GDRCOPY_LOG_LEVEL=1: "exporting [...").
 * First it prints where four 8-byte cuMemAllocs landed, relative to the
 * first: the spacing the neighbour probes of rm_known.c assume.
 *
 * Build (from the top of the tree, the library built in O):
 *   cc -O2 -o fresh_pin_probe bench/probes/fresh_pin_probe.c \
 *     -I/usr/local/cuda/include -Iinclude -LO/lib -lgdrapi \
 *     -Wl,-rpath,O/lib -L/usr/local/cuda/lib64/stubs -lcuda
 * usage: fresh_pin_probe ROUNDS
 */
#include <gdrapi.h>
#include <string.h>

#include "probe.h"

static const size_t sizes[] = { 8, 4096, 65536 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define METHODS (NSIZES + 1)

/* One pin and unpin of [p, +n): the pin's time in µs. */
static double pin_us(gdr_t g, CUdeviceptr p, size_t n)
{
	gdr_mh_t mh;
	double t0 = now_us(), t;

	if (gdr_pin_buffer(g, p, n, 0, 0, &mh)) {
		fprintf(stderr, "gdr_pin_buffer of %zu bytes failed\n", n);
		exit(1);
	}
	t = now_us() - t0;
	gdr_unpin_buffer(g, mh);
	return t;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 300, drv, r;
	const char *names[METHODS];
	char name[128], label[NSIZES][32];
	CUdeviceptr first[4], live, x;
	double *t;
	size_t m;
	gdr_t g;

	if (rounds < 1)
		rounds = 1;
	probe_cuda_start(name, sizeof(name), &drv);
	g = gdr_open();
	if (!g) {
		fprintf(stderr, "gdr_open failed\n");
		return 1;
	}
	for (r = 0; r < 4; r++)
		MUST(cuMemAlloc(&first[r], 8));
	printf("%s, CUDA %d: four 8-byte cuMemAllocs at +0 +%lld +%lld +%lld\n",
	       name, drv, (long long)(first[1] - first[0]),
	       (long long)(first[2] - first[0]),
	       (long long)(first[3] - first[0]));
	MUST(cuMemAlloc(&live, 2 << 20));
	t = calloc((size_t)rounds * METHODS, sizeof(double));
	if (!t)
		return 1;
	for (r = 0; r < rounds; r++) {
		t[r] = pin_us(g, live, 8);
		for (m = 0; m < NSIZES; m++) {
			MUST(cuMemAlloc(&x, sizes[m]));
			t[(m + 1) * rounds + r] = pin_us(g, x, sizes[m]);
			MUST(cuMemFree(x));
		}
	}
	names[0] = "same-8B-own-chunk";
	for (m = 0; m < NSIZES; m++) {
		snprintf(label[m], sizeof(label[m]), "fresh-%zuB", sizes[m]);
		names[m + 1] = label[m];
	}
	printf("gdr_pin_buffer µs, p50 (min) of %d rounds:", rounds);
	probe_print(t, rounds, METHODS, names, 1);
	free(t);
	for (r = 0; r < 4; r++)
		cuMemFree(first[r]);
	cuMemFree(live);
	gdr_close(g);
	return 0;
}
