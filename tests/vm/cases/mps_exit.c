/* SPDX-License-Identifier: MIT */
/*
 * An MPS client's pins at its exit.  Under MPS a client's memory lives in
 * the server's NVIDIA objects; the driver lets the client's pid pin and put
 * it with token 0 while the pid is registered with the server's object
 * (RM's NV503C_CTRL_CMD_REGISTER_PID; nvsim's NVSIM_IOC_REGISTER_PID),
 * which lasts until the client's own NVIDIA client is freed.  A CUDA
 * library tears that down at exit before the kernel closes the process's
 * files: by the time gdrdrv's fd is closed, the client's put_pages finds
 * nothing (0) while the pin, and its free callback into gdrdrv, stay in the
 * server's object until the server frees the memory.
 *
 * This process plays the server (its own /dev/nvsim, memory at an address
 * of its own); a child is the client: it opens /dev/nvsim (its NVIDIA
 * client), is registered, pins the server's memory through gdrdrv, maps
 * and reads it, closes its /dev/nvsim, and exits with the pin and fd open.
 * Callback mode: gdrdrv must not put the pin from the exiting client (it
 * would free the region its callback will be handed) but leave it to its
 * callback, counted, and listed under the client's pid, until the server
 * frees the memory.  Persistent mode: the put has no pid check; the exit
 * releases the pin.
 */
#include <sys/wait.h>

#include "nvsim_ioctl.h"
#include "vmtest.h"

#define LEN	(2 * GPU_PAGE)

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

/* LEN bytes of GPU 0 at an address of this process, with a pattern. */
static uint64_t server_alloc(int fd)
{
	struct nvsim_alloc a = { .size = LEN };
	uint8_t buf[LEN];
	void *p;

	p = mmap(NULL, 2 * LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(p != MAP_FAILED, "reserving an address: %s", strerror(errno));
	a.va = ((uint64_t)(uintptr_t)p + LEN - 1) & ~(uint64_t)(LEN - 1);
	REQUIRE(ioctl(fd, NVSIM_IOC_ALLOC, &a) == 0, "NVSIM_IOC_ALLOC: %s",
		strerror(errno));
	fill_pattern(buf, LEN, 83);
	REQUIRE(pwrite(fd, buf, LEN, (off_t)a.va) == LEN, "filling: %s",
		strerror(errno));
	return a.va;
}

/* The client: see the top.  Exit status 0, or the step that failed. */
static int client(uint64_t va, int ready, int go)
{
	volatile uint8_t *m;
	int nv, fd;
	uint64_t h;
	char c;

	nv = open(NVSIM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (nv < 0 || write(ready, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 2;
	fd = gdrdrv_open();
	if (gdrdrv_pin(fd, va, LEN, &h))
		return 3;
	m = gdrdrv_mmap(fd, h, LEN);
	if (m == MAP_FAILED || map_mismatch(m, LEN, 83) >= 0)
		return 4;
	munmap((void *)m, LEN);
	if (write(ready, "p", 1) != 1 || read(go, &c, 1) != 1)
		return 5;
	/* The CUDA library's teardown: its NVIDIA client goes first. */
	close(nv);
	return 0;
}

int main(void)
{
	struct level base, now;
	struct nvsim_register_pid reg = { .pid = 0 };
	struct nvsim_unmap um = { .size = LEN };
	unsigned long long bytes;
	int nv, ready[2], go[2], st, persistent, pins, left;
	uint64_t va;
	pid_t pid;
	char c;

	nv = gdrdrv_open();
	persistent = gdrdrv_persistent(nv);
	close(nv);
	nv = open(NVSIM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	REQUIRE(nv >= 0, "%s: %s", NVSIM_DEVICE_PATH, strerror(errno));
	va = server_alloc(nv);
	base = level_now();

	REQUIRE(pipe(ready) == 0 && pipe(go) == 0, "pipe");
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(nv);
		_exit(client(va, ready[1], go[0]));
	}
	REQUIRE(read(ready[0], &c, 1) == 1, "the client did not start");
	reg.pid = pid;
	REQUIRE(ioctl(nv, NVSIM_IOC_REGISTER_PID, &reg) == 0,
		"NVSIM_IOC_REGISTER_PID: %s", strerror(errno));
	CHECK(write(go[1], "g", 1) == 1, "telling the client");
	CHECK(read(ready[0], &c, 1) == 1 && c == 'p',
	      "the client could not pin and map the server's memory");
	now = level_now();
	CHECK(now.gdrdrv == base.gdrdrv + 1 && now.nvsim == base.nvsim + 1,
	      "the client's pin: gdrdrv pins %ld, nvsim pins %ld; were %ld, %ld",
	      now.gdrdrv, now.nvsim, base.gdrdrv, base.nvsim);
	CHECK(write(go[1], "x", 1) == 1, "telling the client to exit");
	REQUIRE(waitpid(pid, &st, 0) == pid, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "client status %#x", st);

	now = level_now();
	CHECK(now.foreign == base.foreign,
	      "gdrdrv called put_pages %ld times from the exiting client, whose pins NVIDIA no longer finds: it answers 0 and keeps the callback",
	      now.foreign - base.foreign);
	CHECK(now.gdrdrv - base.gdrdrv == now.nvsim - base.nvsim,
	      "after the client's exit gdrdrv counts %ld pins, NVIDIA holds %ld: gdrdrv let go of a pin NVIDIA will call back on",
	      now.gdrdrv - base.gdrdrv, now.nvsim - base.nvsim);
	if (persistent) {
		CHECK(now.nvsim == base.nvsim && now.mod == base.mod,
		      "persistent: the client's exit left %ld pins, %ld module references",
		      now.nvsim - base.nvsim, now.mod - base.mod);
	} else {
		CHECK(now.nvsim == base.nvsim + 1 && now.mod > base.mod,
		      "callback mode: NVIDIA holds %ld pins, gdrdrv %ld module references more, before the server frees the memory",
		      now.nvsim - base.nvsim, now.mod - base.mod);
		CHECK(pinned_line(pid, &bytes, &pins, &left) == 0 &&
		      pins == 1 && left == 1 && bytes == LEN,
		      "the exited client's pin left to its callback is not listed under its pid (%llu bytes, %d pins, %d left)",
		      bytes, pins, left);
	}

	/* The server frees the memory: the callback releases what is left. */
	um.va = va;
	CHECK(ioctl(nv, NVSIM_IOC_UNMAP, &um) == 0, "NVSIM_IOC_UNMAP: %s",
	      strerror(errno));
	now = level_now();
	CHECK(now.gdrdrv == base.gdrdrv && now.nvsim == base.nvsim &&
	      now.mod == base.mod,
	      "after the server freed the memory: gdrdrv pins %ld, nvsim pins %ld, module references %ld; were %ld, %ld, %ld",
	      now.gdrdrv, now.nvsim, now.mod, base.gdrdrv, base.nvsim,
	      base.mod);
	CHECK(pinned_line(pid, &bytes, &pins, &left) != 0,
	      "the client is still listed after its last pin went");
	close(nv);
	return test_done();
}
