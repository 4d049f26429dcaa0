/* SPDX-License-Identifier: MIT */
/*
 * gdrdrv's own ioctls on every GPU through one fd: memory of each GPU
 * pinned whole at once, its info, mapped, read and written through the
 * BAR (checked against CUDA); nvidia_p2p_get_pages found each address on
 * its own GPU, as nvsim's per-GPU counters show.
 */
#include "multigpu.h"

int main(void)
{
	struct vm_mem m[MAX_GPUS];
	struct gdrdrv_get_info_v2_params info;
	volatile uint8_t *map[MAX_GPUS];
	uint64_t h[MAX_GPUS];
	long pages[MAX_GPUS], bad;
	const long want = VM_MEM_SIZE / GPU_PAGE;
	int ngpus, d, e, fd;

	ngpus = multi_init(2);
	fd = gdrdrv_open();
	for (d = 0; d < ngpus; d++) {
		pages[d] = nvsim_gpu_count(d, "pinned_pages");
		vm_mem_alloc(&m[d], d, false);
		gpu_fill(m[d].base, m[d].size, 300 + d);
	}
	for (d = 0; d < ngpus; d++) {
		REQUIRE(gdrdrv_pin(fd, m[d].base, m[d].size, &h[d]) == 0,
			"pin of %s", m[d].name);
		for (e = 0; e < ngpus; e++)
			CHECK(nvsim_gpu_count(e, "pinned_pages") ==
			      pages[e] + (e <= d ? want : 0),
			      "after pinning %s: GPU %d has %ld pinned pages",
			      m[d].name, e, nvsim_gpu_count(e, "pinned_pages"));
		CHECK_RET(gdrdrv_info(fd, h[d], &info), 0);
		CHECK(info.va == m[d].base && info.mapped_size == m[d].size,
		      "%s: info va %#llx size %#llx", m[d].name,
		      (unsigned long long)info.va,
		      (unsigned long long)info.mapped_size);
		map[d] = gdrdrv_mmap(fd, h[d], m[d].size);
		REQUIRE(map[d] != MAP_FAILED, "mmap of %s: %s", m[d].name,
			strerror(errno));
	}

	/* Every mapping its own GPU's bytes, both ways. */
	for (d = 0; d < ngpus; d++) {
		bad = map_mismatch(map[d], m[d].size, 300 + d);
		CHECK(bad < 0, "%s: BAR read wrong at +%#lx", m[d].name, bad);
		map_fill(map[d], m[d].size, 400 + d);
	}
	for (d = 0; d < ngpus; d++) {
		bad = gpu_mismatch(m[d].base, m[d].size, 400 + d);
		CHECK(bad < 0, "%s: BAR write wrong at +%#lx", m[d].name, bad);
	}

	for (d = 0; d < ngpus; d++) {
		CHECK(munmap((void *)map[d], m[d].size) == 0, "munmap: %s",
		      strerror(errno));
		CHECK_RET(gdrdrv_unpin(fd, h[d]), 0);
		CHECK(nvsim_gpu_count(d, "pinned_pages") == pages[d],
		      "GPU %d: %ld pinned pages after unpin", d,
		      nvsim_gpu_count(d, "pinned_pages"));
		vm_mem_free(&m[d]);
	}
	close(fd);
	return test_done();
}
