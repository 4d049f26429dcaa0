/* SPDX-License-Identifier: MIT */
/*
 * PIN_BUFFER's p2p_token/va_space (callback mode; persistent mode refuses
 * them with EINVAL, as GDRCopy's):
 *  - refused with EPERM unless allow_p2p_tokens=1: NVIDIA's p2p tokens are
 *    one sequential counter and every va_space is 0xfe00
 *    (sim/nvsim/README.md), so any user who can open /dev/gdrdrv could
 *    name another user's memory;
 *  - allowed, a token pin is never released by put_pages: NVIDIA's
 *    put_pages with a token frees the page table even when the free
 *    callback ran while it waited (the memory's owner freeing it), a
 *    double free inside the driver that no ordering on gdrdrv's side can
 *    prevent.  Unpin takes the handle and the mapping away at once and
 *    leaves the pin to its callback.  The race is forced with nvsim's
 *    hook: a put_pages of the pin would stop there until the callback
 *    has run, and nvsim would WARN and count a double free;
 *  - another user's process pins this one's memory with its tokens and
 *    exits: the pin goes with the memory, nothing freed twice.
 * The case sets allow_p2p_tokens and puts it back.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "hook.h"

#define LEN	(2 * GPU_PAGE)
#define TOKENS	"/sys/module/gdrdrv/parameters/allow_p2p_tokens"

static int allow0 = -1;

struct level {
	long gdrdrv, nvsim, doubles;
};

static struct level level_now(void)
{
	return (struct level) {
		.gdrdrv = gdrdrv_refcount(),
		.nvsim = nvsim_count("outstanding_pins"),
		.doubles = nvsim_stat("double_frees"),
	};
}

static void check_level(const struct level *base, const char *when)
{
	struct level now = level_now();

	CHECK(now.doubles == base->doubles,
	      "%s: NVIDIA's driver would have freed %ld page tables twice",
	      when, now.doubles - base->doubles);
	CHECK(now.gdrdrv == base->gdrdrv && now.nvsim == base->nvsim,
	      "%s: gdrdrv pins %ld, nvsim pins %ld; were %ld, %ld", when,
	      now.gdrdrv, now.nvsim, base->gdrdrv, base->nvsim);
}

/* allow_p2p_tokens: 1, 0, or -1 unreadable. */
static int get_allow(void)
{
	FILE *f = fopen(TOKENS, "r");
	int c;

	if (!f)
		return -1;
	c = fgetc(f);
	fclose(f);
	return c == 'Y' || c == '1' ? 1 : c == 'N' || c == '0' ? 0 : -1;
}

static void set_allow(int allow)
{
	REQUIRE(write_text(TOKENS, allow ? "1" : "0") == 0, "writing %s: %s",
		TOKENS, strerror(errno));
}

static void restore_allow(void)
{
	if (allow0 >= 0)
		write_text(TOKENS, allow0 ? "1" : "0");
}

static CUDA_POINTER_ATTRIBUTE_P2P_TOKENS tokens_of(CUdeviceptr d)
{
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t = { 0 };

	CU_OK(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d));
	REQUIRE(t.p2pToken, "no P2P token");
	return t;
}

static int pin_tokens(int fd, CUdeviceptr d,
		      const CUDA_POINTER_ATTRIBUTE_P2P_TOKENS *t, uint64_t *h)
{
	struct gdrdrv_pin_buffer_params p = {
		.addr = d, .size = LEN, .p2p_token = t->p2pToken,
		.va_space = t->vaSpaceToken,
	};
	int rc = gioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p);

	*h = p.handle;
	return rc;
}

/* The default refuses tokens; persistent mode always does. */
static void refused(int fd, int persistent)
{
	CUdeviceptr d = vm_alloc(LEN);
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t = tokens_of(d);
	uint64_t h;
	int rc;

	CHECK(allow0 == 0, "allow_p2p_tokens is %d by default, want 0", allow0);
	rc = pin_tokens(fd, d, &t, &h);
	CHECK(rc == (persistent ? -EINVAL : -EPERM),
	      "pin with tokens, allow_p2p_tokens=%d: %s", allow0,
	      rc ? strerror(-rc) : "pinned");
	if (!rc)
		CHECK_RET(gdrdrv_unpin(fd, h), 0);
	CU_OK(cuMemFree(d));
}

