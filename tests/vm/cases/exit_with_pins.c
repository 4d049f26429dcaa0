/* SPDX-License-Identifier: MIT */
/*
 * A process that ends with pins and mappings outstanding - by exit, by
 * SIGKILL while mapped, or with its GPU memory freed first - leaves
 * nothing behind: gdrdrv's and nvsim's counts return to where they were.
 */
#include <sys/wait.h>

#include "vmtest.h"

enum how { EXIT, KILLED, FREED_FIRST };

/* The child: its own CUDA and gdrdrv, a few pins, some mapped. */
static void child(enum how how, int ready)
{
	const size_t len = 8 * GPU_PAGE;
	CUdeviceptr d;
	uint64_t h;
	void *m;
	int fd;

	vm_cuda_init();
	fd = gdrdrv_open();
	d = vm_alloc(4 * len);
	for (int i = 0; i < 4; i++) {
		gpu_fill(d + i * len, len, 61);
		if (gdrdrv_pin(fd, d + i * len, len, &h))
			_exit(3);
		if (i % 2 == 0) {
			m = gdrdrv_mmap(fd, h, len);
			if (m == MAP_FAILED ||
			    map_mismatch(m, len, 61) != -1)
				_exit(4);
		}
	}
	if (how == FREED_FIRST)
		cuMemFree(d);
	if (write(ready, "r", 1) != 1)
		_exit(5);
	if (how == KILLED)
		pause();
	_exit(0);
}

static void one(enum how how)
{
	long pins0 = nvsim_count("outstanding_pins");
	long pages0 = nvsim_count("pinned_pages");
	long ref0 = gdrdrv_refcount();
	int p[2], status;
	char c;
	pid_t pid;

	REQUIRE(pipe(p) == 0, "pipe");
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		child(how, p[1]);
	}
	close(p[1]);
	CHECK(read(p[0], &c, 1) == 1, "child %d died before it was ready",
	      how);
	close(p[0]);
	if (how == KILLED)
		kill(pid, SIGKILL);
	REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	if (how == KILLED)
		CHECK(WIFSIGNALED(status), "child not killed");
	else
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child %d status %#x", how, status);

	CHECK(nvsim_count("outstanding_pins") == pins0,
	      "case %d: nvsim outstanding_pins %ld, was %ld", how,
	      nvsim_count("outstanding_pins"), pins0);
	CHECK(nvsim_count("pinned_pages") == pages0,
	      "case %d: nvsim pinned_pages %ld, was %ld", how,
	      nvsim_count("pinned_pages"), pages0);
	if (ref0 >= 0)
		CHECK(gdrdrv_refcount() == ref0,
		      "case %d: gdrdrv refcount %ld, was %ld", how,
		      gdrdrv_refcount(), ref0);
}

int main(void)
{
	/* No CUDA in this process before fork: each child starts clean. */
	one(EXIT);
	one(KILLED);
	one(FREED_FIRST);
	CHECK(nvsim_count("allocations") == 0, "nvsim allocations %ld",
	      nvsim_count("allocations"));
	return test_done();
}
