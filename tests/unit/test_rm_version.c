// SPDX-License-Identifier: MIT
/*
 * nvidia.ko answers a driver version outside those whose RM interface
 * the rm backend was checked against (rm_abi.h):
 *  - the rm backend refuses to open, and the reason gives the version,
 *    the range known, and GDRMAP_BACKEND=rm as the way to use it anyway;
 *    so do a version too old and one that is not a version at all; the
 *    control file is closed again each time;
 *  - gdr_open, with no other backend usable, lists that reason for rm;
 *  - GDRMAP_BACKEND=rm opens it anyway, with a warning naming the
 *    version, and then it maps memory like any other;
 *    gdr_driver_get_version reports the API's version, 2.6.
 */
#include "rm_pins.h"

#define UNKNOWN	"600.10.01"

static void refused(const char *version)
{
	struct fake_rm_stats st;
	char why[GDR_WHY_LEN];
	int err = 0;
	gdr_t g;

	fake_rm_version = version;
	g = gdr_open_backend(&gdr_backend_rm, why, sizeof(why), &err);
	CHECK(g == NULL && err == ENOTSUP, "driver %s: refused (%d)",
	      version, err);
	CHECK(strstr(why, version) && strstr(why, RM_ABI_RANGE_TEXT) &&
	      strstr(why, "GDRMAP_BACKEND=rm"),
	      "the reason gives the version, the range and the override: \"%s\"",
	      why);
	fake_rm_stats(&st);
	CHECK(st.files == 0 && st.clients == 0,
	      "nothing kept open (%d files, %d clients)", st.files,
	      st.clients);
	if (g)
		gdr_close(g);
}

int main(void)
{
	int major = 0, minor = 0, backend = 0, d;
	char log[16384];
	CUdeviceptr mem;
	gdr_t g;

	unsetenv("GDRMAP_BACKEND");
	unsetenv("GDRCOPY_USE_DMABUF_MMAP");
	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	setenv("GDRCOPY_LOG_LEVEL", "3", 1);
	fake_rm_install();
	mem = legacy_alloc(0, 1 << 20);

	refused("535.104.05");
	refused("not a version");
	refused(UNKNOWN);

	if (access("/dev/gdrdrv", F_OK) == 0) {
		SKIP("gdr_open's list: /dev/gdrdrv exists here");
	} else {
		/* No dma-buf export: neither dmabuf nor rm's probe works,
		 * but rm stops at the version first. */
		for (d = 0; d < FAKE_DEVS; d++)
			fake_dmabuf_supported[d] = 0;
		g = gdr_open();
		CHECK(g == NULL, "gdr_open finds no usable backend");
		CHECK(strstr(gdrmap_last_error(), "rm: NVIDIA driver " UNKNOWN),
		      "gdr_open says why not rm: \"%s\"", gdrmap_last_error());
		if (g)
			gdr_close(g);
		for (d = 0; d < FAKE_DEVS; d++)
			fake_dmabuf_supported[d] = 1;
	}

	setenv("GDRMAP_BACKEND", "rm", 1);
	rm_capture_begin();
	g = gdr_open();
	rm_capture_end(log, sizeof(log));
	CHECK(g != NULL, "GDRMAP_BACKEND=rm opens it anyway: %s",
	      gdrmap_last_error());
	CHECK(strstr(log, "warning") && strstr(log, "driver " UNKNOWN) &&
	      strstr(log, "used anyway"),
	      "with a warning naming the version: \"%s\"", log);
	if (!g)
		return test_done();
	CHECK_RET(gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &backend), 0);
	CHECK(backend == GDRMAP_BACKEND_RM, "the rm backend (%d)", backend);
	CHECK_RET(gdr_driver_get_version(g, &major, &minor), 0);
	/* The API's version, as every module-free backend reports it:
	 * callers check it against GDRCopy's module (NCCL: >= 2.5). */
	CHECK(major == 2 && minor == 6, "driver version %d.%d", major, minor);
	pin_and_copy(g, 0, START_NONE, mem, 4096 * 3 + 1, 7000);
	CHECK_RET(gdr_close(g), 0);
	return rm_done(1);
}
