// SPDX-License-Identifier: MIT
/*
 * gdr_open keeps GDRCopy's rule, gdrmap_open does not (backend_select.c):
 * on a fake machine without /dev/gdrdrv whose CUDA cannot mmap dma-bufs,
 * the only usable backend is vulkan, which cannot map cudaMalloc memory.
 * gdr_open leaves it out (NULL, errno set, the reason and the way to take
 * it in gdrmap_last_error(), Vulkan never opened); GDRMAP_BACKEND=any or
 * vulkan make gdr_open take it; gdrmap_open takes it unasked, and still
 * obeys a backend the environment forces.  Where dmabuf works (it maps
 * every allocation), gdr_open uses it, module-free as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_vulkan.h"
#include "owner_pins.h"

/* The backend g uses, as GDRMAP_ATTR_BACKEND reports it; 0 for NULL. */
static int backend_of(gdr_t g)
{
	int b = 0;

	if (g)
		LIB(gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &b), 0);
	return b;
}

static void expect(gdr_t g, int backend, const char *what)
{
	CHECK(backend_of(g) == backend, "%s: backend %d, want %d (%s)", what,
	      backend_of(g), backend, g ? "" : gdrmap_last_error());
	if (g)
		CHECK_RET(gdr_close(g), 0);
}

/*
 * A backend that maps every allocation: gdr_open takes it.  In a child:
 * the dmabuf backend tries each device once per process.
 */
static void dmabuf_works(void)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		expect(gdr_open(), GDRMAP_BACKEND_DMABUF,
		       "gdr_open where dmabuf works");
		expect(gdrmap_open(), GDRMAP_BACKEND_DMABUF,
		       "gdrmap_open where dmabuf works");
		_exit(test_done());
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid &&
	      WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "where dmabuf works, gdr_open and gdrmap_open use it (child status 0x%x)",
	      status);
}

int main(void)
{
	gdr_t g;
	int d;

	if (access("/dev/gdrdrv", F_OK) == 0) {
		SKIP("/dev/gdrdrv exists here; these cases need a machine without it");
		return test_done();
	}
	gdr_cuda_use_syms(&fake_syms);
	unsetenv("GDRMAP_BACKEND");
	unsetenv("GDRCOPY_USE_DMABUF_MMAP");
	dmabuf_works();
	for (d = 0; d < FAKE_DEVS; d++)
		fake_dmabuf_supported[d] = 0;

	errno = 0;
	g = gdr_open();
	CHECK(g == NULL && errno != 0,
	      "gdr_open leaves the partial backend out: NULL, errno %d", errno);
	if (g)
		gdr_close(g);
	CHECK(strstr(gdrmap_last_error(), "vulkan: not tried by gdr_open") &&
	      strstr(gdrmap_last_error(), "cudaMalloc") &&
	      strstr(gdrmap_last_error(), "GDRMAP_BACKEND=any") &&
	      strstr(gdrmap_last_error(), "gdrmap_open"),
	      "the reason says why vulkan was left out and how to take it: %s",
	      gdrmap_last_error());
	CHECK(fvk.nr_gpus == 0 && imports == 0,
	      "gdr_open never opened Vulkan (%u GPUs listed, %d imports)",
	      fvk.nr_gpus, imports);

	expect(gdrmap_open(), GDRMAP_BACKEND_VULKAN, "gdrmap_open");

	setenv("GDRMAP_BACKEND", "any", 1);
	expect(gdr_open(), GDRMAP_BACKEND_VULKAN, "gdr_open, GDRMAP_BACKEND=any");
	expect(gdrmap_open(), GDRMAP_BACKEND_VULKAN,
	       "gdrmap_open, GDRMAP_BACKEND=any");
	/* "any" wins over GDRCopy's variable, as every GDRMAP_BACKEND does. */
	setenv("GDRCOPY_USE_DMABUF_MMAP", "1", 1);
	expect(gdr_open(), GDRMAP_BACKEND_VULKAN,
	       "gdr_open, GDRMAP_BACKEND=any and GDRCOPY_USE_DMABUF_MMAP=1");
	unsetenv("GDRCOPY_USE_DMABUF_MMAP");
	setenv("GDRMAP_BACKEND", "vulkan", 1);
	expect(gdr_open(), GDRMAP_BACKEND_VULKAN,
	       "gdr_open, GDRMAP_BACKEND=vulkan");

	/* A forced backend binds gdrmap_open too. */
	setenv("GDRMAP_BACKEND", "dmabuf", 1);
	g = gdrmap_open();
	CHECK(g == NULL && strstr(gdrmap_last_error(), "dmabuf backend (forced"),
	      "gdrmap_open with GDRMAP_BACKEND=dmabuf, not usable here: %s",
	      g ? "opened" : gdrmap_last_error());
	if (g)
		gdr_close(g);
	unsetenv("GDRMAP_BACKEND");

	return owner_done();
}
