/* SPDX-License-Identifier: MIT */
/*
 * Every order of unpin against the freeing of the memory under the pin,
 * forced with nvsim's hook (/proc/driver/nvsim/hook, sim/nvsim/nvsim_hooks.c)
 * instead of hoped for from timing:
 *
 *  between    the free callback runs to completion, and NVIDIA frees the
 *             page table, after unpin handed it to put_pages and before
 *             put_pages looks it up (callback mode);
 *  recycle    the same, and then another thread pins: the freed table
 *             must not become that pin's before the put_pages of the old
 *             one is done, or that put_pages would release the new pin
 *             (callback mode; nvsim reuses freed tables newest first);
 *  running    put_pages arrives while the callback runs, and waits for it
 *             (callback mode);
 *  consumed   the callback has consumed the pin when unpin comes: unpin
 *             must not call put_pages (callback mode);
 *  put-first  put_pages releases the pin, then the memory is freed: no
 *             callback (both modes);
 *  free-first the memory is freed between unlock and put_pages of a
 *             persistent pin, which keeps it (persistent mode);
 *  early      the memory is freed after get_pages registered the callback
 *             and before it returned: the callback consumes the pin
 *             before gdrdrv has its table; the pin succeeds, reads as
 *             freed, cannot be mapped, and unpin calls no put_pages
 *             (callback mode).
 * Each ends with the pin counts of gdrdrv and nvsim back where they were,
 * no access through the old mapping, and a clean kernel log (the runner).
 */
#include <pthread.h>

#include "hook.h"

#define LEN	(2 * GPU_PAGE)

static int fd;

struct counts {
	long gdrdrv, nvsim, callbacks, stale, puts;
};

static struct counts counts_now(void)
{
	return (struct counts) {
		.gdrdrv = gdrdrv_refcount(),
		.nvsim = nvsim_count("outstanding_pins"),
		.callbacks = nvsim_stat("callbacks_fired"),
		.stale = nvsim_stat("stale_puts"),
		.puts = nvsim_stat("put_pages_requests"),
	};
}

/* The pins are back to what they were before the case pinned. */
static void check_released(const struct counts *before, const char *name)
{
	struct counts now = counts_now();

	CHECK(now.gdrdrv == before->gdrdrv, "%s: gdrdrv holds %ld pins, had %ld",
	      name, now.gdrdrv, before->gdrdrv);
	CHECK(now.nvsim == before->nvsim, "%s: nvsim has %ld pins, had %ld",
	      name, now.nvsim, before->nvsim);
}

/* A pinned, mapped and touched buffer. */
struct buf {
	CUdeviceptr d;
	uint64_t h;
	volatile uint8_t *m;
	unsigned seed;
};

static void buf_make(struct buf *b, unsigned seed)
{
	b->seed = seed;
	b->d = vm_alloc(LEN);
	gpu_fill(b->d, LEN, seed);
	REQUIRE(gdrdrv_pin(fd, b->d, LEN, &b->h) == 0, "pin failed");
	b->m = gdrdrv_mmap(fd, b->h, LEN);
	REQUIRE(b->m != MAP_FAILED, "mmap: %s", strerror(errno));
	REQUIRE(map_mismatch(b->m, LEN, seed) < 0, "mapping differs");
}

/* After unpin (and the free): the mapping gives no access. */
static void buf_gone(struct buf *b, const char *name)
{
	uint8_t byte;

	CHECK(read_faults(b->m + LEN - 1, &byte) == SIGBUS,
	      "%s: the old mapping still reads (%s)", name,
	      fault_sig ? strsignal(fault_sig) : "no fault");
	munmap((void *)b->m, LEN);
}

struct call {
	pthread_t t;
	uint64_t h;		/* unpin: in; pin: out */
	CUdeviceptr d;
	int rc;
};

static void *unpin_thread(void *arg)
{
	struct call *c = arg;

	c->rc = gdrdrv_unpin(fd, c->h);
	return NULL;
}

static void *pin_thread(void *arg)
{
	struct call *c = arg;

	c->rc = gdrdrv_pin(fd, c->d, LEN, &c->h);
	return NULL;
}

