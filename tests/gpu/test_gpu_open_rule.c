// SPDX-License-Identifier: MIT
/*
 * gdr_open keeps GDRCopy's rule on a real GPU machine: where the backend
 * gdrmap_open chooses maps every kind of CUDA memory (gdrdrv, dmabuf),
 * gdr_open chooses the same; where it is the vulkan backend, which pins
 * cudaMalloc memory copy-only, gdr_open returns NULL unless the
 * environment names it (GDRMAP_BACKEND=any or vulkan), saying why and how
 * to take it, so that UCX and the MPIs run as with GDRCopy's library.
 * Every case in a child with its own environment.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu.h"

/* The backend an open function gives with GDRMAP_BACKEND=env (NULL:
 * unset), in a child; 0 for none, -1 if the child failed. */
static int backend_in_child(gdr_t (*open_fn)(void), const char *env,
			    char *why, size_t why_len)
{
	int pipefd[2], status, b = -1;
	ssize_t n;
	pid_t pid;

	why[0] = '\0';
	if (pipe(pipefd))
		return -1;
	pid = fork();
	if (pid == 0) {
		gdr_t g;
		int got = 0;

		close(pipefd[0]);
		if (env)
			setenv("GDRMAP_BACKEND", env, 1);
		else
			unsetenv("GDRMAP_BACKEND");
		unsetenv("GDRCOPY_USE_DMABUF_MMAP");
		g = open_fn();
		if (g)
			gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &got);
		dprintf(pipefd[1], "%d\n%s", g ? got : 0,
			g ? "" : gdrmap_last_error());
		_exit(0);
	}
	close(pipefd[1]);
	n = read(pipefd[0], why, why_len - 1);
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	if (n > 0) {
		char *nl;

		why[n] = '\0';
		b = atoi(why);
		nl = strchr(why, '\n');
		memmove(why, nl ? nl + 1 : why, strlen(nl ? nl + 1 : why) + 1);
	}
	return b;
}

int main(void)
{
	char why[8192];
	int mine, theirs;

	if (gpu_setup())
		return test_done();
	mine = backend_in_child(gdrmap_open, NULL, why, sizeof(why));
	CHECK(mine > 0, "gdrmap_open on a GPU machine: %s", why);
	theirs = backend_in_child(gdr_open, NULL, why, sizeof(why));
	fprintf(stderr, "gdrmap_open: backend %d, gdr_open: backend %d\n",
		mine, theirs);
	if (mine == GDRMAP_BACKEND_VULKAN) {
		CHECK(theirs == 0, "gdr_open leaves the vulkan backend out (got %d)",
		      theirs);
		CHECK(strstr(why, "vulkan: not tried by gdr_open") &&
		      strstr(why, "GDRMAP_BACKEND=any"),
		      "gdr_open says why and how to take it: %s", why);
		CHECK(backend_in_child(gdr_open, "any", why, sizeof(why)) ==
		      GDRMAP_BACKEND_VULKAN,
		      "GDRMAP_BACKEND=any: gdr_open takes vulkan: %s", why);
		CHECK(backend_in_child(gdr_open, "vulkan", why, sizeof(why)) ==
		      GDRMAP_BACKEND_VULKAN,
		      "GDRMAP_BACKEND=vulkan: gdr_open takes it: %s", why);
	} else {
		CHECK(theirs == mine,
		      "a backend that maps every allocation: gdr_open takes it too (%d, %d): %s",
		      theirs, mine, why);
	}
	return test_done();
}
