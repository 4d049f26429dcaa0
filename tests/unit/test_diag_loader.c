// SPDX-License-Identifier: MIT
/* The diagnosis's loader check: libvulkan.so.1 loads, or the fix says
 * which package brings it. */
#include <string.h>

#include "check.h"
#include "diag_fake.h"

static struct diag_report r;

#define LOADER (&r.f[DIAG_LOADER])

int main(void)
{
	fake_new();
	fake_gpu_machine();
	fake_run(&r, NULL);
	CHECK(LOADER->state == DIAG_OK, "present: ok (%s)", LOADER->msg);
	CHECK(LOADER->fix[0] == '\0', "no fix when ok: %s", LOADER->fix);

	fake_unlink("/lib/libvulkan.so.1");
	fake_run(&r, NULL);
	CHECK(LOADER->state == DIAG_BAD, "absent: bad");
	CHECK(strstr(LOADER->msg, "libvulkan.so.1: cannot open shared object file"),
	      "quotes the loader's error: %s", LOADER->msg);
	CHECK(strstr(LOADER->fix, "apt-get install libvulkan1") &&
	      strstr(LOADER->fix, "vulkan-loader"),
	      "names the Debian and rpm packages: %s", LOADER->fix);
	CHECK(r.f[DIAG_ICD].state == DIAG_OK &&
	      r.f[DIAG_ICD_LIB].state == DIAG_OK,
	      "the driver checks do not depend on the loader: %s / %s",
	      r.f[DIAG_ICD].msg, r.f[DIAG_ICD_LIB].msg);

	fake_file("/lib/libvulkan.so.1", "missing libstdc++.so.6");
	fake_run(&r, NULL);
	CHECK(LOADER->state == DIAG_BAD &&
	      strstr(LOADER->msg, "libstdc++.so.6"),
	      "a loader that cannot load names why: %s", LOADER->msg);
	fake_done();
	return test_done();
}