static void *free_thread(void *arg)
{
	struct call *c = arg;

	vm_cuda_init();
	c->rc = cuMemFree(c->d);
	return NULL;
}

static void start(struct call *c, void *(*fn)(void *))
{
	REQUIRE(pthread_create(&c->t, NULL, fn, c) == 0, "pthread_create");
}

static void finish(struct call *c)
{
	pthread_join(c->t, NULL);
}

/*
 * Unpins b in another thread, which the hook stops at point until events;
 * frees b's memory meanwhile.  The unpin's result.
 */
static int unpin_around_free(struct buf *b, const char *point,
			     const char *events)
{
	struct call u = { .h = b->h };

	hook_arm(point, b->d, events, 20000);
	start(&u, unpin_thread);
	hook_wait_stopped();
	CU_OK(cuMemFree(b->d));
	finish(&u);
	return u.rc;
}

static void between(void)
{
	struct counts before = counts_now();
	struct buf b;
	int rc;

	buf_make(&b, 11);
	rc = unpin_around_free(&b, "put_enter", "callback");
	hook_expect("done", "callback");
	CHECK(rc == 0, "between: unpin returned %d", rc);
	CHECK(counts_now().stale == before.stale + 1,
	      "between: put_pages did not meet the freed table");
	check_released(&before, "between");
	buf_gone(&b, "between");
}

static void recycle(void)
{
	struct counts before = counts_now();
	struct call u = { 0 }, p = { 0 };
	volatile uint8_t *m;
	struct buf b;
	long recycled;
	char st[64];

	buf_make(&b, 12);
	recycled = nvsim_stat("recycled_tables");
	p.d = vm_alloc(LEN);
	gpu_fill(p.d, LEN, 13);
	hook_arm("put_enter", b.d, "callback,pin", 3000);
	u.h = b.h;
	start(&u, unpin_thread);
	hook_wait_stopped();
	CU_OK(cuMemFree(b.d));		/* the table goes to the reuse list */
	start(&p, pin_thread);		/* must not get it before the put */
	finish(&u);
	finish(&p);

	hook_read(st, sizeof(st));
	CHECK(!strstr(st, "pin"),
	      "recycle: a new pin was made while put_pages of a freed table was in flight (hook: %s)",
	      st);
	CHECK(u.rc == 0, "recycle: unpin returned %d", u.rc);
	REQUIRE(p.rc == 0, "recycle: the new pin failed: %d", p.rc);
	CHECK(nvsim_stat("recycled_tables") == recycled + 1,
	      "recycle: the new pin did not reuse the freed table");
	/* The new pin is whole: still pinned, mapped, its data. */
	CHECK(nvsim_count("outstanding_pins") == before.nvsim + 1,
	      "recycle: nvsim has %ld pins, want %ld",
	      nvsim_count("outstanding_pins"), before.nvsim + 1);
	m = gdrdrv_mmap(fd, p.h, LEN);
	REQUIRE(m != MAP_FAILED, "recycle: mmap of the new pin: %s",
		strerror(errno));
	CHECK(map_mismatch(m, LEN, 13) < 0, "recycle: the new pin's data");
	munmap((void *)m, LEN);
	CHECK_RET(gdrdrv_unpin(fd, p.h), 0);
	CU_OK(cuMemFree(p.d));
	check_released(&before, "recycle");
	buf_gone(&b, "recycle");
}

static void running(void)
{
	struct counts before = counts_now();
	struct call f = { 0 };
	struct buf b;

	buf_make(&b, 14);
	hook_arm("callback", b.d, "put_enter", 20000);
	f.d = b.d;
	start(&f, free_thread);
	hook_wait_stopped();
	CHECK_RET(gdrdrv_unpin(fd, b.h), 0);
	finish(&f);

	hook_expect("done", "put_enter");
	CHECK(f.rc == CUDA_SUCCESS, "running: cuMemFree: %d", f.rc);
	CHECK(counts_now().callbacks == before.callbacks + 1,
	      "running: the callback did not run");
	CHECK(counts_now().stale == before.stale + 1,
	      "running: put_pages did not wait for the callback");
	check_released(&before, "running");
	buf_gone(&b, "running");
}

