/* SPDX-License-Identifier: MIT */
/*
 * gdrmap_copy_* on the simulated GPU, through gdrdrv (the default
 * backend here): sizes from one byte to 3 MiB, both directions, by the
 * best-path calls (through their measuring and on) and by each forced
 * path (the staged path too, from this pageable host buffer), every byte
 * checked against the GPU's own view and the poison around it; the choice
 * settles on a path for every size.  DMA runs on
 * the simulator's CUDA (sim/libcuda), whose copies reach the same
 * memory gdrdrv maps.
 */
#include "copy_paths.h"
#include "gdrapi.h"
#include "vmtest.h"

#define AREA	(4 * MiB)

static uint8_t host[AREA + 128];

/* The n bytes at off of d hold seed's pattern, the 64 either side seed
 * + 1's: -1, or the first wrong offset from d + off - 64. */
static long region_wrong(CUdeviceptr d, size_t off, size_t n, unsigned seed)
{
	static uint8_t seen[AREA + 128];
	size_t i;

	if (cuMemcpyDtoH(seen, d + off - 64, n + 128) != CUDA_SUCCESS)
		return 0;
	for (i = 0; i < n + 128; i++) {
		int in = i >= 64 && i < n + 64;

		if (seen[i] != pattern_byte(in ? i - 64 : i, in ? seed : seed + 1))
			return (long)i;
	}
	return -1;
}

static void around(CUdeviceptr d, size_t off, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n + 128; i++)
		host[i] = pattern_byte(i, seed + 1);
	REQUIRE(cuMemcpyHtoD(d + off - 64, host, n + 128) == CUDA_SUCCESS,
		"poison the GPU side");
}

/* Does path refuse n bytes from and to host (pageable memory)? */
static int refused(int path, size_t n)
{
	return copy_path_refused(path, n, 0, !copy_one_cpu());
}

static void round_trip(gdr_mh_t mh, char *map, CUdeviceptr d, size_t off,
		       size_t n, int path, unsigned seed)
{
	long bad;
	int err;

	around(d, off, n, seed);
	fill_pattern(host, n, seed);
	err = path ? gdrmap_copy_to_mapping_via(mh, map + off, host, n, path) :
		     gdrmap_copy_to_mapping(mh, map + off, host, n);
	if (refused(path, n)) {
		CHECK(err == EOPNOTSUPP, "path %d refuses a write of %zu (%d)",
		      path, n, err);
	} else {
		CHECK(err == 0, "write %zu at +%zu by path %d: %d", n, off,
		      path, err);
		bad = region_wrong(d, off, n, seed);
		CHECK(bad == -1, "write %zu at +%zu by path %d: byte %ld wrong",
		      n, off, path, bad);
	}
	gpu_fill(d + off, n, seed + 7);
	memset(host, 0x5a, n + 64);
	err = path ? gdrmap_copy_from_mapping_via(mh, host, map + off, n, path) :
		     gdrmap_copy_from_mapping(mh, host, map + off, n);
	if (refused(path, n)) {
		CHECK(err == EOPNOTSUPP, "path %d refuses a read of %zu (%d)",
		      path, n, err);
		return;
	}
	CHECK(err == 0, "read %zu at +%zu by path %d: %d", n, off, path, err);
	bad = find_mismatch(host, n, seed + 7);
	CHECK(bad == -1, "read %zu at +%zu by path %d: byte %ld wrong", n, off,
	      path, bad);
	for (size_t i = n; i < n + 64; i++)
		if (host[i] != 0x5a) {
			CHECK(0, "read %zu wrote past its end", n);
			break;
		}
}

int main(void)
{
	static const size_t sizes[] = { 1, 8, 100, 4099, 65536 + 5, 300000,
					3 * MiB };
	gdr_info_t info;
	CUdeviceptr d;
	gdr_mh_t mh;
	void *va = NULL;
	char *map;
	size_t i, off;
	int k, path, got[2];
	gdr_t g;

	vm_cuda_init();
	g = gdr_open();
	REQUIRE(g, "gdr_open: %s", gdrmap_last_error());
	d = vm_alloc(AREA + 2 * GPU_PAGE);
	CHECK_RET(gdr_pin_buffer(g, d, AREA + GPU_PAGE, 0, 0, &mh), 0);
	CHECK_RET(gdr_map(g, mh, &va, AREA + GPU_PAGE), 0);
	CHECK_RET(gdr_get_info(g, mh, &info), 0);
	REQUIRE(va, "mapped");
	map = (char *)va + (d - info.va);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		off = 64 + (i * 4099) % 4096;
		for (k = 0; k < 48; k++)
			round_trip(mh, map, d, off, sizes[i], 0,
				   (unsigned)(i * 50 + k));
		for (path = 1; path <= GDRMAP_COPY_PATH_STAGED; path++)
			round_trip(mh, map, d, off, sizes[i], path,
				   (unsigned)(i * 50 + 40 + path));
		/* Settled, or measuring again and settling (COPY_SETTLE). */
		for (k = 0; k <= COPY_SETTLE; k++) {
			CHECK_RET(gdrmap_copy_path(mh, 0, sizes[i], &got[0]), 0);
			CHECK_RET(gdrmap_copy_path(mh, 1, sizes[i], &got[1]), 0);
			if ((got[0] && got[1]) || k == COPY_SETTLE)
				break;
			round_trip(mh, map, d, off, sizes[i], 0,
				   (unsigned)(i * 50 + k));
		}
		CHECK(got[0] >= 1 && got[0] <= GDRMAP_COPY_PATH_STAGED &&
		      got[1] >= 1 && got[1] <= GDRMAP_COPY_PATH_STAGED &&
		      !refused(got[0], sizes[i]) && !refused(got[1], sizes[i]),
		      "%zu bytes settled: read %d, write %d", sizes[i], got[0],
		      got[1]);
	}
	CHECK_RET(gdr_unmap(g, mh, va, AREA + GPU_PAGE), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_close(g), 0);
	cuMemFree(d);
	return test_done();
}