struct unpin_call {
	pthread_t t;
	int fd;
	uint64_t h;
	int rc;
	atomic_int done;
};

static void *unpin_thread(void *arg)
{
	struct unpin_call *c = arg;

	c->rc = gdrdrv_unpin(c->fd, c->h);
	atomic_store(&c->done, 1);
	return NULL;
}

/* Unpin of a token pin while its memory is freed. */
static void unpin_racing_free(int fd)
{
	struct level base = level_now();
	struct unpin_call u = { .fd = fd };
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t;
	volatile uint8_t *m;
	CUdeviceptr d;
	uint8_t byte;
	int stopped = 0;

	d = vm_alloc(LEN);
	gpu_fill(d, LEN, 41);
	t = tokens_of(d);
	REQUIRE(pin_tokens(fd, d, &t, &u.h) == 0, "pin with tokens failed");
	m = gdrdrv_mmap(fd, u.h, LEN);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(map_mismatch(m, LEN, 41) < 0, "data through a token pin");

	/* A put_pages of the pin stops until the callback has run. */
	hook_arm("put_enter", d, "callback", 5000);
	REQUIRE(pthread_create(&u.t, NULL, unpin_thread, &u) == 0,
		"pthread_create");
	for (int i = 0; i < 500 && !atomic_load(&u.done); i++) {
		stopped = hook_waiting();
		if (stopped)
			break;
		usleep(10000);
	}
	CHECK(!stopped,
	      "unpin of a token pin called put_pages: with the callback running meanwhile NVIDIA frees the table twice");
	if (!stopped) {
		pthread_join(u.t, NULL);
		hook_disarm();
		CHECK(u.rc == 0, "unpin of a token pin: %d", u.rc);
		CHECK(gdrdrv_refcount() == base.gdrdrv + 1 &&
		      nvsim_count("outstanding_pins") == base.nvsim + 1,
		      "the token pin was released before its memory was freed");
		CHECK(read_faults(m + LEN - 1, &byte) == SIGBUS,
		      "the mapping still reads after unpin (%s)",
		      fault_sig ? strsignal(fault_sig) : "no fault");
	}
	CU_OK(cuMemFree(d));
	if (stopped) {
		pthread_join(u.t, NULL);
		CHECK(u.rc == 0, "unpin of a token pin: %d", u.rc);
	}
	check_level(&base, "unpin racing the free");
	CHECK(read_faults(m, &byte) == SIGBUS, "the mapping reads after the free");
	munmap((void *)m, LEN);
}

/* Another user pins this process's memory with its tokens, and exits. */
static void stranger_exits(void)
{
	struct level base = level_now();
	CUDA_POINTER_ATTRIBUTE_P2P_TOKENS t;
	CUdeviceptr d = vm_alloc(LEN);
	int st, go[2], ready[2];
	uint64_t h;
	char c;
	pid_t pid;

	t = tokens_of(d);
	REQUIRE(pipe(go) == 0 && pipe(ready) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(100);
		fd = open(GDRDRV_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(101);
		if (pin_tokens(fd, d, &t, &h))
			_exit(102);
		if (write(ready[1], "p", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(103);
		_exit(0);	/* the close: a token pin of another process */
	}
	CHECK(read(ready[0], &c, 1) == 1, "the other user's process did not pin");
	CHECK(nvsim_count("outstanding_pins") == base.nvsim + 1,
	      "the other user's pin is not there");
	CHECK(write(go[1], "x", 1) == 1, "write");
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "the other user's process: status %#x", st);
	CU_OK(cuMemFree(d));
	check_level(&base, "another user's token pin");
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

int main(void)
{
	int fd, persistent;

	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	allow0 = get_allow();
	REQUIRE(allow0 >= 0, "%s: %s", TOKENS, strerror(errno));
	atexit(restore_allow);
	refused(fd, persistent);
	if (persistent) {
		close(fd);
		return test_done();
	}
	if (!hook_present()) {
		SKIP("%s: %s (an nvsim without hooks)", HOOK, strerror(errno));
		close(fd);
		return test_done();
	}
	set_allow(1);
	unpin_racing_free(fd);
	stranger_exits();
	close(fd);
	return test_done();
}
