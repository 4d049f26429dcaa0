// SPDX-License-Identifier: MIT
/*
 * The diagnosis's check of the library an NVIDIA manifest names: it
 * loads, or the fix names what is missing (the library itself, or a
 * library it needs, such as libglvnd's libGLdispatch.so.0).
 */
#include <string.h>

#include "check.h"
#include "diag_fake.h"

static struct diag_report r;
static char *const in_docker[] = { "container=docker",
	"NVIDIA_DRIVER_CAPABILITIES=compute,utility", NULL };

#define LIB (&r.f[DIAG_ICD_LIB])

static void loads(void)
{
	fake_new();
	fake_gpu_machine();
	fake_run(&r, NULL);
	CHECK(LIB->state == DIAG_OK && strstr(LIB->msg, "libGLX_nvidia.so.0"),
	      "loads: %s", LIB->msg);
	CHECK(r.icds[0].nvidia && r.icds[0].loads == DIAG_OK,
	      "the manifest is NVIDIA's and its library loads");
}

static void missing_library(void)
{
	fake_new();
	fake_gpu_machine();
	fake_unlink("/lib/libGLX_nvidia.so.0");
	fake_run(&r, NULL);
	CHECK(LIB->state == DIAG_BAD &&
	      strstr(LIB->msg, "libGLX_nvidia.so.0, named by /usr/share/vulkan/icd.d/nvidia_icd.json, cannot work"),
	      "bad, naming library and manifest: %s", LIB->msg);
	CHECK(strstr(LIB->fix, "LD_LIBRARY_PATH") != NULL,
	      "on a host: install the driver's libraries: %s", LIB->fix);
	CHECK(r.f[DIAG_ICD].state == DIAG_OK,
	      "the manifest itself is found: %s", r.f[DIAG_ICD].msg);

	fake_run(&r, in_docker);
	CHECK(LIB->state == DIAG_BAD && strstr(LIB->fix, "graphics"),
	      "in a container without graphics: grant it: %s", LIB->fix);
	CHECK(r.f[DIAG_CONTAINER].state == DIAG_BAD,
	      "and the container is a cause of its own");
}

static void missing_dependency(void)
{
	fake_new();
	fake_gpu_machine();
	fake_file("/lib/libGLX_nvidia.so.0", "missing libGLdispatch.so.0");
	fake_run(&r, in_docker);
	CHECK(LIB->state == DIAG_BAD && strstr(LIB->msg, "libGLdispatch.so.0"),
	      "bad, naming the dependency: %s", LIB->msg);
	CHECK(strstr(LIB->fix, "apt-get install libglvnd0") &&
	      strstr(LIB->fix, "libglvnd)"),
	      "the fix is libglvnd's package, graphics or not: %s", LIB->fix);

	/* Loaded by the driver only when Vulkan starts (driver 580). */
	fake_file("/lib/libGLX_nvidia.so.0", "");
	fake_unlink("/lib/libEGL.so.1");
	fake_run(&r, in_docker);
	CHECK(LIB->state == DIAG_BAD && strstr(LIB->msg, "libEGL.so.1"),
	      "libEGL.so.1 missing is a cause: %s", LIB->msg);
	CHECK(strstr(LIB->fix, "apt-get install libegl1") &&
	      strstr(LIB->fix, "libglvnd-egl)"),
	      "the fix is libegl1, graphics or not: %s", LIB->fix);
	fake_file("/lib/libEGL.so.1", "");

	fake_file("/lib/libGLX_nvidia.so.0", "missing libXext.so.6");
	fake_run(&r, NULL);
	CHECK(strstr(LIB->fix, "apt-get install libxext6") != NULL,
	      "libXext: libxext6: %s", LIB->fix);

	fake_file("/lib/libGLX_nvidia.so.0", "missing libfoo.so.3");
	fake_run(&r, NULL);
	CHECK(strstr(LIB->fix, "provides libfoo.so.3") != NULL,
	      "an unknown dependency is named: %s", LIB->fix);

	fake_file("/lib/libGLX_nvidia.so.0",
		  "missing libnvidia-glcore.so.580.95.05");
	fake_run(&r, NULL);
	CHECK(strstr(LIB->fix, "driver's GL/Vulkan libraries") != NULL,
	      "a driver library of its own: install the driver's: %s",
	      LIB->fix);
}

static void manifest_forms(void)
{
	fake_new();
	fake_gpu_machine();
	fake_unlink("/usr/share/vulkan/icd.d/nvidia_icd.json");
	fake_manifest("/etc/vulkan/icd.d/nvidia_icd.json",
		      "../../../lib/nv/libGLX_nvidia.so.0");
	fake_run(&r, NULL);
	CHECK(!strcmp(r.icds[0].library,
		      "/etc/vulkan/icd.d/../../../lib/nv/libGLX_nvidia.so.0"),
	      "a relative path is relative to the manifest: %s",
	      r.icds[0].library);
	CHECK(LIB->state == DIAG_OK, "and loads: %s", LIB->msg);

	fake_file("/etc/vulkan/icd.d/nvidia_icd.json",
		  "{ \"ICD\": { \"api_version\": \"1.3\" } }");
	fake_run(&r, NULL);
	CHECK(r.f[DIAG_ICD].state == DIAG_OK && LIB->state == DIAG_BAD &&
	      strstr(LIB->msg, "library_path"),
	      "a manifest without library_path: %s", LIB->msg);

	fake_manifest("/etc/vulkan/icd.d/nvidia_icd.json",
		      "/usr/lib/i386-linux-gnu/libGLX_nvidia32.so.0");
	fake_file("/lib/libGLX_nvidia32.so.0", "elf32");
	fake_manifest("/etc/vulkan/icd.d/nvidia_icd.x86_64.json",
		      "libGLX_nvidia.so.0");
	fake_file("/lib/libGLX_nvidia.so.0", "");
	fake_run(&r, NULL);
	CHECK(r.nr_icds == 2 && r.icds[0].loads == DIAG_UNKNOWN &&
	      LIB->state == DIAG_OK,
	      "another architecture's library is not a failure: %s",
	      LIB->msg);
	fake_unlink("/etc/vulkan/icd.d/nvidia_icd.x86_64.json");
	fake_run(&r, NULL);
	CHECK(LIB->state == DIAG_BAD && strstr(LIB->msg, "ELFCLASS32"),
	      "but with no other it is named: %s", LIB->msg);
}

int main(void)
{
	loads();
	missing_library();
	missing_dependency();
	manifest_forms();
	fake_done();
	return test_done();
}
