/* SPDX-License-Identifier: MIT */
/*
 * Teardown paths racing each other on one pin: cuMemFree (the free
 * callback in non-persistent mode) against unpin, against close of the
 * fd, and against mmap.  Whatever the order, every call returns one of its
 * documented results, nothing hangs (the runner's hung-task and time
 * limits), the kernel log stays clean and no pin is left.
 */
#include <pthread.h>

#include "vmtest.h"

#define ROUNDS 40

enum other { UNPIN, CLOSE, MMAP };

struct racer {
	pthread_barrier_t *go;
	int fd;
	uint64_t h;
	enum other what;
	int rc;
	void *map;
};

static void *other_side(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(r->go);
	switch (r->what) {
	case UNPIN:
		r->rc = gdrdrv_unpin(r->fd, r->h);
		break;
	case CLOSE:
		r->rc = close(r->fd) ? -errno : 0;
		break;
	case MMAP:
		r->map = gdrdrv_mmap(r->fd, r->h, 2 * GPU_PAGE);
		r->rc = r->map == MAP_FAILED ? -errno : 0;
		break;
	}
	return NULL;
}

static void one(enum other what, int persistent)
{
	static const char *name[] = { "unpin", "close", "mmap" };
	pthread_barrier_t go;
	struct racer r = { .go = &go, .what = what };
	CUdeviceptr d = vm_alloc(2 * GPU_PAGE);
	pthread_t t;
	uint8_t byte;
	uint32_t flag;

	pthread_barrier_init(&go, NULL, 2);
	r.fd = gdrdrv_open();
	REQUIRE(gdrdrv_pin(r.fd, d, 2 * GPU_PAGE, &r.h) == 0, "pin failed");
	REQUIRE(pthread_create(&t, NULL, other_side, &r) == 0, "thread");
	pthread_barrier_wait(&go);
	CU_OK(cuMemFree(d));
	pthread_join(t, NULL);
	pthread_barrier_destroy(&go);

	switch (what) {
	case UNPIN:
		CHECK(r.rc == 0, "unpin racing cuMemFree: %s", strerror(-r.rc));
		break;
	case CLOSE:
		CHECK(r.rc == 0, "close racing cuMemFree: %s", strerror(-r.rc));
		return;
	case MMAP:
		/* Before the callback it maps (and then faults); after, EINVAL. */
		if (r.rc == 0) {
			if (!persistent)
				CHECK(read_faults(r.map, &byte) == SIGBUS,
				      "mapping that raced the free: %s",
				      fault_sig ? strsignal(fault_sig) :
						  "readable");
			munmap(r.map, 2 * GPU_PAGE);
		} else {
			CHECK(!persistent && r.rc == -EINVAL,
			      "mmap racing cuMemFree: %s", strerror(-r.rc));
		}
		CHECK_RET(gdrdrv_cb_flag(r.fd, r.h, &flag), 0);
		CHECK(flag == !persistent, "%s: flag %u", name[what], flag);
		CHECK_RET(gdrdrv_unpin(r.fd, r.h), 0);
		break;
	}
	close(r.fd);
}

int main(void)
{
	int fd, persistent;

	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	close(fd);
	for (int i = 0; i < ROUNDS; i++) {
		one(UNPIN, persistent);
		one(CLOSE, persistent);
		one(MMAP, persistent);
	}
	CHECK(nvsim_count("outstanding_pins") == 0, "outstanding_pins %ld",
	      nvsim_count("outstanding_pins"));
	CHECK(nvsim_count("used_pages") == 0, "used_pages %ld",
	      nvsim_count("used_pages"));
	return test_done();
}
