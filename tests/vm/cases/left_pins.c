/* SPDX-License-Identifier: MIT */
/*
 * Pins that unpin (or a close) leaves to NVIDIA are counted until NVIDIA
 * releases them, and bounded.  Each still holds BAR1 space, a page table
 * and a module reference; so they stay charged to the file that made them
 * (max_pinned_per_file bounds them with its live pins) and are listed in
 * /proc/driver/gdrdrv/pinned under its opener ("pid bytes pins left"),
 * also after the file's last close, until their callback, or the put
 * that finally works, releases them.
 *  - callback mode, allow_p2p_tokens=1: every unpin of a token pin leaves
 *    one to its callback: N rounds of pin and unpin show N pins, N left;
 *    at the bound the next pin gives ENOMEM; freeing the memory ends them;
 *  - callback mode: a fork child's last close leaves the opener's pins to
 *    their callbacks: still listed under the opener, who closed its own
 *    copy before, until the memory is freed;
 *  - both modes: a pin whose put_pages failed before reaching the driver
 *    (nvsim's fail_puts) is kept, listed and charged until the close puts
 *    it again;
 *  - both modes: an opener that closed its copy of the fd after a fork
 *    (gdr_close) and then exits releases nothing: the pins live until the
 *    child, which also holds /dev/nvsim, exits (its last close puts
 *    persistent pins; callback-mode ones go with the memory it held).
 */
#include <sys/wait.h>

#include "vmtest.h"

#define LEN		(2 * GPU_PAGE)
#define ROUNDS		4
#define TOKENS		"/sys/module/gdrdrv/parameters/allow_p2p_tokens"
#define LIMIT		"/sys/module/gdrdrv/parameters/max_pinned_per_file"
#define FAIL_PUTS	"/sys/module/nvsim/parameters/fail_puts"

static void restore(void)
{
	write_text(TOKENS, "0");
	write_text(LIMIT, "0");
	write_text(FAIL_PUTS, "0");
}

/* This process's line must say pins, left and their bytes. */
static void expect_line(pid_t pid, int pins, int left, const char *when)
{
	unsigned long long bytes;
	int p, l, listed = pinned_line(pid, &bytes, &p, &l) == 0;

	if (!pins) {
		CHECK(!listed || (p == 0 && l == 0),
		      "%s: still listed with %d pins, %d left", when, p, l);
		return;
	}
	CHECK(listed && p == pins && l == left &&
	      bytes == (unsigned long long)pins * LEN,
	      "%s: /proc lists %s%d pins (%llu bytes), %d left; want %d pins, %d left",
	      when, listed ? "" : "nothing: ", p, bytes, l, pins, left);
}

static int pin_tokens(int fd, CUdeviceptr d, uint64_t *h)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t = { 0 };
	struct gdrdrv_pin_buffer_params p = { .addr = d, .size = LEN };
	int rc;

	CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d));
	p.p2p_token = t.p2pToken;
	p.va_space = t.vaSpaceToken;
	rc = gioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p);
	*h = p.handle;
	return rc;
}

static void token_rounds(void)
{
	long held = gdrdrv_refcount(), nv = nvsim_count("outstanding_pins");
	char limit[32];
	CUdeviceptr d;
	uint64_t h;
	int fd = gdrdrv_open(), i;

	REQUIRE(write_text(TOKENS, "1") == 0, "%s: %s", TOKENS,
		strerror(errno));
	d = vm_alloc(LEN);
	for (i = 0; i < ROUNDS; i++) {
		REQUIRE(pin_tokens(fd, d, &h) == 0, "token pin %d", i);
		CHECK_RET(gdrdrv_unpin(fd, h), 0);
	}
	CHECK(gdrdrv_refcount() == held + ROUNDS &&
	      nvsim_count("outstanding_pins") == nv + ROUNDS,
	      "%d token pins unpinned: gdrdrv holds %ld, NVIDIA %ld",
	      ROUNDS, gdrdrv_refcount() - held,
	      nvsim_count("outstanding_pins") - nv);
	expect_line(getpid(), ROUNDS, ROUNDS, "token pins unpinned");

	/* Bounded: what is left counts against max_pinned_per_file. */
	snprintf(limit, sizeof(limit), "%lu", (unsigned long)(ROUNDS + 1) * LEN);
	REQUIRE(write_text(LIMIT, limit) == 0, "%s: %s", LIMIT,
		strerror(errno));
	CHECK_RET(pin_tokens(fd, d, &h), 0);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CHECK_RET(pin_tokens(fd, d, &h), -ENOMEM);
	write_text(LIMIT, "0");

	/* They end when the memory is freed: their callbacks. */
	CU_OK(cuMemFree(d));
	CHECK(gdrdrv_refcount() == held &&
	      nvsim_count("outstanding_pins") == nv,
	      "after the free: gdrdrv holds %ld, NVIDIA %ld more pins",
	      gdrdrv_refcount() - held, nvsim_count("outstanding_pins") - nv);
	expect_line(getpid(), 0, 0, "after the free");
	write_text(TOKENS, "0");
	close(fd);
}

