/* SPDX-License-Identifier: MIT */
/*
 * With logging on, libgdrapi's failures name the cause and the fix: a
 * pin of host memory, of managed memory, of freed memory, of a range past
 * its allocation; gdr_open without permission on /dev/gdrdrv.  Each case
 * runs in a child with GDRCOPY_ENABLE_LOGGING set, and its stderr is read.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "gdrapi.h"
#include "vmtest.h"

enum scenario { HOST, MANAGED, FREED, PAST_END, NO_PERMISSION };

/* What a scenario returned (or gdr_open's errno) and what it printed. */
struct outcome {
	int ret;
	char log[4096];
};

static int child(enum scenario s)
{
	static char host[8192];
	CUdeviceptr d;
	gdr_mh_t mh;
	gdr_t g;

	if (s == NO_PERMISSION) {
		/* nobody: root would ignore the mode. */
		if (setgid(65534) || setuid(65534))
			return 100;
		g = gdr_open();
		return g ? 0 : errno;
	}
	vm_cuda_init();
	g = gdr_open();
	if (!g)
		return 101;
	switch (s) {
	case HOST:
		return gdr_pin_buffer(g, (unsigned long)host, 4096, 0, 0, &mh);
	case MANAGED:
		if (cuMemAllocManaged(&d, GPU_PAGE, CU_MEM_ATTACH_GLOBAL))
			return 102;
		return gdr_pin_buffer(g, d, 4096, 0, 0, &mh);
	case FREED:
		d = vm_alloc(GPU_PAGE);
		cuMemFree(d);
		return gdr_pin_buffer(g, d, 4096, 0, 0, &mh);
	case PAST_END:
		d = vm_alloc(GPU_PAGE);
		return gdr_pin_buffer(g, d + GPU_PAGE - 16, 4096, 0, 0, &mh);
	default:
		return 103;
	}
}

static void run(enum scenario s, struct outcome *o)
{
	int fds[2], status = 0;
	ssize_t n, total = 0;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	REQUIRE(!pipe(fds), "pipe");
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (!pid) {
		close(fds[0]);
		dup2(fds[1], 2);
		setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
		_exit(child(s));
	}
	close(fds[1]);
	while ((n = read(fds[0], o->log + total,
			 sizeof(o->log) - 1 - total)) > 0)
		total += n;
	close(fds[0]);
	waitpid(pid, &status, 0);
	o->ret = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(void)
{
	struct outcome o;
	struct stat st;

	run(HOST, &o);
	CHECK(o.ret == EINVAL, "host memory: EINVAL (%d)", o.ret);
	CHECK(strstr(o.log, "host memory") || strstr(o.log, "not memory CUDA knows"),
	      "host memory is named: %s", o.log);

	run(MANAGED, &o);
	CHECK(o.ret != 0 && o.ret < 100, "managed memory refused (%d)", o.ret);
	CHECK(strstr(o.log, "managed memory") != NULL,
	      "managed memory is named, with the fix: %s", o.log);

	run(FREED, &o);
	CHECK(o.ret == EINVAL, "freed memory: EINVAL (%d)", o.ret);
	CHECK(strstr(o.log, "not memory CUDA knows") != NULL,
	      "freed memory is named: %s", o.log);

	run(PAST_END, &o);
	CHECK(o.ret == EINVAL, "range past the allocation: EINVAL (%d)", o.ret);
	CHECK(strstr(o.log, "past the end of its allocation") != NULL,
	      "the overrun is named: %s", o.log);

	REQUIRE(!stat(GDRDRV_DEVICE_PATH, &st), "stat /dev/gdrdrv");
	REQUIRE(!chmod(GDRDRV_DEVICE_PATH, 0600), "chmod /dev/gdrdrv");
	run(NO_PERMISSION, &o);
	chmod(GDRDRV_DEVICE_PATH, st.st_mode & 07777);
	CHECK(o.ret == EACCES, "no permission: gdr_open fails with EACCES (%d)",
	      o.ret);
	CHECK(strstr(o.log, "no permission to open /dev/gdrdrv") &&
	      strstr(o.log, "group"),
	      "the permission problem and its fix are named: %s", o.log);
	return test_done();
}
