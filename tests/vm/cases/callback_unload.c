/* SPDX-License-Identifier: MIT */
/*
 * gdrdrv's code must stay loaded until NVIDIA's call of its free callback
 * is over.  NVIDIA calls it with its own lock held and goes on from it;
 * a close that finds the pin released by that callback does not wait for
 * it, so without more a close and an rmmod could unload the callback's
 * code while it still runs.
 *
 * nvsim's hook stops the freeing task right after gdrdrv's callback
 * returned, inside NVIDIA's call of it (nvsim's lock, NVIDIA's, still
 * held); meanwhile the fd is closed and gdrdrv removed: the removal must
 * not complete before that call is over.  Callback mode only (persistent
 * pins have no callback).  gdrdrv is loaded back as the pass had it.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "hook.h"

#define LEN	(2 * GPU_PAGE)

static char insmod[768];
static int unloaded;

static int sh(const char *cmd)
{
	int st = system(cmd);

	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void load_back(void)
{
	if (unloaded && sh(insmod) == 0)
		unloaded = 0;
}

struct free_call {
	pthread_t t;
	CUdeviceptr d;
	int rc;
};

static void *free_thread(void *arg)
{
	struct free_call *f = arg;

	vm_cuda_init();
	f->rc = cuMemFree(f->d);
	return NULL;
}

int main(void)
{
	const char *params = getenv("GDRMAP_VM_GDRDRV_PARAMS");
	const char *kodir = getenv("GDRMAP_VM_KODIR");
	long pins0 = nvsim_count("outstanding_pins");
	struct free_call f = { 0 };
	volatile uint8_t *m;
	char st[64];
	uint64_t h;
	int fd, rc;

	vm_cuda_init();
	fd = gdrdrv_open();
	if (gdrdrv_persistent(fd)) {
		SKIP("persistent pins have no free callback");
		close(fd);
		return test_done();
	}
	if (!hook_present()) {
		SKIP("%s: %s (an nvsim without hooks)", HOOK, strerror(errno));
		close(fd);
		return test_done();
	}
	snprintf(insmod, sizeof(insmod),
		 "insmod %s/gdrdrv.ko use_persistent_mapping=0 %s",
		 kodir ? kodir : "/lib/gdrmap", params ? params : "");
	atexit(load_back);

	f.d = vm_alloc(LEN);
	gpu_fill(f.d, LEN, 51);
	REQUIRE(gdrdrv_pin(fd, f.d, LEN, &h) == 0, "pin failed");
	m = gdrdrv_mmap(fd, h, LEN);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK(map_mismatch(m, LEN, 51) < 0, "data through the mapping");
	munmap((void *)m, LEN);

	/* Nothing puts the pin: the hook lets go after its timeout. */
	hook_arm("callback_done", f.d, "put_enter", 3000);
	REQUIRE(pthread_create(&f.t, NULL, free_thread, &f) == 0,
		"pthread_create");
	hook_wait_stopped();
	close(fd);
	rc = sh("rmmod gdrdrv");
	unloaded = rc == 0;
	hook_read(st, sizeof(st));
	CHECK(strncmp(st, "waiting", 7) != 0,
	      "gdrdrv was unloaded while NVIDIA's call of its free callback was still under way (hook: %s)",
	      st);
	CHECK(rc == 0, "rmmod gdrdrv failed (%d) once no fd was open", rc);
	pthread_join(f.t, NULL);
	CHECK(f.rc == CUDA_SUCCESS, "cuMemFree: %d", f.rc);
	CHECK(nvsim_count("outstanding_pins") == pins0,
	      "nvsim holds %ld pins, had %ld", nvsim_count("outstanding_pins"),
	      pins0);
	load_back();
	REQUIRE(!unloaded, "loading gdrdrv back failed: %s", insmod);
	return test_done();
}
