/* SPDX-License-Identifier: MIT */
/*
 * mmap of a pin racing the free callback (non-persistent mode), many times
 * with varied timing: an mmap that succeeds must still end up zapped once
 * cuMemFree has returned, or the CPU keeps a mapping of GPU pages that
 * were freed and may already belong to someone else.
 *
 * The window this probes: ->mmap fills the PTEs before the kernel links
 * the new VMA into the file's address space, so a callback whose
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

int main(void)
{
	int fd, stale = 0, mapped = 0;
	unsigned seed = 1;

	vm_cuda_init();
	fd = gdrdrv_open();
	if (gdrdrv_persistent(fd)) {
		SKIP("persistent pins are not invalidated by cuMemFree");
		close(fd);
		return test_done();
	}
	pthread_barrier_init(&go, NULL, 2);
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
		CU_OK(cuMemFree(d));
		pthread_join(t, NULL);
		if (a.map != MAP_FAILED) {
			mapped++;
			if (read_faults(a.map, &byte) != SIGBUS) {
				if (!stale++)
					fprintf(stderr, "round %d: mapping readable after cuMemFree returned (byte %#x)\n",
						i, byte);
			}
			munmap(a.map, GPU_PAGE);
		}
		CHECK_RET(gdrdrv_unpin(fd, a.h), 0);
	}
	pthread_barrier_destroy(&go);
	printf("%d rounds, %d mapped before the callback, %d left readable\n",
	       ROUNDS, mapped, stale);
	CHECK(stale == 0, "%d of %d mappings outlived the free callback", stale,
	      mapped);
	close(fd);
	CHECK(nvsim_count("outstanding_pins") == 0, "outstanding_pins %ld",
	      nvsim_count("outstanding_pins"));
	return test_done();
}
