// SPDX-License-Identifier: MIT
/*
 * Small copies, gdrmap_copy_* beside gdr_copy_*, at a resolution the
 * copy-paths tables do not have: they time each call alone, with ~30 ns
 * of clock around a 6-13 ns write, and saw gdrmap_copy_to_mapping at
 * 1.10-1.20x gdr_copy_to_mapping for 16-64 B from registered memory
 * (H200, 2026-12-02).  Here a block of BLOCK calls is timed at once, the
 * two functions taking turns block by block (which goes first changing
 * every round), over the same mapping and host buffer, for malloc'ed,
 * cuMemHostRegister'ed and cuMemAllocHost memory, both ways.  Per size
 * and kind, the p50 and minimum over the rounds of the time per call, in
 * ns, and the ratio of the p50s.
 *
 * Build on a machine with the CUDA toolkit, against the library:
 *   cc -O2 -o small_write_probe small_write_probe.c -I/usr/local/cuda/include \
 *     -I include -L LIBDIR -lgdrapi -Wl,-rpath,LIBDIR \
 *     -L/usr/local/cuda/lib64/stubs -lcuda
 * usage: small_write_probe [ROUNDS]
 */
#include <stdint.h>
#include <string.h>

#include "gdrapi.h"
#include "probe.h"

#define BLOCK	256
#define SPAN	(64UL << 10)
#define MAXR	2001

static double t[2][MAXR];

typedef int (*copy_fn)(gdr_mh_t, void *, void *, size_t);

static int to_gdr(gdr_mh_t mh, void *map, void *h, size_t n)
{
	return gdr_copy_to_mapping(mh, map, h, n);
}

static int to_gdrmap(gdr_mh_t mh, void *map, void *h, size_t n)
{
	return gdrmap_copy_to_mapping(mh, map, h, n);
}

static int from_gdr(gdr_mh_t mh, void *map, void *h, size_t n)
{
	return gdr_copy_from_mapping(mh, h, map, n);
}

static int from_gdrmap(gdr_mh_t mh, void *map, void *h, size_t n)
{
	return gdrmap_copy_from_mapping(mh, h, map, n);
}

static double block(copy_fn f, gdr_mh_t mh, char *map, char *h, size_t n)
{
	double t0 = now_us();
	int i;

	for (i = 0; i < BLOCK; i++)
		if (f(mh, map + (i & 15) * 64, h + (i & 15) * 64, n))
			exit(1);
	return (now_us() - t0) * 1e3 / BLOCK;
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = { "pageable", "registered",
					     "pinned" };
	static const size_t sizes[] = { 8, 16, 32, 64, 128, 256, 1024 };
	int rounds = argc > 1 ? atoi(argv[1]) : 401;
	char name[128], *map, *host[3];
	unsigned long dptr;
	gdr_mh_t mh;
	int drv, k, d, r;
	size_t s;
	gdr_t g;

	if (rounds < 1 || rounds > MAXR)
		rounds = 401;
	probe_cuda_start(name, sizeof(name), &drv);
	printf("small copies, ns per call, p50 (min) of %d rounds of %d calls; %s, CUDA %d\n",
	       rounds, BLOCK, name, drv);
	g = gdr_open();
	if (!g || gdrmap_mem_alloc(0, SPAN, &dptr) ||
	    gdr_pin_buffer(g, dptr, SPAN, 0, 0, &mh) ||
	    gdr_map(g, mh, (void **)&map, SPAN)) {
		fprintf(stderr, "gdr_open/pin/map failed\n");
		return 1;
	}
	if (posix_memalign((void **)&host[0], 4096, SPAN) ||
	    posix_memalign((void **)&host[1], 4096, SPAN))
		return 1;
	MUST(cuMemHostRegister(host[1], SPAN, 0));
	MUST(cuMemAllocHost((void **)&host[2], SPAN));
	for (k = 0; k < 3; k++)
		memset(host[k], 0x5a + k, SPAN);
	for (d = 0; d < 2; d++) {
		copy_fn fs[2] = { d ? to_gdr : from_gdr,
				  d ? to_gdrmap : from_gdrmap };

		for (k = 0; k < 3; k++) {
			for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
				size_t n = sizes[s];
				double p[2];

				/* Let the library settle its choice. */
				for (r = 0; r < 64; r++)
					block(fs[1], mh, map, host[k], n);
				for (r = 0; r < rounds; r++) {
					int first = r & 1;

					t[first][r] = block(fs[first], mh, map,
							    host[k], n);
					t[!first][r] = block(fs[!first], mh,
							     map, host[k], n);
				}
				for (r = 0; r < 2; r++) {
					qsort(t[r], rounds, sizeof(double),
					      probe_cmp);
					p[r] = t[r][rounds / 2];
				}
				printf("%-5s %-10s %5zu B  gdr_copy %7.2f (%7.2f)  gdrmap_copy %7.2f (%7.2f)  ratio %.3f\n",
				       d ? "write" : "read", kinds[k], n,
				       p[0], t[0][0], p[1], t[1][0],
				       p[1] / p[0]);
			}
		}
	}
	MUST(cuMemHostUnregister(host[1]));
	gdr_unmap(g, mh, map, SPAN);
	gdr_unpin_buffer(g, mh);
	gdr_close(g);
	return 0;
}
