/* SPDX-License-Identifier: MIT */
/*
 * Who reads gdrdrv's /proc files, and as whom:
 *  - /proc/driver/gdrdrv/pinned shows pids as the procfs it is in numbers
 *    them, for the credentials it was opened with: the same answer
 *    whoever reads the descriptor.  A copy opened here and read by a
 *    process in a new pid namespace (which cannot name this one) still
 *    lists this process; before, the reader's namespace was used with the
 *    opener's credentials, and this process vanished;
 *  - nv_get_pages_refcount, the count of every user's pins, is root's
 *    (0440, as GDRCopy's): another user gets EACCES;
 *  - a walk of the open files that others open files during leaves none
 *    out: a reader walks 40000 open files, held off its CPU by a
 *    real-time hog 2 ms into its read, while 100 more are opened and
 *    then, by another process, one more, last of all; that process must
 *    be listed (the walk used to keep room for 16 more files than it
 *    started with, and drop the rest).
 */
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "vmtest.h"

#define PINNED		"/proc/driver/gdrdrv/pinned"
#define REFCOUNT	"/proc/driver/gdrdrv/nv_get_pages_refcount"

/* Whether the text read from fd has a line for pid. */
static int lists(int fd, pid_t pid)
{
	char buf[4096], *line, *save = NULL;
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (atoi(line) == pid)
			return 1;
	return 0;
}

/* A grandchild in a new pid namespace reads fd: 0 it lists pid. */
static int read_in_new_ns(int fd, pid_t pid)
{
	pid_t child;
	int st;

	if (unshare(CLONE_NEWPID))
		return errno == EINVAL || errno == EPERM ? 77 : 2;
	child = fork();
	if (child < 0)
		return 3;
	if (child == 0)
		_exit(getpid() == 1 && lists(fd, pid) == 1 ? 0 : 4);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st))
		return 5;
	return WEXITSTATUS(st);
}

static void namespaces(void)
{
	CUdeviceptr d = vm_alloc(GPU_PAGE);
	int fd = gdrdrv_open(), pfd, st;
	uint64_t h;
	pid_t pid;

	REQUIRE(gdrdrv_pin(fd, d, GPU_PAGE, &h) == 0, "pin");
	pfd = open(PINNED, O_RDONLY);
	REQUIRE(pfd >= 0, "%s: %s", PINNED, strerror(errno));
	CHECK(lists(pfd, getpid()) == 1, "%s does not list this process",
	      PINNED);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0)
		_exit(read_in_new_ns(pfd, getppid()));
	REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st), "waitpid");
	if (WEXITSTATUS(st) == 77)
		SKIP("no new pid namespace here");
	else
		CHECK(WEXITSTATUS(st) == 0,
		      "read from a new pid namespace, this process's %s no longer lists it (step %d)",
		      PINNED, WEXITSTATUS(st));
	close(pfd);
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	close(fd);
	CU_OK(cuMemFree(d));
}

static void refcount_mode(void)
{
	struct stat sb;
	pid_t pid;
	int st;

	REQUIRE(stat(REFCOUNT, &sb) == 0, "%s: %s", REFCOUNT, strerror(errno));
	CHECK((sb.st_mode & 0777) == 0440, "%s has mode %o, want 0440",
	      REFCOUNT, sb.st_mode & 0777);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(open(REFCOUNT, O_RDONLY) < 0 && errno == EACCES ? 0 : 3);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st), "waitpid");
	CHECK(WEXITSTATUS(st) == 0, "another user could read %s (step %d)",
	      REFCOUNT, WEXITSTATUS(st));
	CHECK(gdrdrv_refcount() >= 0, "root cannot read %s", REFCOUNT);
}

#define HELD	40000	/* files open before the walk */
#define MORE	100	/* files opened during it */

