/* SPDX-License-Identifier: MIT */
/*
 * mmap of a pin racing its teardown, many times with varied timing: the
 * free callback (cuMemFree, non-persistent mode) or unpin (both modes).
 * An mmap that succeeds must still end up zapped once cuMemFree or unpin
 * has returned, or the CPU keeps a mapping of GPU pages that were freed
 * and may already belong to someone else.
 *
 * The window this probes: ->mmap fills the PTEs before the kernel links
 * the new VMA into the file's address space, so a zap whose
 * unmap_mapping_range runs in between does not see it.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "vmtest.h"

#define ROUNDS 1000

static pthread_barrier_t go;
static atomic_int spin_mmap;

struct arg {
	int fd;
	uint64_t h;
	void *map;
};

static void spin(int n)
{
	for (volatile int i = 0; i < n; i++)
		;
}

static void *mapper(void *p)
{
	struct arg *a = p;

	pthread_barrier_wait(&go);
	spin(atomic_load(&spin_mmap));
	a->map = gdrdrv_mmap(a->fd, a->h, GPU_PAGE);
	return NULL;
}

/* ROUNDS races of mmap against cuMemFree (by_free) or unpin; how many
 * successful mappings were left readable. */
static int race(int fd, int by_free)
{
	int stale = 0, mapped = 0;
	unsigned seed = 1;

	for (int i = 0; i < ROUNDS; i++) {
		CUdeviceptr d = vm_alloc(GPU_PAGE);
		struct arg a = { .fd = fd };
		pthread_t t;
		uint8_t byte;

		gpu_fill(d, GPU_PAGE, 111);
		REQUIRE(gdrdrv_pin(fd, d, GPU_PAGE, &a.h) == 0, "pin");
		atomic_store(&spin_mmap, rand_r(&seed) % 20000);
		REQUIRE(pthread_create(&t, NULL, mapper, &a) == 0, "thread");
		pthread_barrier_wait(&go);
		spin(rand_r(&seed) % 20000);
		if (by_free)
			CU_OK(cuMemFree(d));
		else
			CHECK_RET(gdrdrv_unpin(fd, a.h), 0);
		pthread_join(t, NULL);
		if (a.map != MAP_FAILED) {
			mapped++;
			if (read_faults(a.map, &byte) != SIGBUS && !stale++)
				fprintf(stderr, "%s, round %d: mapping readable after it returned (byte %#x)\n",
					by_free ? "cuMemFree" : "unpin", i,
					byte);
			munmap(a.map, GPU_PAGE);
		}
		if (by_free)
			CHECK_RET(gdrdrv_unpin(fd, a.h), 0);
		else
			CU_OK(cuMemFree(d));
	}
	printf("mmap against %s: %d rounds, %d mapped first, %d left readable\n",
	       by_free ? "cuMemFree" : "unpin", ROUNDS, mapped, stale);
	return stale;
}

int main(void)
{
	int fd, n;

	vm_cuda_init();
	fd = gdrdrv_open();
	pthread_barrier_init(&go, NULL, 2);
	n = race(fd, 0);
	CHECK(n == 0, "%d mappings outlived unpin", n);
	if (!gdrdrv_persistent(fd)) {
		n = race(fd, 1);
		CHECK(n == 0, "%d mappings outlived the free callback", n);
	}
	pthread_barrier_destroy(&go);
	close(fd);
	CHECK(nvsim_count("outstanding_pins") == 0, "outstanding_pins %ld",
	      nvsim_count("outstanding_pins"));
	return test_done();
}
