/* SPDX-License-Identifier: MIT */
/*
 * What the tests of the rm backend share (tests/unit/test_rm_*.c): the
 * library on fake_cuda and the fake nvidia.ko RM (fake_rm.h), whole-range
 * copies both ways checked byte by byte against the GPU's view, the
 * library's messages on stderr, and the closing verdict: nothing the
 * library made is left in the fake RM but its own client, and no CUDA
 * call ran outside the owner's context.
 */
#ifndef GDRMAP_TEST_RM_PINS_H
#define GDRMAP_TEST_RM_PINS_H

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_rm.h"
#include "owner_pins.h"

static inline gdr_t rm_open(void)
{
	char why[GDR_WHY_LEN];
	int err = 0;
	gdr_t g;

	g = gdr_open_backend(&gdr_backend_rm, why, sizeof(why), &err);
	CHECK(g != NULL, "the rm backend opens on the fake: %s (%d)", why,
	      err);
	return g;
}

/* The pin's window and mapping state. */
static inline gdr_info_t rm_info(gdr_t g, gdr_mh_t mh)
{
	gdr_info_t info;

	memset(&info, 0, sizeof(info));
	CHECK_RET(gdr_get_info(g, mh, &info), 0);
	return info;
}

/*
 * Both ways over [p, +n) of device memory (one allocation's), through m,
 * the mapping of p: the GPU side poisoned, the CPU writes, every byte of
 * the GPU's view checked; then the GPU writes and the CPU reads into a
 * poisoned buffer, every byte and a guard byte each side checked.
 */
static inline void rm_both_ways(gdr_mh_t mh, char *m, CUdeviceptr p,
				size_t n, unsigned int seed, const char *what)
{
	unsigned char *data = malloc(n), *gpu = malloc(n + 2);
	size_t i, bad = 0;

	if (!data || !gpu || !m) {
		CHECK(0, "%s: no buffers or no mapping", what);
		free(data);
		free(gpu);
		return;
	}
	memset(gpu, POISON, n);
	CHECK(fake_gpu_rw(p, gpu, n, 1) == 0, "%s: poison the GPU side", what);
	pattern(data, n, seed);
	CHECK_RET(gdr_copy_to_mapping(mh, m, data, n), 0);
	memset(gpu, 0xa5, n);
	CHECK(fake_gpu_rw(p, gpu, n, 0) == 0, "%s: read the GPU side", what);
	for (i = 0; i < n; i++)
		bad += gpu[i] != data[i];
	CHECK(bad == 0, "%s: %zu of %zu bytes wrong on the GPU after a write through the mapping",
	      what, bad, n);

	pattern(data, n, seed + 7777);
	CHECK(fake_gpu_rw(p, data, n, 1) == 0, "%s: write the GPU side", what);
	memset(gpu, POISON, n + 2);
	CHECK_RET(gdr_copy_from_mapping(mh, gpu + 1, m, n), 0);
	bad = gpu[0] != POISON || gpu[n + 1] != POISON;
	for (i = 0; i < n; i++)
		bad += gpu[i + 1] != data[i];
	CHECK(bad == 0, "%s: %zu of %zu bytes wrong in a read through the mapping",
	      what, bad, n);
	free(data);
	free(gpu);
}

/* Pin [p, +n) and map its whole window; the mapping of p, or NULL.  The
 * pin must be mapped write-combined, not copy-only. */
static inline char *rm_pin_map(gdr_t g, CUdeviceptr p, size_t n,
			       gdr_mh_t *mh, char **base, gdr_info_t *info)
{
	*base = NULL;
	CHECK_RET(gdr_pin_buffer(g, p, n, 0, 0, mh), 0);
	*info = rm_info(g, *mh);
	CHECK(info->va <= p && info->va + info->mapped_size >= p + n,
	      "the window [0x%llx, +%llu) holds [0x%llx, +%zu)",
	      (unsigned long long)info->va,
	      (unsigned long long)info->mapped_size, (unsigned long long)p,
	      n);
	CHECK_RET(gdr_map(g, *mh, (void **)base, info->mapped_size), 0);
	*info = rm_info(g, *mh);
	CHECK(info->mapped && info->mapping_type == GDR_MAPPING_TYPE_WC,
	      "[0x%llx, +%zu) is mapped write-combined, not copy-only (type %d)",
	      (unsigned long long)p, n, info->mapping_type);
	return *base ? *base + (p - info->va) : NULL;
}

/* The 8-byte buffers p[0..n) other than p[skip] that lie inside the
 * window of info (mapped at base): each read through the mapping after
 * the GPU wrote it, every one checked; how many there were. */