static void on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* The CPU time pid has run, in ns (/proc/PID/schedstat), or 0. */
static unsigned long long ran_ns(pid_t pid)
{
	unsigned long long ns = 0;
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/* A child that waits for a byte on fd, then runs fn; killed with us. */
static pid_t child_on(int fd, int (*fn)(void *), void *arg)
{
	pid_t pid;
	char c;

	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (read(fd, &c, 1) != 1)
		_exit(2);
	_exit(fn(arg));
}

/* The hog: real-time on CPU 0 (the reader's) until *stop. */
static int hog(void *arg)
{
	volatile int *stop = arg;
	struct sched_param sp = { .sched_priority = 50 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		return 2;
	while (!*stop)
		;
	return 0;
}

/* The last opener: one file, then it waits to be killed. */
static int last_open(void *arg)
{
	int *told = arg;

	if (open(GDRDRV_DEVICE_PATH, O_RDWR) < 0 || write(*told, "o", 1) != 1)
		return 3;
	pause();
	return 0;
}

/*
 * One walk of PINNED by a child on CPU 0, which a real-time hog takes
 * that CPU from a moment after the walk began, while this process opens
 * MORE files and then another child opens one, the last of all, on CPU 1.
 * Whether that child is listed.
 */
static int walk_once(void)
{
	volatile int *stop = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char text[1 << 16], *line, *save = NULL, c;
	int more[MORE], out[2], go[2], wake[2], tell[2], told[2], st;
	int found = 0;
	unsigned long long t0;
	pid_t reader, h, last;
	ssize_t n, got = 0;

	REQUIRE(stop != MAP_FAILED, "mmap: %s", strerror(errno));
	*stop = 0;
	REQUIRE(pipe(go) == 0 && pipe(wake) == 0 && pipe(tell) == 0 &&
		pipe(told) == 0, "pipe");
	on_cpu(0);
	h = child_on(wake[0], hog, (void *)stop);
	on_cpu(1);
	last = child_on(tell[0], last_open, &told[1]);
	/* After those two: only the reader holds its write end. */
	REQUIRE(pipe(out) == 0, "pipe");
	fflush(NULL);
	reader = fork();
	REQUIRE(reader >= 0, "fork");
	if (reader == 0) {
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		on_cpu(0);
		fd = open(PINNED, O_RDONLY);
		if (fd < 0 || write(go[1], "r", 1) != 1)
			_exit(2);
		n = read(fd, text, sizeof(text));
		_exit(n < 0 || write(out[1], text, (size_t)n) != n ? 3 : 0);
	}
	close(out[1]);
	REQUIRE(read(go[0], &c, 1) == 1, "the reader did not start");
	/* 2 ms into its read: a few hundred files into the walk. */
	t0 = ran_ns(reader);
	while (ran_ns(reader) < t0 + 2000000 && !waitpid(reader, &st, WNOHANG))
		;
	REQUIRE(write(wake[1], "h", 1) == 1, "waking the hog");
	for (int i = 0; i < MORE; i++)
		more[i] = gdrdrv_open();
	REQUIRE(write(tell[1], "o", 1) == 1 && read(told[0], &c, 1) == 1,
		"the last opener did not open");
	*stop = 1;
	while ((n = read(out[0], text + got, sizeof(text) - 1 - (size_t)got)) > 0)
		got += n;
	text[got] = '\0';
	waitpid(reader, &st, 0);
	waitpid(h, &st, 0);
	kill(last, SIGKILL);
	waitpid(last, &st, 0);
	for (int i = 0; i < MORE; i++)
		close(more[i]);
	for (int i = 0; i < 2; i++) {
		close(go[i]);
		close(wake[i]);
		close(tell[i]);
		close(told[i]);
	}
	close(out[0]);
	munmap((void *)stop, sizeof(int));
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (atoi(line) == last)
			found = 1;
	return found;
}

static void walk(void)
{
	struct rlimit rl = { HELD + MORE + 64, HELD + MORE + 64 };
	static int held[HELD];

	REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0, "RLIMIT_NOFILE: %s",
		strerror(errno));
	for (int i = 0; i < HELD; i++)
		held[i] = gdrdrv_open();
	CHECK(walk_once(),
	      "a walk during which %d files were opened left out the last one's process",
	      MORE + 1);
	for (int i = 0; i < HELD; i++)
		close(held[i]);
}

int main(void)
{
	vm_cuda_init();
	namespaces();
	refcount_mode();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP("the walk needs 2 CPUs");
	else
		walk();
	return test_done();
}
