/* SPDX-License-Identifier: MIT */
/*
 * The last close of a gdrdrv fd in another process than the one that
 * opened it, while the opener lives on and keeps its GPU memory: a fork
 * child that inherited the fd exits after the opener closed its own copy,
 * or a process the fd was passed to (SCM_RIGHTS) closes it after the
 * opener closed its own.
 *
 * NVIDIA's put_pages finds a callback-mode pin only when called from the
 * process that made it (sim/nvsim/README.md): from anywhere else it
 * answers 0 and releases nothing, and the free callback into gdrdrv stays
 * registered.  So that close must not release (and free) the pins: gdrdrv
 * leaves them to their callbacks, which run when the opener frees the
 * memory; until then they are counted and keep the module loaded.  In
 * persistent mode any process may put: that close releases them, as it
 * always did.  One pin was mapped (and unmapped) before, one never was.
 */
#include <sys/wait.h>

#include "fdpass.h"

#define LEN	(2 * GPU_PAGE)

static int persistent;

struct level {
	long gdrdrv, nvsim, foreign, mod;
};

static struct level level_now(void)
{
	return (struct level) {
		.gdrdrv = gdrdrv_refcount(),
		.nvsim = nvsim_count("outstanding_pins"),
		.foreign = nvsim_stat("foreign_puts"),
		.mod = module_refcnt("gdrdrv"),
	};
}

/* A new fd with two pins; the first mapped, read and unmapped. */
static int open_and_pin(CUdeviceptr d[2])
{
	volatile uint8_t *m;
	uint64_t h[2];
	int fd = gdrdrv_open();

	for (int i = 0; i < 2; i++) {
		d[i] = vm_alloc(LEN);
		gpu_fill(d[i], LEN, 30 + i);
		REQUIRE(gdrdrv_pin(fd, d[i], LEN, &h[i]) == 0, "pin %d failed", i);
	}
	m = gdrdrv_mmap(fd, h[0], LEN);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(map_mismatch(m, LEN, 30) < 0, "data through the mapping");
	munmap((void *)m, LEN);
	return fd;
}

/* The fd's last close happened elsewhere: the pins, then the memory freed. */
static void after_last_close(const char *how, const struct level *base,
			     const CUdeviceptr d[2])
{
	struct level now = level_now();

	CHECK(now.foreign == base->foreign,
	      "%s: gdrdrv called put_pages %ld times from a process whose pins NVIDIA does not find (it releases nothing)",
	      how, now.foreign - base->foreign);
	CHECK(now.gdrdrv - base->gdrdrv == now.nvsim - base->nvsim,
	      "%s: gdrdrv counts %ld pins, NVIDIA holds %ld: gdrdrv let go of pins that NVIDIA will call back on",
	      how, now.gdrdrv - base->gdrdrv, now.nvsim - base->nvsim);
	if (persistent) {
		CHECK(now.nvsim == base->nvsim && now.mod == base->mod,
		      "%s: the last close left %ld persistent pins, %ld module references",
		      how, now.nvsim - base->nvsim, now.mod - base->mod);
	} else {
		CHECK(now.nvsim == base->nvsim + 2,
		      "%s: NVIDIA holds %ld of the 2 pins before their memory is freed",
		      how, now.nvsim - base->nvsim);
		CHECK(now.mod > base->mod,
		      "%s: gdrdrv could be unloaded while NVIDIA holds callbacks into it (module references %ld, were %ld)",
		      how, now.mod, base->mod);
	}

	/* The opener frees its memory: the callbacks release what is left. */
	CU_OK(cuMemFree(d[0]));
	CU_OK(cuMemFree(d[1]));
	now = level_now();
	CHECK(now.gdrdrv == base->gdrdrv && now.nvsim == base->nvsim &&
	      now.mod == base->mod,
	      "%s: after the memory was freed: gdrdrv pins %ld, nvsim pins %ld, module references %ld; were %ld, %ld, %ld",
	      how, now.gdrdrv, now.nvsim, now.mod, base->gdrdrv, base->nvsim,
	      base->mod);
}

/* A fork child holds the inherited fd; its exit is the last close. */
static void by_fork(void)
{
	struct level base = level_now();
	CUdeviceptr d[2];
	int fd, go[2], st;
	char c;
	pid_t pid;

	fd = open_and_pin(d);
	REQUIRE(pipe(go) == 0, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(go[1]);
		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	close(fd);		/* the opener's copy; the opener lives on */
	CHECK(write(go[1], "x", 1) == 1, "telling the child: %s",
	      strerror(errno));
	close(go[1]);
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
	after_last_close("fork", &base, d);
}

/* The receiver of the fd closes it after the opener closed its own. */
static int receiver(int sock)
{
	char c;
	int fd = recv_fd_or_fail(sock);

	if (fd < 0)
		return 2;
	if (write(sock, "r", 1) != 1 || read(sock, &c, 1) != 1)
		return 3;
	close(fd);
	return write(sock, "c", 1) == 1 ? 0 : 4;
}

static void by_passing(void)
{
	struct level base = level_now();
	CUdeviceptr d[2];
	int sv[2], fd, st;
	char c = 0;
	pid_t pid;

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	fflush(NULL);
	pid = fork();	/* before the fd exists: it gets it by passing only */
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(sv[0]);
		_exit(receiver(sv[1]));
	}
	close(sv[1]);
	fd = open_and_pin(d);
	send_fd(sv[0], fd);
	REQUIRE(read(sv[0], &c, 1) == 1 && c == 'r', "the receiver got no fd");
	close(fd);
	CHECK(write(sv[0], "x", 1) == 1, "telling the receiver");
	REQUIRE(read(sv[0], &c, 1) == 1 && c == 'c',
		"the receiver did not close the fd");
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "receiver status %#x",
	      st);
	close(sv[0]);
	after_last_close("fd passing", &base, d);
}

int main(void)
{
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	close(fd);
	by_fork();
	by_passing();
	return test_done();
}