/* The last close in a fork child, after the opener closed its copy. */
static void fork_close(void)
{
	CUdeviceptr d = vm_alloc(2 * LEN);
	int fd = gdrdrv_open(), go[2], st;
	uint64_t h;
	pid_t pid;
	char c;

	REQUIRE(gdrdrv_pin(fd, d, LEN, &h) == 0, "pin");
	REQUIRE(gdrdrv_pin(fd, d + LEN, LEN, &h) == 0, "pin");
	REQUIRE(pipe(go) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		close(go[1]);
		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	close(fd);
	CHECK(write(go[1], "x", 1) == 1, "telling the child");
	close(go[1]);
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	expect_line(getpid(), 2, 2, "the fd's last close in a fork child");
	CU_OK(cuMemFree(d));
	expect_line(getpid(), 0, 0, "after the free");
}

/* A put that failed before the driver: kept, listed, put at close. */
static void failed_put(void)
{
	CUdeviceptr d = vm_alloc(LEN);
	int fd = gdrdrv_open();
	uint64_t h;

	REQUIRE(gdrdrv_pin(fd, d, LEN, &h) == 0, "pin");
	REQUIRE(write_text(FAIL_PUTS, "1") == 0, "%s: %s", FAIL_PUTS,
		strerror(errno));
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	expect_line(getpid(), 1, 1, "a pin kept after a failed put");
	close(fd);
	expect_line(getpid(), 0, 0, "after the close put it again");
	CU_OK(cuMemFree(d));
}

/* The opener's side of opener_gone: see the top.  Exit status. */
static int opener(int ready, int go)
{
	CUdeviceptr d;
	uint64_t h;
	pid_t kid;
	char c;
	int fd;

	vm_cuda_init();
	d = vm_alloc(LEN);
	fd = gdrdrv_open();
	if (gdrdrv_pin(fd, d, LEN, &h))
		return 2;
	kid = fork();
	if (kid < 0)
		return 3;
	if (kid == 0)
		_exit(read(go, &c, 1) == 1 ? 0 : 1);
	close(fd);
	return write(ready, &kid, sizeof(kid)) == sizeof(kid) ? 0 : 4;
}

/* An opener that closed its fd after a fork, then exited. */
static void opener_gone(void)
{
	long held = gdrdrv_refcount(), nv = nvsim_count("outstanding_pins");
	int ready[2], go[2], st;
	pid_t pid, kid = 0;

	REQUIRE(pipe(ready) == 0 && pipe(go) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0)
		_exit(opener(ready[1], go[0]));
	REQUIRE(read(ready[0], &kid, sizeof(kid)) == sizeof(kid),
		"the opener did not fork");
	REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		!WEXITSTATUS(st), "the opener: status %#x", st);
	CHECK(gdrdrv_refcount() == held + 1 &&
	      nvsim_count("outstanding_pins") == nv + 1,
	      "the opener's exit, after its gdr_close, released the pin its child still holds (gdrdrv %ld, nvsim %ld more)",
	      gdrdrv_refcount() - held, nvsim_count("outstanding_pins") - nv);
	CHECK(write(go[1], "x", 1) == 1, "telling the child");
	/* The child is the opener's: reparented, not ours to wait. */
	for (int i = 0; i < 500 && !kill(kid, 0); i++)
		usleep(10000);
	CHECK(gdrdrv_refcount() == held &&
	      nvsim_count("outstanding_pins") == nv,
	      "after the child's exit: gdrdrv %ld, nvsim %ld more pins",
	      gdrdrv_refcount() - held, nvsim_count("outstanding_pins") - nv);
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(go[i]);
	}
}

int main(void)
{
	int fd, persistent;

	if (access(FAIL_PUTS, W_OK)) {
		SKIP("%s: %s", FAIL_PUTS, strerror(errno));
		return test_done();
	}
	atexit(restore);
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	close(fd);
	/* First: its opener must be the first of the two to use CUDA. */
	opener_gone();
	vm_cuda_init();
	failed_put();
	if (!persistent) {
		token_rounds();
		fork_close();
	}
	return test_done();
}
