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
 *    (0440, as GDRCopy's): another user gets EACCES.
 */
#include <sched.h>
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

int main(void)
{
	vm_cuda_init();
	namespaces();
	refcount_mode();
	return test_done();
}
