/* SPDX-License-Identifier: MIT */
/*
 * Who holds what, and limits on it:
 *  - /proc/driver/gdrdrv/pinned lists, per process, the bytes and pins of
 *    all its open /dev/gdrdrv files;
 *  - max_pinned_per_file bounds the bytes one open file holds pinned
 *    (ENOMEM past it); 0 is no bound;
 *  - pins are released when the process that made them exits, though a
 *    fork child still holds the descriptor (it could never use them):
 *    persistent pins by put_pages at its exit; callback-mode pins, which
 *    NVIDIA may no longer find for an exiting process, by their callbacks
 *    when the memory's last holder (here the child, which also holds
 *    /dev/nvsim) lets it go;
 *  - the kernel memory of pins is charged to the pinning process's memory
 *    cgroup.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "vmtest.h"

#define LIMIT	"/sys/module/gdrdrv/parameters/max_pinned_per_file"

/* This process's line of /proc/driver/gdrdrv/pinned; 0 if listed. */
static int pinned_of(pid_t pid, unsigned long long *bytes, int *pins)
{
	FILE *f = fopen("/proc/driver/gdrdrv/pinned", "r");
	unsigned long long b;
	int p, n, found = -1;
	char line[128];

	REQUIRE(f, "/proc/driver/gdrdrv/pinned: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%d %llu %d", &p, &b, &n) != 3 || p != pid)
			continue;
		CHECK(found, "process %d listed twice", pid);
		*bytes = b;
		*pins = n;
		found = 0;
	}
	fclose(f);
	return found;
}

static void expect_pinned(unsigned long long bytes, int pins, const char *when)
{
	unsigned long long b = 0;
	int n = 0;

	CHECK(pinned_of(getpid(), &b, &n) == 0, "%s: not listed", when);
	CHECK(b == bytes && n == pins, "%s: %llu bytes in %d pins, want %llu in %d",
	      when, b, n, bytes, pins);
}

static void listing(CUdeviceptr d)
{
	unsigned long long b;
	uint64_t h1, h2, h3;
	int fd1 = gdrdrv_open(), fd2 = gdrdrv_open(), n;

	expect_pinned(0, 0, "open");
	REQUIRE(gdrdrv_pin(fd1, d, GPU_PAGE, &h1) == 0, "pin");
	/* Unaligned: the three GPU pages it touches count. */
	REQUIRE(gdrdrv_pin(fd1, d + 3, 2 * GPU_PAGE, &h2) == 0, "pin");
	REQUIRE(gdrdrv_pin(fd2, d, 4 * GPU_PAGE, &h3) == 0, "pin");
	expect_pinned(8 * GPU_PAGE, 3, "three pins on two files");
	CHECK_RET(gdrdrv_unpin(fd1, h2), 0);
	expect_pinned(5 * GPU_PAGE, 2, "after an unpin");
	close(fd2);
	expect_pinned(GPU_PAGE, 1, "after a close");
	close(fd1);
	CHECK(pinned_of(getpid(), &b, &n) != 0, "listed with no file open");
	(void)h1;
}

static void set_limit(unsigned long long bytes)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu", bytes);
	REQUIRE(write_text(LIMIT, text) == 0, "writing %s: %s", LIMIT,
		strerror(errno));
}

static void limit(CUdeviceptr d)
{
	uint64_t h1, h2, h3;
	int fd = gdrdrv_open(), other = gdrdrv_open();

	set_limit(3 * GPU_PAGE);
	CHECK_RET(gdrdrv_pin(fd, d, 2 * GPU_PAGE, &h1), 0);
	CHECK_RET(gdrdrv_pin(fd, d, 2 * GPU_PAGE, &h2), -ENOMEM);
	CHECK_RET(gdrdrv_pin(fd, d, GPU_PAGE, &h2), 0);
	CHECK_RET(gdrdrv_pin(fd, d, 1, &h3), -ENOMEM);
	/* Per file: another one has its own. */
	CHECK_RET(gdrdrv_pin(other, d, 3 * GPU_PAGE, &h3), 0);
	CHECK_RET(gdrdrv_unpin(fd, h1), 0);
	CHECK_RET(gdrdrv_pin(fd, d, 2 * GPU_PAGE, &h1), 0);
	set_limit(0);
	CHECK_RET(gdrdrv_pin(fd, d, 4 * GPU_PAGE, &h3), 0);
	close(fd);
	close(other);
}

/*
 * A process pins, forks a child that keeps every descriptor open (gdrdrv's
 * and nvsim's, so the memory is not freed either) and waits, and exits:
 * its persistent pins go with it, its callback-mode pins with the child.
 */
