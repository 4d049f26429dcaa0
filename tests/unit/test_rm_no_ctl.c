// SPDX-License-Identifier: MIT
/*
 * The NVIDIA device files cannot be opened:
 *  - no /dev/nvidiactl (ENOENT: no driver, or a container started without
 *    the GPU's device files): the rm backend does not open, ENODEV, and
 *    the reason names the file and both causes;
 *  - /dev/nvidiactl forbidden (EACCES): EACCES, and the reason says this
 *    user may not open it;
 *  - nothing is left open either time, and the backend opens once the
 *    file is there;
 *  - a GPU's /dev/nvidiaN missing at gdr_map: the map fails naming the
 *    file, nothing stays mapped or open; with the file back, it maps.
 */
#include "rm_pins.h"

static void refused(int errnum, int want, const char *text)
{
	struct fake_rm_stats st;
	char why[GDR_WHY_LEN];
	int err = 0;
	gdr_t g;

	fake_rm_ctl_errno = errnum;
	g = gdr_open_backend(&gdr_backend_rm, why, sizeof(why), &err);
	CHECK(g == NULL && err == want, "/dev/nvidiactl: %s: refused with %d (%d)",
	      strerror(errnum), want, err);
	CHECK(strstr(why, "/dev/nvidiactl") && strstr(why, strerror(errnum)) &&
	      strstr(why, text), "the reason: \"%s\"", why);
	fake_rm_stats(&st);
	CHECK(st.files == 0 && st.clients == 0,
	      "nothing open (%d files, %d clients)", st.files, st.clients);
	if (g)
		gdr_close(g);
}

int main(void)
{
	char path[32];
	CUdeviceptr mem;
	gdr_mh_t mh;
	char *va = NULL;
	int err;
	gdr_t g;

	fake_rm_install();
	mem = legacy_alloc(0, 1 << 20);
	refused(ENOENT, ENODEV, "a container started without the GPU's device files");
	refused(EACCES, EACCES, "may not open the NVIDIA device files");

	fake_rm_ctl_errno = 0;
	g = rm_open();
	if (!g)
		return test_done();

	CHECK_RET(gdr_pin_buffer(g, mem, 1 << 20, 0, 0, &mh), 0);
	fake_rm_dev_errno = ENOENT;
	err = gdr_map(g, mh, (void **)&va, 1 << 20);
	CHECK(err == ENOENT, "gdr_map without the GPU's file: %d", err);
	snprintf(path, sizeof(path), "/dev/nvidia%u: ", fake_rm_minor(0));
	CHECK(strstr(gdrmap_last_error(), path) &&
	      strstr(gdrmap_last_error(), "pass it in"),
	      "the message names %s: \"%s\"", path, gdrmap_last_error());
	fake_rm_dev_errno = 0;
	{
		struct fake_rm_stats st;

		fake_rm_stats(&st);
		CHECK(st.rm_maps == 0 && st.cpu_bytes == 0 && st.files == 1,
		      "nothing mapped or open (%d, %zu, %d)", st.rm_maps,
		      st.cpu_bytes, st.files);
	}
	CHECK_RET(gdr_map(g, mh, (void **)&va, 1 << 20), 0);
	rm_both_ways(mh, va, mem, 1 << 20, 9, "once the file is there");
	CHECK_RET(gdr_unmap(g, mh, va, 1 << 20), 0);
	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_close(g), 0);
	return rm_done(1);
}
