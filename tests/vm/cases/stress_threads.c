/* SPDX-License-Identifier: MIT */
/*
 * Eight threads pin, map, copy both ways, unmap and unpin at once for
 * GDRMAP_STRESS_SECS seconds (default 10): two share one gdrdrv fd, two
 * have their own, four share one libgdrapi instance.  In non-persistent
 * mode some rounds free the memory under a live mapping, so free callbacks
 * run concurrently with the other threads' pins and unpins.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "gdrapi.h"
#include "vmtest.h"

#define NTHREADS 8

static int shared_fd, persistent;
static gdr_t shared_gdr;
static time_t deadline;
static atomic_long rounds, failures;

#define TFAIL(...)							\
	do {								\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		atomic_fetch_add(&failures, 1);				\
	} while (0)

static size_t pick_size(unsigned *seed)
{
	static const size_t sizes[] = {
		64 * KiB, 128 * KiB, 192 * KiB, 256 * KiB, 1 * MiB,
	};

	return sizes[rand_r(seed) % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* One round through raw ioctls; the memory is freed under the mapping
 * when free_first is set (non-persistent mode only). */
static void raw_round(int fd, unsigned *seed, int free_first)
{
	size_t len = pick_size(seed);
	unsigned pat = (unsigned)rand_r(seed);
	volatile uint8_t *m;
	CUdeviceptr d;
	uint32_t flag;
	uint64_t h;
	long bad;
	int rc;

	if (cuMemAlloc(&d, len) != CUDA_SUCCESS) {
		TFAIL("cuMemAlloc %zu failed", len);
		return;
	}
	gpu_fill(d, len, pat);
	rc = gdrdrv_pin(fd, d, len, &h);
	if (rc) {
		TFAIL("pin %zu: %s", len, strerror(-rc));
		cuMemFree(d);
		return;
	}
	m = gdrdrv_mmap(fd, h, len);
	if (m == MAP_FAILED) {
		TFAIL("mmap %zu: %s", len, strerror(errno));
	} else {
		bad = map_mismatch(m, len, pat);
		if (bad >= 0)
			TFAIL("BAR read differs at +%#lx of %zu", bad, len);
		map_fill(m, len, pat + 1);
		bad = gpu_mismatch(d, len, pat + 1);
		if (bad >= 0)
			TFAIL("BAR write lost at +%#lx of %zu", bad, len);
		if (free_first) {
			cuMemFree(d);
			if (gdrdrv_cb_flag(fd, h, &flag) || flag != 1)
				TFAIL("callback flag not set after free");
		}
		munmap((void *)m, len);
	}
	rc = gdrdrv_unpin(fd, h);
	if (rc)
		TFAIL("unpin: %s", strerror(-rc));
	if (!free_first || m == MAP_FAILED)
		cuMemFree(d);
}

/* One round through libgdrapi at an address inside the allocation. */
static void lib_round(unsigned *seed)
{
	size_t len = pick_size(seed), off = (size_t)(rand_r(seed) % 4096);
	size_t n = len - off - (size_t)(rand_r(seed) % 4096);
	unsigned pat = (unsigned)rand_r(seed);
	uint8_t *buf = malloc(len);
	gdr_info_t info;
	CUdeviceptr d;
	gdr_mh_t mh;
	void *base;
	char *p;
	int rc;

	if (!buf || cuMemAlloc(&d, len) != CUDA_SUCCESS) {
		TFAIL("allocation of %zu failed", len);
		free(buf);
		return;
	}
	rc = gdr_pin_buffer(shared_gdr, d + off, n, 0, 0, &mh);
	if (rc) {
		TFAIL("gdr_pin_buffer: %d", rc);
		goto out;
	}
	rc = gdr_map(shared_gdr, mh, &base, n);
	if (rc) {
		TFAIL("gdr_map: %d", rc);
		goto unpin;
	}
	if (gdr_get_info(shared_gdr, mh, &info)) {
		TFAIL("gdr_get_info failed");
		goto unmap;
	}
	p = (char *)base + (d + off - info.va);
	fill_pattern(buf, n, pat);
	if (gdr_copy_to_mapping(mh, p, buf, n))
		TFAIL("gdr_copy_to_mapping failed");
	if (gpu_mismatch(d + off, n, pat) >= 0)
		TFAIL("gdr_copy_to_mapping: GPU sees other data");
	gpu_fill(d + off, n, pat + 1);
	memset(buf, 0, n);
	if (gdr_copy_from_mapping(mh, buf, p, n))
		TFAIL("gdr_copy_from_mapping failed");
	if (find_mismatch(buf, n, pat + 1) >= 0)
		TFAIL("gdr_copy_from_mapping: other data than the GPU's");
unmap:
	if (gdr_unmap(shared_gdr, mh, base, n))
		TFAIL("gdr_unmap failed");
unpin:
	if (gdr_unpin_buffer(shared_gdr, mh))
		TFAIL("gdr_unpin_buffer failed");
out:
	cuMemFree(d);
	free(buf);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned seed = (unsigned)id * 7919u + 1;
	int fd = id < 2 ? shared_fd : id < 4 ? gdrdrv_open() : -1;

	vm_cuda_init();
	while (time(NULL) < deadline && atomic_load(&failures) < 20) {
		if (id < 4)
			raw_round(fd, &seed, !persistent && rand_r(&seed) % 4 == 0);
		else
			lib_round(&seed);
		atomic_fetch_add(&rounds, 1);
	}
	if (fd >= 0 && fd != shared_fd)
		close(fd);
	return NULL;
}

int main(void)
{
	const char *env = getenv("GDRMAP_STRESS_SECS");
	int secs = env ? atoi(env) : 10;
	pthread_t t[NTHREADS];

	vm_cuda_init();
	shared_fd = gdrdrv_open();
	persistent = gdrdrv_persistent(shared_fd);
	shared_gdr = gdr_open();
	REQUIRE(shared_gdr, "gdr_open failed");
	deadline = time(NULL) + (secs > 0 ? secs : 1);

	for (long i = 0; i < NTHREADS; i++)
		REQUIRE(pthread_create(&t[i], NULL, worker, (void *)i) == 0,
			"pthread_create");
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);

	printf("%ld rounds in %d s, %s mode\n", atomic_load(&rounds), secs,
	       persistent ? "persistent" : "non-persistent");
	CHECK(atomic_load(&failures) == 0, "%ld failures",
	      atomic_load(&failures));
	CHECK(atomic_load(&rounds) >= NTHREADS, "only %ld rounds",
	      atomic_load(&rounds));
	CHECK_RET(gdr_close(shared_gdr), 0);
	close(shared_fd);
	CHECK(nvsim_count("outstanding_pins") == 0,
	      "nvsim outstanding_pins %ld", nvsim_count("outstanding_pins"));
	return test_done();
}
