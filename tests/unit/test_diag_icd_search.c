// SPDX-License-Identifier: MIT
/*
 * The diagnosis's manifest search, place by place as the Vulkan loader
 * looks: VK_DRIVER_FILES / VK_ICD_FILENAMES replace the search,
 * VK_ADD_DRIVER_FILES comes first, then the XDG and standard icd.d
 * directories; when nothing is found, every place is named.
 */
#include <string.h>

#include "check.h"
#include "diag_fake.h"

static struct diag_report r;

#define ICD (&r.f[DIAG_ICD])

/* The index of dir among the places searched, or -1. */
static int searched(const char *dir)
{
	int i;

	for (i = 0; i < r.nr_dirs; i++)
		if (!strcmp(r.dirs[i], dir))
			return i;
	return -1;
}

static void standard_places(void)
{
	static char *const env[] = { "HOME=/home/u", NULL };
	static const char *const order[] = {
		"/home/u/.config/vulkan/icd.d", "/etc/xdg/vulkan/icd.d",
		"/etc/vulkan/icd.d", "/home/u/.local/share/vulkan/icd.d",
		"/usr/local/share/vulkan/icd.d", "/usr/share/vulkan/icd.d",
	};
	size_t i;

	fake_new();
	fake_run(&r, env);
	CHECK(r.nr_dirs == 6, "six places without variables (%d)", r.nr_dirs);
	for (i = 0; i < 6; i++)
		CHECK(searched(order[i]) == (int)i, "%s is place %zu (%d)",
		      order[i], i, searched(order[i]));
	CHECK(ICD->state == DIAG_BAD, "nothing there: bad");
	for (i = 0; i < 6; i++)
		CHECK(strstr(ICD->msg, order[i]) != NULL, "names %s: %s",
		      order[i], ICD->msg);
	CHECK(strstr(ICD->msg, "VK_DRIVER_FILES and VK_ICD_FILENAMES unset") &&
	      strstr(ICD->msg, "VK_ADD_DRIVER_FILES unset"),
	      "says which variables were unset: %s", ICD->msg);
	CHECK(strstr(ICD->fix, "nvidia_icd.json") &&
	      strstr(ICD->fix, "VK_DRIVER_FILES="),
	      "not a container: install the driver's ICD or point at it: %s",
	      ICD->fix);
}

/* HOME=/ (an init's, or a container's root) and trailing slashes: the
 * places as the loader reads them, without doubled slashes. */
static void slashes(void)
{
	static char *const env[] = { "HOME=/", "XDG_CONFIG_DIRS=/a/:/b",
		"XDG_DATA_DIRS=/opt/share//", NULL };
	int i;

	fake_new();
	fake_run(&r, env);
	CHECK(searched("/.config/vulkan/icd.d") == 0 &&
	      searched("/a/vulkan/icd.d") == 1 &&
	      searched("/.local/share/vulkan/icd.d") == 4 &&
	      searched("/opt/share/vulkan/icd.d") == 5,
	      "HOME=/ and trailing slashes joined: %s", ICD->msg);
	for (i = 0; i < r.nr_dirs; i++)
		CHECK(!strstr(r.dirs[i], "//"), "no doubled slash: %s",
		      r.dirs[i]);
	CHECK(!strstr(ICD->msg, "//"), "none in the message: %s", ICD->msg);
}

static void xdg_places(void)
{
	static char *const env[] = { "HOME=/home/u",
		"XDG_CONFIG_HOME=/cfg", "XDG_CONFIG_DIRS=/a:/b",
		"XDG_DATA_HOME=/data", "XDG_DATA_DIRS=/opt/share", NULL };

	fake_new();
	fake_manifest("/opt/share/vulkan/icd.d/nvidia_icd.json",
		      "libGLX_nvidia.so.0");
	fake_file("/lib/libGLX_nvidia.so.0", "");
	fake_run(&r, env);
	CHECK(searched("/cfg/vulkan/icd.d") == 0 &&
	      searched("/a/vulkan/icd.d") == 1 &&
	      searched("/b/vulkan/icd.d") == 2 &&
	      searched("/etc/vulkan/icd.d") == 3 &&
	      searched("/data/vulkan/icd.d") == 4 &&
	      searched("/opt/share/vulkan/icd.d") == 5,
	      "the XDG variables replace their defaults, in order");
	CHECK(searched("/usr/share/vulkan/icd.d") < 0,
	      "XDG_DATA_DIRS set: /usr/share is not searched");
	CHECK(ICD->state == DIAG_OK &&
	      strstr(ICD->msg, "/opt/share/vulkan/icd.d/nvidia_icd.json"),
	      "found in XDG_DATA_DIRS: %s", ICD->msg);
}