static void owner_exit(int persistent)
{
	long held = gdrdrv_refcount(), pins = nvsim_count("outstanding_pins");
	int go[2], ready[2], st;
	pid_t owner, keeper = 0;
	char c = 0;

	REQUIRE(pipe(go) == 0 && pipe(ready) == 0, "pipe");
	fflush(NULL);
	owner = fork();
	if (owner == 0) {
		CUdeviceptr d;
		uint64_t h;
		int fd;

		vm_cuda_init();
		d = vm_alloc(4 * GPU_PAGE);
		fd = gdrdrv_open();
		if (gdrdrv_pin(fd, d, 4 * GPU_PAGE, &h))
			_exit(1);
		keeper = fork();
		if (keeper == 0) {
			/* Holds the fds (gdrdrv's, nvsim's) until told. */
			char x;

			if (read(go[0], &x, 1) < 0)
				_exit(1);
			_exit(0);
		}
		if (write(ready[1], &keeper, sizeof(keeper)) < 0)
			_exit(1);
		_exit(0);
	}
	REQUIRE(owner > 0, "fork");
	REQUIRE(read(ready[0], &keeper, sizeof(keeper)) == sizeof(keeper),
		"the owner did not start its child");
	REQUIRE(waitpid(owner, &st, 0) == owner && WIFEXITED(st) &&
		WEXITSTATUS(st) == 0, "the owner failed");
	CHECK(gdrdrv_refcount() == held + !persistent,
	      "the owner exited and its child holds the fds: gdrdrv holds %ld pins, had %ld",
	      gdrdrv_refcount(), held);
	CHECK(nvsim_count("outstanding_pins") == pins + !persistent,
	      "the owner exited: nvsim has %ld pins, had %ld",
	      nvsim_count("outstanding_pins"), pins);
	CHECK(write(go[1], &c, 1) == 1, "telling the child");
	/* The keeper is the owner's child: reparented, not ours to wait. */
	for (int i = 0; i < 500 && !kill(keeper, 0); i++)
		usleep(10000);
	CHECK(kill(keeper, 0) != 0, "the keeper did not exit");
	CHECK(gdrdrv_refcount() == held &&
	      nvsim_count("outstanding_pins") == pins,
	      "the keeper exited: gdrdrv holds %ld pins, nvsim %ld; had %ld, %ld",
	      gdrdrv_refcount(), nvsim_count("outstanding_pins"), held, pins);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
}

/* memory.stat's slab_unreclaimable of cgroup dir, or -1. */
static long long cg_slab(const char *dir)
{
	char path[256], key[64];
	long long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, "slab_unreclaimable"))
			found = v;
	fclose(f);
	return found;
}

#define CG	"/sys/fs/cgroup"
#define CG_T	CG "/gdrdrv-test"
#define NPINS	2000

/* Many pins of one process: its cgroup's kernel memory grows with them. */
static void memcg(CUdeviceptr d)
{
	static uint64_t h[NPINS];
	long long before, after;
	char pid[32];
	int fd, i, k, ok = 1;

	mkdir(CG, 0755);
	if (access(CG "/cgroup.controllers", R_OK) &&
	    system("mount -t cgroup2 none " CG " 2>/dev/null") != 0) {
		SKIP("cannot mount cgroup2");
		return;
	}
	if (write_text(CG "/cgroup.subtree_control", "+memory") ||
	    (mkdir(CG_T, 0755) && errno != EEXIST)) {
		SKIP("no memory controller");
		return;
	}
	snprintf(pid, sizeof(pid), "%d", getpid());
	REQUIRE(write_text(CG_T "/cgroup.procs", pid) == 0,
		"moving into %s", CG_T);

	fd = gdrdrv_open();
	before = cg_slab(CG_T);
	for (i = 0; i < NPINS && ok; i++)
		ok = gdrdrv_pin(fd, d, GPU_PAGE, &h[i]) == 0;
	/* memory.stat sums per-CPU counters flushed at most every 2 s on
	 * newer kernels (ratelimited): look again for up to 3 s. */
	for (k = 0; k < 30; k++) {
		after = cg_slab(CG_T);
		if (after < 0 || after - before >= NPINS * 128LL)
			break;
		usleep(100000);
	}
	CHECK(ok, "pin %d of %d failed", i, NPINS);
	/* A region is well over 128 bytes. */
	CHECK(before >= 0 && after - before >= NPINS * 128LL,
	      "%d pins charged %lld bytes of slab to the cgroup", NPINS,
	      after - before);
	close(fd);

	REQUIRE(write_text(CG "/cgroup.procs", pid) == 0, "moving back");
	rmdir(CG_T);
}

int main(void)
{
	const size_t len = 4 * GPU_PAGE;
	CUdeviceptr d;
	int fd = gdrdrv_open(), persistent = gdrdrv_persistent(fd);

	close(fd);
	/* First: its child must be the first of the two to use CUDA. */
	owner_exit(persistent);
	vm_cuda_init();
	d = vm_alloc(len);
	gpu_fill(d, len, 9);
	listing(d);
	limit(d);
	memcg(d);
	CU_OK(cuMemFree(d));
	return test_done();
}
