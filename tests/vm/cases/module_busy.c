/* SPDX-License-Identifier: MIT */
/*
 * Modules in use cannot go: rmmod gdrdrv fails while an fd (or only a
 * mapping) holds it, and rmmod nvsim fails while gdrdrv uses its symbols
 * or a process has /dev/nvsim open.  The clean unload itself is the
 * unload-gdrdrv and unload-nvsim steps at the end of each pass.
 */
#include <sys/wait.h>

#include "vmtest.h"

static int loaded(const char *mod)
{
	char line[256];
	size_t n = strlen(mod);
	FILE *f = fopen("/proc/modules", "r");
	int found = 0;

	REQUIRE(f, "/proc/modules: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, mod, n) && line[n] == ' ')
			found = 1;
	fclose(f);
	return found;
}

/* rmmod's exit status; the module must then still be there. */
static void rmmod_refused(const char *mod, const char *why)
{
	char cmd[64];
	int st;

	snprintf(cmd, sizeof(cmd), "rmmod %s 2>/dev/null", mod);
	st = system(cmd);
	CHECK(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) != 0,
	      "rmmod %s succeeded %s", mod, why);
	REQUIRE(loaded(mod), "%s was unloaded %s: later cases cannot run",
		mod, why);
}

int main(void)
{
	const size_t len = 2 * GPU_PAGE;
	volatile uint8_t *m;
	CUdeviceptr d;
	uint64_t h;
	int fd;

	REQUIRE(loaded("gdrdrv") && loaded("nvsim"), "modules not loaded");
	rmmod_refused("nvsim", "while gdrdrv uses it");

	vm_cuda_init();
	d = vm_alloc(len);
	gpu_fill(d, len, 81);
	fd = gdrdrv_open();
	rmmod_refused("gdrdrv", "with /dev/gdrdrv open");
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin failed");
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	close(fd);
	rmmod_refused("gdrdrv", "with only a mapping left");
	CHECK(map_mismatch(m, len, 81) < 0, "data after the rmmod attempts");
	munmap((void *)m, len);
	CU_OK(cuMemFree(d));
	return test_done();
}