static void added_first(void)
{
	static char *const env[] = { "VK_ADD_DRIVER_FILES=/x/my.json:/y",
		NULL };

	fake_new();
	fake_manifest("/y/nvidia_icd.json", "libGLX_nvidia.so.0");
	fake_manifest("/usr/share/vulkan/icd.d/nvidia_icd.json",
		      "libGLX_nvidia.so.0");
	fake_run(&r, env);
	CHECK(searched("/x/my.json") == 0 && searched("/y") == 1 &&
	      searched("/usr/share/vulkan/icd.d") > 1,
	      "VK_ADD_DRIVER_FILES first, then the standard places");
	CHECK(r.nr_icds == 2 && !strcmp(r.icds[0].path, "/y/nvidia_icd.json"),
	      "both manifests, the added one first (%d, %s)", r.nr_icds,
	      r.icds[0].path);
	CHECK(ICD->state == DIAG_OK && strstr(ICD->msg, "and more"),
	      "found: %s", ICD->msg);
}

static void replaced(void)
{
	static char *const driver_files[] = {
		"VK_DRIVER_FILES=/opt/nv/nvidia_icd.json",
		"VK_ICD_FILENAMES=/old/nvidia_icd.json",
		"VK_ADD_DRIVER_FILES=/add", NULL };
	static char *const icd_filenames[] = {
		"VK_ICD_FILENAMES=/old/dir", NULL };
	static char *const wrong[] = {
		"VK_DRIVER_FILES=/nowhere/nvidia_icd.json", NULL };

	fake_new();
	fake_manifest("/usr/share/vulkan/icd.d/nvidia_icd.json",
		      "libGLX_nvidia.so.0");
	fake_manifest("/opt/nv/nvidia_icd.json", "libGLX_nvidia.so.0");
	fake_manifest("/old/dir/nvidia_icd.json", "libGLX_nvidia.so.0");
	fake_run(&r, driver_files);
	CHECK(r.nr_dirs == 1 && searched("/opt/nv/nvidia_icd.json") == 0,
	      "VK_DRIVER_FILES alone is searched (%d places)", r.nr_dirs);
	CHECK(!strcmp(r.icd_source, "VK_DRIVER_FILES"), "source %s",
	      r.icd_source);
	CHECK(ICD->state == DIAG_OK, "found: %s", ICD->msg);

	fake_run(&r, icd_filenames);
	CHECK(r.nr_dirs == 1 && searched("/old/dir") == 0 &&
	      !strcmp(r.icd_source, "VK_ICD_FILENAMES"),
	      "VK_ICD_FILENAMES (a directory) when VK_DRIVER_FILES is unset");
	CHECK(ICD->state == DIAG_OK &&
	      strstr(ICD->msg, "/old/dir/nvidia_icd.json"), "found: %s",
	      ICD->msg);

	fake_run(&r, wrong);
	CHECK(ICD->state == DIAG_BAD &&
	      strstr(ICD->msg, "/nowhere/nvidia_icd.json (VK_DRIVER_FILES names only these)"),
	      "a wrong VK_DRIVER_FILES is the place named: %s", ICD->msg);
	CHECK(strstr(ICD->fix, "VK_DRIVER_FILES replaces") != NULL,
	      "and the fix is to correct or unset it: %s", ICD->fix);
}

static void others_only(void)
{
	fake_new();
	fake_manifest("/usr/share/vulkan/icd.d/lvp_icd.x86_64.json",
		      "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so");
	fake_manifest("/usr/share/vulkan/icd.d/radeon_icd.x86_64.json",
		      "libvulkan_radeon.so");
	fake_file("/usr/share/vulkan/icd.d/README", "not a manifest");
	fake_run(&r, NULL);
	CHECK(r.nr_icds == 2, "two manifests, README skipped (%d)",
	      r.nr_icds);
	CHECK(ICD->state == DIAG_BAD &&
	      strstr(ICD->msg, "found only lvp_icd.x86_64.json, radeon_icd.x86_64.json"),
	      "other drivers' manifests are named, in order: %s", ICD->msg);
	CHECK(r.icds[0].loads == DIAG_UNKNOWN,
	      "another driver's library is not loaded");
}

int main(void)
{
	standard_places();
	slashes();
	xdg_places();
	added_first();
	replaced();
	others_only();
	fake_done();
	return test_done();
}
