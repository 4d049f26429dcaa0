// SPDX-License-Identifier: MIT
/*
 * Every cause on its own: a machine missing several pieces at once gets
 * one line per missing piece, and mending one leaves the others named.
 */
#include <string.h>

#include "check.h"
#include "diag_fake.h"

static struct diag_report r;
static char *const no_graphics[] = { "container=docker",
	"NVIDIA_DRIVER_CAPABILITIES=compute,utility", NULL };
static char *const graphics[] = { "container=docker",
	"NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics", NULL };

/* Lines of the explanation, and whether each finding's message is one. */
static int explain(char *buf, size_t len)
{
	int n, i, lines = 0;
	const char *p;

	snprintf(buf, len, "head");
	n = diag_explain(&r, buf, len);
	for (p = buf; (p = strstr(p, "\n    - ")); p++)
		lines++;
	CHECK(n == lines, "one line per cause (%d, %d)", n, lines);
	for (i = 0; i < DIAG_NR; i++)
		CHECK((r.f[i].state == DIAG_BAD) ==
		      (strstr(buf, r.f[i].msg) != NULL),
		      "%s (%d) listed exactly when bad", diag_names[i],
		      r.f[i].state);
	return n;
}

int main(void)
{
	char buf[8192];

	fake_new();
	fake_run(&r, no_graphics);
	CHECK(explain(buf, sizeof(buf)) == 4,
	      "devices, container, loader, manifest: %s", buf);
	CHECK(!strncmp(buf, "head\n    - ", 11), "appended: %s", buf);

	fake_file("/lib/libvulkan.so.1", "");
	fake_run(&r, no_graphics);
	CHECK(explain(buf, sizeof(buf)) == 3 && !strstr(buf, "libvulkan1"),
	      "loader installed: the other three remain: %s", buf);

	fake_run(&r, graphics);
	CHECK(explain(buf, sizeof(buf)) == 2 &&
	      r.f[DIAG_CONTAINER].state == DIAG_OK,
	      "graphics granted: devices and manifest remain: %s", buf);

	fake_manifest("/usr/share/vulkan/icd.d/nvidia_icd.json",
		      "libGLX_nvidia.so.0");
	fake_run(&r, graphics);
	CHECK(explain(buf, sizeof(buf)) == 2 &&
	      r.f[DIAG_ICD_LIB].state == DIAG_BAD,
	      "manifest without its library: devices and library: %s", buf);

	fake_gpu_machine();
	fake_run(&r, graphics);
	CHECK(explain(buf, sizeof(buf)) == 0 && !strcmp(buf, "head"),
	      "everything there: nothing to say: %s", buf);
	fake_done();
	return test_done();
}
