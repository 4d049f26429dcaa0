/* SPDX-License-Identifier: MIT */
/*
 * NVIDIA's put_pages can fail and release nothing (when it cannot
 * allocate; nvsim's fail_puts makes the next one fail so).  Unpin still
 * succeeds, as GDRCopy's does, and the mapping is gone at once, but the
 * pin stays: counted, and keeping the module loaded, since a free
 * callback into it may still come.  It is released later, and its hold on
 * the module with it: by another put_pages when the fd is closed, or
 * (callback mode) by the free callback when the memory is freed first.
 */
#include "vmtest.h"

#define LEN		(2 * GPU_PAGE)
#define FAIL_PUTS	"/sys/module/nvsim/parameters/fail_puts"

struct level {
	long gdrdrv, nvsim, failed, mod;
};

static struct level level_now(void)
{
	return (struct level) {
		.gdrdrv = gdrdrv_refcount(),
		.nvsim = nvsim_count("outstanding_pins"),
		.failed = nvsim_stat("failed_puts"),
		.mod = module_refcnt("gdrdrv"),
	};
}

static void no_more_failures(void)
{
	write_text(FAIL_PUTS, "0");
}

/* The module's references with the fd of the case open. */
static long mod_fd;

/* A pin on a new fd, mapped; unpinned with put_pages failing. */
static int pin_and_fail_unpin(const struct level *base, CUdeviceptr *d,
			      const char *how)
{
	volatile uint8_t *m;
	uint8_t byte;
	uint64_t h;
	int fd = gdrdrv_open();

	mod_fd = module_refcnt("gdrdrv");

	*d = vm_alloc(LEN);
	gpu_fill(*d, LEN, 61);
	REQUIRE(gdrdrv_pin(fd, *d, LEN, &h) == 0, "pin failed");
	m = gdrdrv_mmap(fd, h, LEN);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(map_mismatch(m, LEN, 61) < 0, "data through the mapping");

	REQUIRE(write_text(FAIL_PUTS, "1") == 0, "%s: %s", FAIL_PUTS,
		strerror(errno));
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CHECK(nvsim_stat("failed_puts") == base->failed + 1,
	      "%s: put_pages did not fail (failed_puts %ld, was %ld)", how,
	      nvsim_stat("failed_puts"), base->failed);
	CHECK(read_faults(m, &byte) == SIGBUS,
	      "%s: the mapping still reads after unpin (%s)", how,
	      fault_sig ? strsignal(fault_sig) : "no fault");
	munmap((void *)m, LEN);
	CHECK(gdrdrv_refcount() == base->gdrdrv + 1 &&
	      nvsim_count("outstanding_pins") == base->nvsim + 1,
	      "%s: after the failed put: gdrdrv pins %ld, nvsim pins %ld; were %ld, %ld",
	      how, gdrdrv_refcount(), nvsim_count("outstanding_pins"),
	      base->gdrdrv, base->nvsim);
	CHECK(module_refcnt("gdrdrv") == mod_fd + 1,
	      "%s: module references %ld with the fd and the kept pin, %ld with the fd",
	      how, module_refcnt("gdrdrv"), mod_fd);
	return fd;
}

static void check_back(const struct level *base, const char *how)
{
	struct level now = level_now();

	CHECK(now.gdrdrv == base->gdrdrv && now.nvsim == base->nvsim,
	      "%s: the kept pin was not released: gdrdrv pins %ld, nvsim pins %ld; were %ld, %ld",
	      how, now.gdrdrv, now.nvsim, base->gdrdrv, base->nvsim);
	CHECK(now.mod == base->mod,
	      "%s: gdrdrv holds %ld module references more than before the pin",
	      how, now.mod - base->mod);
}

/* The close puts the pin again, and that put works. */
static void then_close(void)
{
	struct level base = level_now();
	CUdeviceptr d;
	int fd = pin_and_fail_unpin(&base, &d, "close");

	close(fd);
	check_back(&base, "close");
	CU_OK(cuMemFree(d));
	check_back(&base, "close, then free");
}

/* The memory is freed first: the callback releases the kept pin. */
static void then_free(void)
{
	struct level base = level_now();
	CUdeviceptr d;
	int fd = pin_and_fail_unpin(&base, &d, "free");

	CU_OK(cuMemFree(d));
	CHECK(gdrdrv_refcount() == base.gdrdrv &&
	      nvsim_count("outstanding_pins") == base.nvsim,
	      "free: the callback did not release the kept pin");
	CHECK(module_refcnt("gdrdrv") == mod_fd,
	      "free: module references %ld with only the fd open, want %ld",
	      module_refcnt("gdrdrv"), mod_fd);
	close(fd);
	check_back(&base, "free, then close");
}

int main(void)
{
	int fd, persistent;

	if (access(FAIL_PUTS, W_OK)) {
		SKIP("%s: %s (an nvsim without put failures)", FAIL_PUTS,
		     strerror(errno));
		return test_done();
	}
	atexit(no_more_failures);
	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	close(fd);
	then_close();
	if (!persistent)
		then_free();
	return test_done();
}
