// SPDX-License-Identifier: MIT
/*
 * gdr_open keeps GDRCopy's rule on a real GPU machine: where the backend
 * gdrmap_open chooses maps every kind of CUDA memory (gdrdrv, dmabuf, rm:
 * on a stock driver with no module, the rm backend), gdr_open chooses the
 * same; where it is the vulkan backend, which pins
 * cudaMalloc memory copy-only, gdr_open returns NULL unless the
 * environment names it (GDRMAP_BACKEND=any or vulkan), saying why and how
 * to take it, so that UCX and the MPIs run as with GDRCopy's library.
 * Every case in a new process (this program again) with its own
 * environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"

/*
 * The backend gdr_open ("gdr") or gdrmap_open ("gdrmap") gives with
 * GDRMAP_BACKEND=env (NULL: unset), in a new process: this program run
 * again (a child of a process that started CUDA cannot use CUDA, so fork
 * alone would not do); 0 for none, -1 if the child failed.  why gets the
 * library's reason when none.
 */
static int backend_in_child(const char *which, const char *env, char *why,
			    size_t why_len)
{
	int pipefd[2], status, b = -1;
	ssize_t n, total = 0;
	pid_t pid;

	why[0] = '\0';
	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		dup2(pipefd[1], 1);
		if (env)
			setenv("GDRMAP_BACKEND", env, 1);
		else
			unsetenv("GDRMAP_BACKEND");
		unsetenv("GDRCOPY_USE_DMABUF_MMAP");
		execl("/proc/self/exe", "test_gpu_open_rule", "--open", which,
		      (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (total < (ssize_t)why_len - 1 &&
	       (n = read(pipefd[0], why + total, why_len - 1 - total)) > 0)
		total += n;
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	why[total] = '\0';
	if (total > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		char *nl = strchr(why, '\n');

		b = atoi(why);
		memmove(why, nl ? nl + 1 : why + total,
			strlen(nl ? nl + 1 : why + total) + 1);
	}
	return b;
}

/* The child: open as asked, print the backend, then the reason if none. */
static int open_and_say(const char *which)
{
	gdr_t g = strcmp(which, "gdrmap") ? gdr_open() : gdrmap_open();
	int b = 0;

	if (g)
		gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &b);
	printf("%d\n%s", g ? b : 0, g ? "" : gdrmap_last_error());
	if (g)
		gdr_close(g);
	return 0;
}

int main(int argc, char **argv)
{
	char why[8192];
	int mine, theirs;

	if (argc == 3 && !strcmp(argv[1], "--open"))
		return open_and_say(argv[2]);
	if (gpu_setup())
		return test_done();
	mine = backend_in_child("gdrmap", NULL, why, sizeof(why));
	CHECK(mine > 0, "gdrmap_open on a GPU machine: %s", why);
	theirs = backend_in_child("gdr", NULL, why, sizeof(why));
	fprintf(stderr, "gdrmap_open: backend %d, gdr_open: backend %d\n",
		mine, theirs);
	if (mine == GDRMAP_BACKEND_VULKAN) {
		CHECK(theirs == 0, "gdr_open leaves the vulkan backend out (got %d)",
		      theirs);
		CHECK(strstr(why, "vulkan: not tried by gdr_open") &&
		      strstr(why, "GDRMAP_BACKEND=any"),
		      "gdr_open says why and how to take it: %s", why);
		CHECK(backend_in_child("gdr", "any", why, sizeof(why)) ==
		      GDRMAP_BACKEND_VULKAN,
		      "GDRMAP_BACKEND=any: gdr_open takes vulkan: %s", why);
		CHECK(backend_in_child("gdr", "vulkan", why, sizeof(why)) ==
		      GDRMAP_BACKEND_VULKAN,
		      "GDRMAP_BACKEND=vulkan: gdr_open takes it: %s", why);
	} else {
		CHECK(theirs == mine,
		      "a backend that maps every allocation: gdr_open takes it too (%d, %d): %s",
		      theirs, mine, why);
	}
	if (mine == GDRMAP_BACKEND_RM)
		CHECK(backend_in_child("gdr", "rm", why, sizeof(why)) ==
		      GDRMAP_BACKEND_RM,
		      "GDRMAP_BACKEND=rm: gdr_open takes it: %s", why);
	return test_done();
}
