// SPDX-License-Identifier: MIT
/*
 * gdr_open's choice of backend and what it says when none is usable.
 * Each case runs gdr_open in a child with its own environment and reads
 * what it printed.  Needs a machine without /dev/gdrdrv (skips otherwise).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "gdrapi.h"

struct outcome {
	int opened;
	int err;
	char log[8192];
	const char *last;	/* gdrmap_last_error() after the call, in log */
};

/* Run gdr_open in a child with env "NAME=VALUE" pairs set. */
static void try_open(const char *const *env, struct outcome *o)
{
	int pipefd[2], status;
	ssize_t n, total = 0;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe(pipefd))
		return;
	pid = fork();
	if (pid == 0) {
		gdr_t g;
		int res[2];

		close(pipefd[0]);
		dup2(pipefd[1], 2);
		unsetenv("GDRMAP_BACKEND");
		unsetenv("GDRCOPY_USE_DMABUF_MMAP");
		unsetenv("GDRCOPY_ENABLE_LOGGING");
		unsetenv("GDRCOPY_LOG_LEVEL");
		for (; *env; env++)
			putenv((char *)*env);
		g = gdr_open();
		res[0] = g != NULL;
		res[1] = g ? 0 : errno;
		/* Results go last on the pipe, after the log. */
		dprintf(2, "\n@@%d %d\n%s", res[0], res[1],
			gdrmap_last_error());
		_exit(0);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], o->log + total,
			 sizeof(o->log) - 1 - total)) > 0)
		total += n;
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	o->log[total] = '\0';
	{
		char *res = strstr(o->log, "\n@@");

		o->last = "";
		if (res) {
			char *last = strchr(res + 1, '\n');

			sscanf(res + 3, "%d %d", &o->opened, &o->err);
			*res = '\0';
			if (last)
				o->last = last + 1;
		}
	}
}

int main(void)
{
	static const char *const quiet[] = { NULL };
	static const char *const logging[] = { "GDRCOPY_ENABLE_LOGGING=1",
					       NULL };
	static const char *const bogus[] = { "GDRCOPY_ENABLE_LOGGING=1",
					     "GDRMAP_BACKEND=bogus", NULL };
	static const char *const vulkan[] = { "GDRCOPY_ENABLE_LOGGING=1",
					      "GDRMAP_BACKEND=vulkan", NULL };
	static const char *const gdrdrv[] = { "GDRCOPY_ENABLE_LOGGING=1",
					      "GDRMAP_BACKEND=gdrdrv", NULL };
	static const char *const dmabuf[] = { "GDRCOPY_ENABLE_LOGGING=1",
					      "GDRCOPY_USE_DMABUF_MMAP=1",
					      NULL };
	static const char *const debug[] = { "GDRCOPY_ENABLE_LOGGING=1",
					     "GDRCOPY_LOG_LEVEL=1", NULL };
	static const char *const any[] = { "GDRMAP_BACKEND=any", NULL };
	struct outcome o;

	if (access("/dev/gdrdrv", F_OK) == 0) {
		SKIP("/dev/gdrdrv exists here; these cases need a machine without it");
		return test_done();
	}

	try_open(quiet, &o);
	CHECK(!o.opened && o.err != 0, "no backend: NULL with errno (%d)",
	      o.err);
	CHECK(o.log[0] == '\0', "silent without GDRCOPY_ENABLE_LOGGING: \"%s\"",
	      o.log);
	CHECK(strstr(o.last, "no backend is usable") &&
	      strstr(o.last, "modprobe gdrdrv") && strstr(o.last, "vulkan:"),
	      "gdrmap_last_error() holds the whole reason without logging: \"%s\"",
	      o.last);
	CHECK(strstr(o.last, "vulkan: not tried by gdr_open") &&
	      strstr(o.last, "GDRMAP_BACKEND=any"),
	      "gdr_open says it left the vulkan backend out, and how to take it: \"%s\"",
	      o.last);

	/* GDRMAP_BACKEND=any: every backend tried, vulkan included. */
	try_open(any, &o);
	CHECK(!o.opened && o.err != 0, "GDRMAP_BACKEND=any, no backend: errno %d",
	      o.err);
	CHECK(strstr(o.last, "no backend is usable") &&
	      !strstr(o.last, "not tried") && strstr(o.last, "vulkan:"),
	      "GDRMAP_BACKEND=any tries vulkan too: \"%s\"", o.last);

	try_open(logging, &o);
	CHECK(!o.opened, "no backend usable");
	CHECK(strstr(o.log, "no backend is usable") != NULL,
	      "says nothing is usable: %s", o.log);
	CHECK(strstr(o.log, "modprobe gdrdrv") != NULL,
	      "says how to load gdrdrv: %s", o.log);
	CHECK(strstr(o.log, "dmabuf:") && strstr(o.log, "vulkan:"),
	      "lists each backend's reason: %s", o.log);

	try_open(bogus, &o);
	CHECK(!o.opened && o.err == EINVAL, "unknown backend name: EINVAL (%d)",
	      o.err);
	CHECK(strstr(o.log, "GDRMAP_BACKEND=bogus is not a backend") != NULL,
	      "names the bad value: %s", o.log);
	CHECK(strstr(o.last, "GDRMAP_BACKEND=bogus is not a backend") != NULL,
	      "gdrmap_last_error() names it too: %s", o.last);

	try_open(vulkan, &o);
	CHECK(!o.opened, "forced vulkan fails here");
	CHECK(strstr(o.log, "vulkan backend (forced") != NULL,
	      "says the forced backend failed: %s", o.log);
	CHECK(strstr(o.log, "gdrdrv") == NULL || strstr(o.log, "load gdrdrv"),
	      "did not try gdrdrv: %s", o.log);
	/* The diagnosis (lib/diag/, tested on fake machines) reaches
	 * gdrmap_last_error(): here, the missing GPU is one of its causes. */
	if (access("/dev/nvidiactl", F_OK))
		CHECK(strstr(o.last, "what stops it here:\n    - ") &&
		      strstr(o.last, "/dev/nvidiactl"),
		      "the vulkan backend lists the causes it finds: %s",
		      o.last);

	try_open(gdrdrv, &o);
	CHECK(!o.opened && o.err == ENOENT, "forced gdrdrv: ENOENT (%d)",
	      o.err);
	CHECK(strstr(o.log, "/dev/gdrdrv does not exist") != NULL,
	      "explains the missing device: %s", o.log);

	try_open(dmabuf, &o);
	CHECK(!o.opened, "GDRCOPY_USE_DMABUF_MMAP=1 forces dmabuf");
	CHECK(strstr(o.log, "dmabuf backend (forced") != NULL,
	      "dmabuf was the one tried: %s", o.log);

	try_open(debug, &o);
	CHECK(strstr(o.log, "gdrdrv backend not usable") != NULL,
	      "GDRCOPY_LOG_LEVEL=1 shows each attempt: %s", o.log);
	return test_done();
}
