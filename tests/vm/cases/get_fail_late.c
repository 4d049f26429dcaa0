/* SPDX-License-Identifier: MIT */
/*
 * A get_pages that fails after the driver registered the free callback,
 * which may have run by then (nvsim's fail_gets_late, with the hook at
 * get_return holding the get until the memory's free has run the
 * callback).  The callback released the pin (it found it being got); the
 * failed get_pages must not release it again: the pin fails with the
 * driver's error, and gdrdrv's count, its module references and the
 * kernel log are as before (a second release drops the region's last
 * reference under the failing pin, and the module's twice).  Persistent
 * mode (no callback): the late failure only fails the pin, releasing
 * what it took once.
 */
#include <pthread.h>

#include "hook.h"

#define LEN		(2 * GPU_PAGE)
#define FAIL_LATE	"/sys/module/nvsim/parameters/fail_gets_late"

static int fd;

struct level {
	long gdrdrv, nvsim, mod, late;
	int pins;
};

static struct level level_now(void)
{
	unsigned long long bytes;
	int pins, left;

	pinned_line(getpid(), &bytes, &pins, &left);
	return (struct level) {
		.gdrdrv = gdrdrv_refcount(),
		.nvsim = nvsim_count("outstanding_pins"),
		.mod = module_refcnt("gdrdrv"),
		.late = nvsim_stat("late_failed_gets"),
		.pins = pins,
	};
}

static void check_back(const struct level *base, const char *how)
{
	struct level now = level_now();

	CHECK(now.gdrdrv == base->gdrdrv && now.nvsim == base->nvsim &&
	      now.mod == base->mod && now.pins == base->pins,
	      "%s: gdrdrv pins %ld, nvsim pins %ld, module references %ld, pins listed %d; were %ld, %ld, %ld, %d",
	      how, now.gdrdrv, now.nvsim, now.mod, now.pins, base->gdrdrv,
	      base->nvsim, base->mod, base->pins);
	CHECK(now.late == base->late + 1, "%s: the get did not fail late",
	      how);
}

static void no_more_failures(void)
{
	write_text(FAIL_LATE, "0");
}

struct call {
	pthread_t t;
	CUdeviceptr d;
	uint64_t h;
	int rc;
};

static void *pin_thread(void *arg)
{
	struct call *c = arg;

	c->rc = gdrdrv_pin(fd, c->d, LEN, &c->h);
	return NULL;
}

/* The callback runs while the get is held at its return, then it fails. */
static void callback_first(void)
{
	struct level base = level_now();
	struct call p = { .d = vm_alloc(LEN) };

	REQUIRE(write_text(FAIL_LATE, "1") == 0, "%s: %s", FAIL_LATE,
		strerror(errno));
	hook_arm("get_return", p.d, "callback", 20000);
	REQUIRE(pthread_create(&p.t, NULL, pin_thread, &p) == 0,
		"pthread_create");
	hook_wait_stopped();
	CU_OK(cuMemFree(p.d));
	pthread_join(p.t, NULL);
	hook_expect("done", "callback");
	CHECK(p.rc == -EIO, "the late-failing pin returned %d, want -EIO",
	      p.rc);
	check_back(&base, "callback, then the get failed");
}

/* No callback in between: the failed get releases what it took. */
static void just_late(void)
{
	struct level base = level_now();
	CUdeviceptr d = vm_alloc(LEN);
	uint64_t h;

	REQUIRE(write_text(FAIL_LATE, "1") == 0, "%s: %s", FAIL_LATE,
		strerror(errno));
	CHECK_RET(gdrdrv_pin(fd, d, LEN, &h), -EIO);
	check_back(&base, "a late failure");
	CU_OK(cuMemFree(d));
}

int main(void)
{
	if (access(FAIL_LATE, W_OK) || !hook_present()) {
		SKIP("%s or the hook: %s (an older nvsim)", FAIL_LATE,
		     strerror(errno));
		return test_done();
	}
	atexit(no_more_failures);
	vm_cuda_init();
	fd = gdrdrv_open();
	just_late();
	if (!gdrdrv_persistent(fd))
		callback_first();
	close(fd);
	return test_done();
}