static void consumed(void)
{
	struct counts before = counts_now();
	struct gdrdrv_get_info_v2_params info;
	struct call f = { 0 };
	uint32_t flag = 0;
	struct buf b;

	buf_make(&b, 15);
	hook_arm("callback_done", b.d, "put_enter", 1500);
	f.d = b.d;
	start(&f, free_thread);
	hook_wait_stopped();
	/* GDRCopy's view of a pin whose memory was freed. */
	CHECK_RET(gdrdrv_cb_flag(fd, b.h, &flag), 0);
	CHECK(flag == 1, "consumed: callback flag %u", flag);
	CHECK_RET(gdrdrv_info(fd, b.h, &info), 0);
	CHECK(info.mapping_type == GDRDRV_MAPPING_TYPE_NONE,
	      "consumed: GET_INFO_V2 reports mapping type %u after the callback",
	      info.mapping_type);
	CHECK_RET(gdrdrv_unpin(fd, b.h), 0);
	finish(&f);

	hook_expect("timeout", NULL);
	CHECK(counts_now().puts == before.puts,
	      "consumed: unpin called put_pages on a pin the callback consumed");
	check_released(&before, "consumed");
	buf_gone(&b, "consumed");
}

static void put_first(void)
{
	struct counts before = counts_now();
	struct buf b;
	int rc;

	buf_make(&b, 16);
	rc = unpin_around_free(&b, "put_exit", "free");
	hook_expect("done", "free");
	CHECK(rc == 0, "put-first: unpin returned %d", rc);
	CHECK(counts_now().callbacks == before.callbacks,
	      "put-first: a callback ran for a released pin");
	check_released(&before, "put-first");
	buf_gone(&b, "put-first");
}

static void free_first(void)
{
	struct counts before = counts_now();
	long used = nvsim_count("used_pages");
	struct buf b;
	int rc;

	buf_make(&b, 17);
	rc = unpin_around_free(&b, "put_enter", "free");
	hook_expect("done", "free");
	CHECK(rc == 0, "free-first: unpin returned %d", rc);
	CHECK(nvsim_count("used_pages") == used,
	      "free-first: %ld GPU pages in use, had %ld",
	      nvsim_count("used_pages"), used);
	check_released(&before, "free-first");
	buf_gone(&b, "free-first");
}

static void early(void)
{
	struct counts before = counts_now();
	struct gdrdrv_get_info_v2_params info;
	struct call p = { 0 };
	uint32_t flag = 0;
	void *m;

	p.d = vm_alloc(LEN);
	gpu_fill(p.d, LEN, 18);
	hook_arm("get_return", p.d, "callback", 20000);
	start(&p, pin_thread);
	hook_wait_stopped();
	CU_OK(cuMemFree(p.d));
	finish(&p);
	hook_expect("done", "callback");
	REQUIRE(p.rc == 0, "early: the pin failed: %d", p.rc);
	CHECK_RET(gdrdrv_cb_flag(fd, p.h, &flag), 0);
	CHECK(flag == 1, "early: callback flag %u", flag);
	CHECK_RET(gdrdrv_info(fd, p.h, &info), 0);
	CHECK(info.mapping_type == GDRDRV_MAPPING_TYPE_NONE,
	      "early: mapping type %u", info.mapping_type);
	m = gdrdrv_mmap(fd, p.h, LEN);
	CHECK(m == MAP_FAILED && errno == EINVAL,
	      "early: mmap of a pin whose memory was freed: %s",
	      m == MAP_FAILED ? strerror(errno) : "mapped");
	if (m != MAP_FAILED)
		munmap(m, LEN);
	CHECK_RET(gdrdrv_unpin(fd, p.h), 0);
	CHECK(counts_now().puts == before.puts,
	      "early: unpin called put_pages on a pin the callback consumed");
	check_released(&before, "early");
}

int main(void)
{
	vm_cuda_init();
	fd = gdrdrv_open();
	if (!hook_present()) {
		SKIP("%s: %s (an nvsim without hooks)", HOOK, strerror(errno));
		return test_done();
	}
	if (gdrdrv_persistent(fd)) {
		put_first();
		free_first();
	} else {
		between();
		recycle();
		running();
		consumed();
		early();
		put_first();
	}
	close(fd);
	return test_done();
}
