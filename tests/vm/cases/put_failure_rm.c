/* SPDX-License-Identifier: MIT */
/*
 * A put_pages that fails inside the NVIDIA driver's resource manager,
 * after its stack allocation (nvsim's fail_puts_rm).  It releases nothing,
 * but nvidia_p2p_put_pages_persistent drops the pin's GPU reference
 * whatever RM answered: put again, the pin would drop the GPU's usage
 * count once more (below zero: a warning; above it: the GPU stopped under
 * its other users).  So gdrdrv gives such a persistent pin up at once:
 * unpin succeeds, the mapping goes, gdrdrv counts and holds nothing for
 * it, and it never calls put_pages on it again, not at close either;
 * NVIDIA keeps the pin until the GPU is reset, which the lost reference
 * no longer blocks.  A callback-mode pin has no GPU reference: gdrdrv
 * keeps it and puts it again at close, or its callback releases it.
 */
#include "vmtest.h"

#define LEN		(2 * GPU_PAGE)
#define FAIL_RM		"/sys/module/nvsim/parameters/fail_puts_rm"

struct level {
	long gdrdrv, nvsim, mod, refs, abandoned, puts, under;
};

static struct level level_now(void)
{
	return (struct level) {
		.gdrdrv = gdrdrv_refcount(),
		.nvsim = nvsim_count("outstanding_pins"),
		.mod = module_refcnt("gdrdrv"),
		.refs = nvsim_count("gpu_refs"),
		.abandoned = nvsim_count("abandoned_pins"),
		.puts = nvsim_stat("put_pages_requests"),
		.under = nvsim_stat("gpu_ref_underflows"),
	};
}

static void no_more_failures(void)
{
	write_text(FAIL_RM, "0");
}

/* A mapped pin on a new fd, unpinned with put_pages failing in RM. */
static int pin_and_fail(CUdeviceptr *d, uint64_t *h)
{
	volatile uint8_t *m;
	uint8_t byte;
	int fd = gdrdrv_open();

	*d = vm_alloc(LEN);
	gpu_fill(*d, LEN, 71);
	REQUIRE(gdrdrv_pin(fd, *d, LEN, h) == 0, "pin failed");
	m = gdrdrv_mmap(fd, *h, LEN);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(map_mismatch(m, LEN, 71) < 0, "data through the mapping");
	REQUIRE(write_text(FAIL_RM, "1") == 0, "%s: %s", FAIL_RM,
		strerror(errno));
	CHECK_RET(gdrdrv_unpin(fd, *h), 0);
	CHECK(read_faults(m, &byte) == SIGBUS,
	      "the mapping still reads after unpin (%s)",
	      fault_sig ? strsignal(fault_sig) : "no fault");
	munmap((void *)m, LEN);
	return fd;
}

static void persistent_pin(void)
{
	struct level base = level_now(), now;
	CUdeviceptr d;
	uint64_t h;
	int fd;

	fd = pin_and_fail(&d, &h);
	now = level_now();
	CHECK(now.gdrdrv == base.gdrdrv,
	      "gdrdrv still counts %ld pins after put_pages failed in RM: it would put it again",
	      now.gdrdrv - base.gdrdrv);
	CHECK(now.nvsim == base.nvsim + 1 && now.abandoned == base.abandoned + 1,
	      "NVIDIA holds %ld pins (%ld abandoned), want the given-up one",
	      now.nvsim - base.nvsim, now.abandoned - base.abandoned);
	CHECK(now.refs == base.refs,
	      "GPU references %ld, were %ld: the failed put dropped the pin's",
	      now.refs, base.refs);

	close(fd);
	now = level_now();
	CHECK(now.puts == base.puts + 1,
	      "%ld put_pages for one pin: a persistent pin put again after it failed in RM drops the GPU reference again",
	      now.puts - base.puts);
	CHECK(now.under == base.under,
	      "the GPU's usage count was dropped below zero %ld times",
	      now.under - base.under);
	CHECK(now.gdrdrv == base.gdrdrv && now.mod == base.mod,
	      "after close: gdrdrv pins %ld (were %ld), module references %ld (were %ld)",
	      now.gdrdrv, base.gdrdrv, now.mod, base.mod);

	/* Only a reset frees what NVIDIA kept; nothing holds the GPU now. */
	CU_OK(cuMemFree(d));
	CHECK(nvsim_reset(0) == 0, "GPU reset: %s", strerror(-nvsim_reset(0)));
	now = level_now();
	CHECK(now.nvsim == base.nvsim && now.abandoned == base.abandoned,
	      "after the reset: nvsim pins %ld (were %ld), abandoned %ld",
	      now.nvsim, base.nvsim, now.abandoned);
}

/* Callback mode: kept, and put again at close (or by its callback). */
static void callback_pin(int free_first)
{
	struct level base = level_now(), now;
	CUdeviceptr d;
	uint64_t h;
	int fd;

	fd = pin_and_fail(&d, &h);
	now = level_now();
	CHECK(now.gdrdrv == base.gdrdrv + 1 && now.nvsim == base.nvsim + 1 &&
	      now.mod > base.mod,
	      "the kept pin: gdrdrv pins %ld, nvsim pins %ld, module references %ld; were %ld, %ld, %ld",
	      now.gdrdrv, now.nvsim, now.mod, base.gdrdrv, base.nvsim,
	      base.mod);
	if (free_first)
		CU_OK(cuMemFree(d));
	close(fd);
	if (!free_first)
		CU_OK(cuMemFree(d));
	now = level_now();
	CHECK(now.gdrdrv == base.gdrdrv && now.nvsim == base.nvsim &&
	      now.mod == base.mod,
	      "%s: gdrdrv pins %ld, nvsim pins %ld, module references %ld; were %ld, %ld, %ld",
	      free_first ? "freed, then closed" : "closed, then freed",
	      now.gdrdrv, now.nvsim, now.mod, base.gdrdrv, base.nvsim,
	      base.mod);
	CHECK(now.refs == base.refs && now.under == base.under,
	      "a callback-mode pin moved the GPU's references");
}

int main(void)
{
	int fd, persistent;

	if (access(FAIL_RM, W_OK)) {
		SKIP("%s: %s (an nvsim without failures inside RM)", FAIL_RM,
		     strerror(errno));
		return test_done();
	}
	atexit(no_more_failures);
	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	close(fd);
	if (persistent) {
		persistent_pin();
	} else {
		callback_pin(0);
		callback_pin(1);
	}
	return test_done();
}
