/* SPDX-License-Identifier: MIT */
/*
 * The mapping is pulled away while another thread is reading it: by the
 * free callback (cuMemFree, non-persistent mode) or by unpin (both modes).
 * The reader must see only the right data and then SIGBUS - never other
 * data, never a hang - and the pin must still release cleanly.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "vmtest.h"

#define ROUNDS 20

struct reader {
	volatile uint8_t *m;
	size_t len;
	unsigned seed;
	atomic_int started;
	int sig;
	long wrong;		/* offset of a wrong byte seen, or -1 */
};

static _Thread_local sigjmp_buf reader_jmp;
static _Thread_local volatile int reader_sig;

static void reader_fault(int sig)
{
	reader_sig = sig;
	siglongjmp(reader_jmp, 1);
}

static void *reader(void *arg)
{
	struct reader *r = arg;
	volatile size_t i = 0;

	r->wrong = -1;
	if (sigsetjmp(reader_jmp, 1)) {
		r->sig = reader_sig;
		return NULL;
	}
	for (;;) {
		if (r->m[i] != pattern_byte(i, r->seed)) {
			r->wrong = (long)i;
			return NULL;
		}
		i = (i + 4099) % r->len;
		if (!atomic_load(&r->started))
			atomic_store(&r->started, 1);
	}
}

static void one(int fd, int by_free, unsigned seed)
{
	const size_t len = 4 * GPU_PAGE;
	struct reader r = { .len = len, .seed = seed };
	CUdeviceptr d = vm_alloc(len);
	pthread_t t;
	uint64_t h;

	gpu_fill(d, len, seed);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");
	r.m = gdrdrv_mmap(fd, h, len);
	REQUIRE(r.m != MAP_FAILED, "mmap: %s", strerror(errno));
	REQUIRE(pthread_create(&t, NULL, reader, &r) == 0, "pthread_create");
	while (!atomic_load(&r.started))
		sched_yield();
	usleep(1000 * (seed % 20));

	if (by_free) {
		CU_OK(cuMemFree(d));
		pthread_join(t, NULL);
		CHECK_RET(gdrdrv_unpin(fd, h), 0);
	} else {
		CHECK_RET(gdrdrv_unpin(fd, h), 0);
		pthread_join(t, NULL);
		CU_OK(cuMemFree(d));
	}
	CHECK(r.wrong < 0, "reader saw a wrong byte at +%#lx", r.wrong);
	CHECK(r.sig == SIGBUS, "reader ended with %s, want SIGBUS",
	      r.sig ? strsignal(r.sig) : "no signal");
	munmap((void *)r.m, len);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = reader_fault };
	int fd, persistent;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	for (unsigned i = 0; i < ROUNDS; i++) {
		one(fd, 0, 200 + i);
		if (!persistent)
			one(fd, 1, 300 + i);
	}
	close(fd);
	CHECK(nvsim_count("outstanding_pins") == 0, "outstanding_pins %ld",
	      nvsim_count("outstanding_pins"));
	return test_done();
}
