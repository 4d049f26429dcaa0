/* SPDX-License-Identifier: MIT */
/*
 * The life of a mapping through raw gdrdrv ioctls: pin, map, read and write
 * through the BAR, unmap, unpin, with every byte checked against what the
 * GPU side (cuMemcpy) sees.  Run with contiguous and with scattered GPU
 * pages (nvsim's scatter parameter), so that gdrdrv's mapping of page runs
 * is exercised both ways.
 */
#include "vmtest.h"

static const char scatter_param[] = "/sys/module/nvsim/parameters/scatter";

static void set_scatter(int on)
{
	FILE *f = fopen(scatter_param, "w");

	REQUIRE(f, "open %s: %s", scatter_param, strerror(errno));
	fprintf(f, "%d\n", on);
	REQUIRE(fclose(f) == 0, "write %s", scatter_param);
}

/* Pin [d + off, + len) of an allocation, map it, check both directions. */
static void one_range(int fd, CUdeviceptr d, size_t off, size_t len,
		      unsigned seed)
{
	struct gdrdrv_get_info_v2_params info;
	uint64_t addr = d + off, h;
	uint64_t start = addr & ~(GPU_PAGE - 1);
	uint64_t end = (addr + len + GPU_PAGE - 1) & ~(GPU_PAGE - 1);
	volatile uint8_t *map;
	long bad;

	gpu_fill(start, end - start, seed);
	CHECK_RET(gdrdrv_pin(fd, addr, len, &h), 0);
	if (h == ~0ULL)
		return;
	CHECK(h < (1ULL << 32), "handle %#llx not below 2^32",
	      (unsigned long long)h);
	CHECK_RET(gdrdrv_info(fd, h, &info), 0);
	CHECK(info.va == start, "va %#llx, want %#llx",
	      (unsigned long long)info.va, (unsigned long long)start);
	CHECK(info.mapped_size == end - start, "mapped_size %llu, want %llu",
	      (unsigned long long)info.mapped_size,
	      (unsigned long long)(end - start));
	CHECK(info.page_size == GPU_PAGE, "page_size %u", info.page_size);
	CHECK(info.mapping_type == GDRDRV_MAPPING_TYPE_NONE,
	      "mapping_type %u before mmap", info.mapping_type);

	/* gdrdrv maps only pins that start on a GPU page. */
	if (addr != start) {
		void *m = gdrdrv_mmap(fd, h, end - start);

		CHECK(m == MAP_FAILED && errno == EINVAL,
		      "mmap of a pin at +%#zx: %s", off & (GPU_PAGE - 1),
		      m == MAP_FAILED ? strerror(errno) : "succeeded");
		if (m != MAP_FAILED)
			munmap(m, end - start);
		CHECK_RET(gdrdrv_unpin(fd, h), 0);
		return;
	}

	map = gdrdrv_mmap(fd, h, end - start);
	CHECK(map != MAP_FAILED, "mmap %#llx bytes: %s",
	      (unsigned long long)(end - start), strerror(errno));
	if (map == MAP_FAILED) {
		CHECK_RET(gdrdrv_unpin(fd, h), 0);
		return;
	}
	CHECK_RET(gdrdrv_info(fd, h, &info), 0);
	CHECK(info.mapping_type == GDRDRV_MAPPING_TYPE_WC,
	      "mapping_type %u after mmap, want WC", info.mapping_type);

	bad = map_mismatch(map, end - start, seed);
	CHECK(bad < 0, "BAR read differs from cuMemcpyHtoD at +%#lx", bad);
	map_fill(map, end - start, seed + 1);
	bad = gpu_mismatch(start, end - start, seed + 1);
	CHECK(bad < 0, "cuMemcpyDtoH differs from BAR write at +%#lx", bad);
	/* And the GPU's writes show up in a mapping that already exists. */
	gpu_fill(start, end - start, seed + 2);
	bad = map_mismatch(map, end - start, seed + 2);
	CHECK(bad < 0, "BAR read after a new cuMemcpyHtoD at +%#lx", bad);

	CHECK(munmap((void *)map, end - start) == 0, "munmap: %s",
	      strerror(errno));
	CHECK_RET(gdrdrv_info(fd, h, &info), 0);
	CHECK(info.mapping_type == GDRDRV_MAPPING_TYPE_NONE,
	      "mapping_type %u after munmap", info.mapping_type);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CHECK_RET(gdrdrv_info(fd, h, &info), -EINVAL);
}

static void all_ranges(int fd, unsigned seed)
{
	static const struct {
		size_t alloc, off, len;
	} r[] = {
		{ 64 * KiB, 0, 64 * KiB },
		{ 1 * MiB, 0, 1 * MiB },
		{ 4 * MiB, 0, 4 * MiB },		/* 2 MiB aligned */
		{ 16 * MiB, 0, 16 * MiB },		/* many 2 MiB chunks */
		{ 1 * MiB, 128 * KiB, 256 * KiB },	/* inside */
		{ 1 * MiB, 64 * KiB, 1 },		/* one byte */
		{ 1 * MiB, 64 * KiB + 4096, 8192 },	/* unaligned */
		{ 1 * MiB, 1, 1 * MiB - 1 },
	};
	long pins0 = nvsim_count("outstanding_pins");

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		CUdeviceptr d = vm_alloc(r[i].alloc);

		one_range(fd, d, r[i].off, r[i].len, seed + 3 * i);
		CU_OK(cuMemFree(d));
		CHECK(nvsim_count("outstanding_pins") == pins0,
		      "range %zu: nvsim outstanding_pins %ld, was %ld", i,
		      nvsim_count("outstanding_pins"), pins0);
	}
}

int main(void)
{
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	printf("gdrdrv %s mode\n",
	       gdrdrv_persistent(fd) ? "persistent" : "non-persistent");

	set_scatter(0);
	all_ranges(fd, 10);
	set_scatter(1);
	all_ranges(fd, 100);
	set_scatter(0);

	CHECK(close(fd) == 0, "close: %s", strerror(errno));
	return test_done();
}