static inline int rm_neighbour_reads(gdr_mh_t mh, const char *base,
				     const gdr_info_t *info,
				     const CUdeviceptr *p, int n, int skip)
{
	uint64_t v, r;
	int i, inside = 0;

	for (i = 0; i < n; i++) {
		if (i == skip || p[i] < info->va ||
		    p[i] + 8 > info->va + info->mapped_size)
			continue;
		inside++;
		v = 0x4321000000000000ULL | ((uint64_t)skip << 16) |
		    (uint64_t)i;
		r = 0;
		CHECK(fake_gpu_rw(p[i], &v, 8, 1) == 0, "GPU");
		CHECK_RET(gdr_copy_from_mapping(mh, &r,
				base + (p[i] - info->va), 8), 0);
		CHECK(r == v, "neighbour %d reads through the window", i);
	}
	return inside;
}

static inline void rm_unmap_unpin(gdr_t g, gdr_mh_t mh, char *base,
				  size_t len)
{
	if (base)
		CHECK_RET(gdr_unmap(g, mh, base, len), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
}

/* The exports the fake made, counted by rm_count_export when a test sets
 * fake_rm_after_export to it. */
static int rm_exports;

static inline void rm_count_export(CUdeviceptr va, uint64_t len)
{
	(void)va, (void)len;
	rm_exports++;
}

/* Pin, map and check [p, +8) both ways; the exports the pin made (with
 * rm_count_export as the fake's hook). */
static inline int rm_pin_check8(gdr_t g, CUdeviceptr p, unsigned int seed,
				const char *what)
{
	gdr_info_t info;
	gdr_mh_t mh;
	char *base, *m;

	rm_exports = 0;
	m = rm_pin_map(g, p, 8, &mh, &base, &info);
	if (m)
		rm_both_ways(mh, m, p, 8, seed, what);
	rm_unmap_unpin(g, mh, base, info.mapped_size);
	return rm_exports;
}

/* The library's stderr, between rm_capture_begin and rm_capture_end (a
 * memfd in its place). */
static int rm_saved_stderr = -1, rm_captured = -1;

static inline void rm_capture_begin(void)
{
	fflush(stderr);
	rm_captured = memfd_create("stderr", MFD_CLOEXEC);
	rm_saved_stderr = dup(2);
	CHECK(rm_captured >= 0 && rm_saved_stderr >= 0 &&
	      dup2(rm_captured, 2) == 2, "capture stderr");
}

/* What was written, NUL-terminated, into buf. */
static inline const char *rm_capture_end(char *buf, size_t len)
{
	ssize_t n;

	fflush(stderr);
	dup2(rm_saved_stderr, 2);
	close(rm_saved_stderr);
	n = pread(rm_captured, buf, len - 1, 0);
	close(rm_captured);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/*
 * The verdict.  Left in the fake RM: the library's one client on its one
 * control file, with a device and a subdevice for each of the gpus GPUs
 * it pinned memory of; no duplicate, no mapping, no address space mapped
 * through it; no request nvidia.ko would refuse outright; no client of
 * another process used; no CUDA call outside the owner's context.
 */
static inline int rm_done(int gpus)
{
	struct fake_rm_stats st;

	fake_rm_stats(&st);
	CHECK(st.clients == 1 && st.files == 1,
	      "the library keeps one client on one control file (%d clients, %d files)",
	      st.clients, st.files);
	CHECK(st.devices == gpus && st.subdevices == gpus,
	      "one device and one subdevice per GPU used, %d (%d, %d)", gpus,
	      st.devices, st.subdevices);
	CHECK(st.dups == 0 && st.rm_maps == 0 && st.cpu_bytes == 0,
	      "left behind: %d duplicates, %d RM mappings, %zu bytes mapped",
	      st.dups, st.rm_maps, st.cpu_bytes);
	CHECK(st.refused == 0, "%d requests nvidia.ko refuses outright; the last: %s",
	      st.refused, fake_rm_last_refusal());
	CHECK(st.foreign == 0, "%d calls named a client of another process",
	      st.foreign);
	return owner_done();
}

/* The rm backend opened on the fake, GPU 1's primary context current,
 * exports counted (rm_exports); NULL (a failed check) if it would not
 * open. */
static inline gdr_t rm_start_counting(void)
{
	gdr_t g;

	fake_rm_install();
	fake_enter_start(START_OWN_PRIMARY, 1);
	g = rm_open();
	fake_rm_after_export = rm_count_export;
	return g;
}

/* Undo rm_start_counting; the test's exit status (rm_done). */
static inline int rm_stop_counting(gdr_t g)
{
	fake_rm_after_export = NULL;
	CHECK_RET(gdr_close(g), 0);
	fake_leave_start(START_OWN_PRIMARY, 1);
	return rm_done(1);
}

#endif /* GDRMAP_TEST_RM_PINS_H */
