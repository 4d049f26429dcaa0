// SPDX-License-Identifier: MIT
/*
 * The diagnosis's look at Vulkan without running it: the loader, the
 * driver manifests where the loader looks for them, and whether the
 * NVIDIA one's library loads.  The search follows the Vulkan loader's on
 * Linux: VK_DRIVER_FILES (or the older VK_ICD_FILENAMES) replaces it;
 * otherwise VK_ADD_DRIVER_FILES first, then icd.d under $XDG_CONFIG_HOME
 * (~/.config), $XDG_CONFIG_DIRS (/etc/xdg), /etc, $XDG_DATA_HOME
 * (~/.local/share) and $XDG_DATA_DIRS (/usr/local/share:/usr/share).
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag_util.h"

void diag_check_loader(const struct diag_env *e, struct diag_report *r)
{
	char err[256];

	if (!diag_load(e, "libvulkan.so.1", err, sizeof(err))) {
		diag_set(r, DIAG_LOADER, DIAG_OK, "libvulkan.so.1 loads");
		return;
	}
	diag_set(r, DIAG_LOADER, DIAG_BAD,
		 "the Vulkan loader, libvulkan.so.1, does not load (%s)", err);
	diag_fix(r, DIAG_LOADER,
		 "install it: apt-get install libvulkan1 (Fedora/RHEL: dnf install vulkan-loader); gdrmap's packages recommend it");
}

/* The string value of "key" in a JSON text; no nesting rules needed for
 * the one key of a driver manifest. */
static int json_string(const char *text, const char *key, char *out,
		       size_t len)
{
	const char *p = strstr(text, key);
	size_t n = 0;

	if (!p)
		return -1;
	p += strlen(key);
	while (isspace((unsigned char)*p))
		p++;
	if (*p++ != ':')
		return -1;
	while (isspace((unsigned char)*p))
		p++;
	if (*p++ != '"')
		return -1;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && !*++p)
			return -1;
		if (n + 1 < len)
			out[n++] = *p;
	}
	out[n] = '\0';
	return *p == '"' ? 0 : -1;
}

/* The library a manifest names, resolved as the loader does: a relative
 * path with a slash is relative to the manifest's directory. */
static int manifest_library(const struct diag_env *e, const char *path,
			    char *lib, size_t len)
{
	char p[DIAG_PATH * 2], text[4096], name[DIAG_PATH];
	size_t n;
	int dir = (int)(diag_base_name(path) - path);
	FILE *f = fopen(diag_at(e, path, p, sizeof(p)), "r");

	if (!f)
		return -1;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (json_string(text, "\"library_path\"", name, sizeof(name)))
		return -1;
	if (strchr(name, '/') && name[0] != '/')
		n = (size_t)snprintf(lib, len, "%.*s%s", dir, path, name);
	else
		n = (size_t)snprintf(lib, len, "%s", name);
	return n < len ? 0 : -1;
}

static void add_manifest(const struct diag_env *e, struct diag_report *r,
			 const char *path)
{
	struct diag_icd *icd;
	int i;

	for (i = 0; i < r->nr_icds; i++)
		if (!strcmp(r->icds[i].path, path))
			return;
	if (r->nr_icds == DIAG_MAX_ICDS || !diag_exists(e, path))
		return;
	icd = &r->icds[r->nr_icds++];
	memset(icd, 0, sizeof(*icd));
	snprintf(icd->path, sizeof(icd->path), "%s", path);
	icd->nvidia = strstr(diag_base_name(path), "nvidia") != NULL;
	if (manifest_library(e, path, icd->library, sizeof(icd->library))) {
		snprintf(icd->error, sizeof(icd->error),
			 "the manifest has no readable \"library_path\"");
		icd->library[0] = '\0';
		icd->loads = DIAG_BAD;
		return;
	}
	icd->nvidia |= strstr(diag_base_name(icd->library), "nvidia") != NULL;
	/* Other drivers' libraries are not ours to load. */
	if (!icd->nvidia)
		return;
	if (diag_load(e, icd->library, icd->error, sizeof(icd->error))) {
		icd->loads = strstr(icd->error, "wrong ELF class") ?
			     DIAG_UNKNOWN : DIAG_BAD;
		return;
	}
	icd->loads = DIAG_OK;
	/*
	 * NVIDIA's libGLX_nvidia.so.0 opens libglvnd's libEGL.so.1 only when
	 * Vulkan starts, and without it gives the loader no vkCreateInstance
	 * ("Found no drivers"): seen with driver 580 on the H200 machine,
	 * where libglvnd0 alone was not enough.
	 */
	if (diag_load(e, "libEGL.so.1", icd->error, sizeof(icd->error)))
		icd->loads = DIAG_BAD;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A manifest, or a directory of them (*.json, in name order). */
static void search_entry(const struct diag_env *e, struct diag_report *r,
			 const char *path)
{
	char p[DIAG_PATH * 2], file[DIAG_PATH * 2], *names[64];
	struct dirent *d;
	struct stat st;
	size_t len;
	int n = 0, i;
	DIR *dir;

	if (r->nr_dirs < DIAG_MAX_DIRS)
		snprintf(r->dirs[r->nr_dirs++], DIAG_PATH, "%s", path);
	if (stat(diag_at(e, path, p, sizeof(p)), &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		add_manifest(e, r, path);
		return;
	}
	dir = opendir(p);
	while (dir && (d = readdir(dir)) && n < 64) {
		len = strlen(d->d_name);
		if (len > 5 && !strcmp(d->d_name + len - 5, ".json"))
			names[n++] = strdup(d->d_name);
	}
	if (dir)
		closedir(dir);
	qsort(names, (size_t)n, sizeof(names[0]), by_name);
	for (i = 0; i < n; i++) {
		if (names[i]) {
			snprintf(file, sizeof(file), "%s/%s", path, names[i]);
			add_manifest(e, r, file);
		}
		free(names[i]);
	}
}

/*
 * base (its first n bytes) with suffix, which starts with '/', appended:
 * without the base's trailing slashes, so that HOME=/ gives
 * /.config/vulkan/icd.d, not //.config/..., in what the report shows.
 */
static void join(char *out, size_t len, const char *base, size_t n,
		 const char *suffix)
{
	while (n > 1 && base[n - 1] == '/')
		n--;
	if (n == 1 && base[0] == '/' && suffix[0] == '/')
		n = 0;
	snprintf(out, len, "%.*s%s", (int)n, base, suffix);
}

/* Each item of a colon-separated list, with suffix appended. */
static void search_list(const struct diag_env *e, struct diag_report *r,
			const char *list, const char *suffix)
{
	char item[DIAG_PATH];
	const char *p = list;
	size_t n;

	while (*p) {
		n = strcspn(p, ":");
		if (n && *suffix)
			join(item, sizeof(item), p, n, suffix);
		else if (n)
			snprintf(item, sizeof(item), "%.*s", (int)n, p);
		if (n)
			search_entry(e, r, item);
		p += n + (p[n] == ':');
	}
}

/* $XDG_..._HOME/vulkan/icd.d, or $HOME/fallback/vulkan/icd.d. */
static void search_home(const struct diag_env *e, struct diag_report *r,
			const char *xdg, const char *fallback)
{
	const char *v = diag_getenv(e, xdg), *home = diag_getenv(e, "HOME");
	char dir[DIAG_PATH];

	char sub[64];

	if (v) {
		join(dir, sizeof(dir), v, strlen(v), "/vulkan/icd.d");
	} else if (home) {
		snprintf(sub, sizeof(sub), "%s/vulkan/icd.d", fallback);
		join(dir, sizeof(dir), home, strlen(home), sub);
	} else {
		return;
	}
	search_entry(e, r, dir);
}

static void search_manifests(const struct diag_env *e, struct diag_report *r)
{
	static const char *const replacing[] = { "VK_DRIVER_FILES",
						 "VK_ICD_FILENAMES" };
	const char *v = NULL;
	int i;

	for (i = 0; i < 2 && !v; i++) {
		v = diag_getenv(e, replacing[i]);
		if (v) {
			snprintf(r->icd_source, sizeof(r->icd_source), "%s",
				 replacing[i]);
			search_list(e, r, v, "");
			return;
		}
	}
	v = diag_getenv(e, "VK_ADD_DRIVER_FILES");
	if (v)
		search_list(e, r, v, "");
	search_home(e, r, "XDG_CONFIG_HOME", "/.config");
	v = diag_getenv(e, "XDG_CONFIG_DIRS");
	search_list(e, r, v ? v : "/etc/xdg", "/vulkan/icd.d");
	search_entry(e, r, "/etc/vulkan/icd.d");
	search_home(e, r, "XDG_DATA_HOME", "/.local/share");
	v = diag_getenv(e, "XDG_DATA_DIRS");
	search_list(e, r, v ? v : "/usr/local/share:/usr/share",
		    "/vulkan/icd.d");
}

void diag_check_manifests(const struct diag_env *e, struct diag_report *r)
{
	char where[400] = "", others[200] = "";
	const struct diag_icd *nv = NULL;
	int i, more = 0;

	search_manifests(e, r);
	for (i = 0; i < r->nr_icds; i++) {
		if (r->icds[i].nvidia)
			more += nv != NULL;
		if (r->icds[i].nvidia && !nv)
			nv = &r->icds[i];
		else if (!r->icds[i].nvidia)
			diag_cat(others, sizeof(others), "%s%s", others[0] ? ", " : "",
				 diag_base_name(r->icds[i].path));
	}
	if (nv) {
		diag_set(r, DIAG_ICD, DIAG_OK,
			 "NVIDIA Vulkan driver manifest %s (library_path %s)%s",
			 nv->path, nv->library[0] ? nv->library : "missing",
			 more ? " and more" : "");
		return;
	}
	for (i = 0; i < r->nr_dirs; i++)
		diag_cat(where, sizeof(where), "%s%s", i ? ", " : "", r->dirs[i]);
	diag_set(r, DIAG_ICD, DIAG_BAD,
		 "no NVIDIA Vulkan driver manifest (nvidia_icd.json): looked in %s (%s%s)%s%s",
		 where, r->icd_source[0] ? r->icd_source : "VK_DRIVER_FILES and VK_ICD_FILENAMES unset",
		 r->icd_source[0] ? " names only these" :
		 diag_getenv(e, "VK_ADD_DRIVER_FILES") ? ", VK_ADD_DRIVER_FILES first" :
		 ", VK_ADD_DRIVER_FILES unset",
		 others[0] ? "; found only " : "", others);
	if (r->icd_source[0])
		diag_fix(r, DIAG_ICD,
			 "%s replaces the loader's search: point it at the NVIDIA driver's nvidia_icd.json, or unset it",
			 r->icd_source);
	else if (r->container[0] && !r->graphics)
		diag_fix(r, DIAG_ICD, "%s", diag_see_graphics);
	else if (r->container[0])
		diag_fix(r, DIAG_ICD, "%s", diag_not_mounted);
	else
		diag_fix(r, DIAG_ICD,
			 "install the NVIDIA driver's Vulkan part (nvidia_icd.json in /usr/share/vulkan/icd.d or /etc/vulkan/icd.d; Ubuntu: libnvidia-gl-<version>, Debian: nvidia-vulkan-icd), or set VK_DRIVER_FILES=/path/to/nvidia_icd.json");
}

/* The library dlerror says could not be found, or "" (not that error). */
static void missing_soname(const char *err, char *buf, size_t len)
{
	const char *end = strstr(err, ": cannot open shared object file");
	const char *start = end;

	buf[0] = '\0';
	if (!end)
		return;
	while (start > err && start[-1] != ' ' && start[-1] != '/')
		start--;
	snprintf(buf, len, "%.*s", (int)(end - start), start);
}

static void lib_fix(struct diag_report *r, const struct diag_icd *icd)
{
	/* What the NVIDIA GLX/Vulkan library links and images often lack. */
	static const struct { const char *soname, *package; } deps[] = {
		{ "libGLdispatch.so.0", "libglvnd0 (Fedora/RHEL: libglvnd)" },
		{ "libEGL.so.1", "libegl1 (Fedora/RHEL: libglvnd-egl)" },
		{ "libX11.so.6", "libx11-6 (Fedora/RHEL: libX11)" },
		{ "libXext.so.6", "libxext6 (Fedora/RHEL: libXext)" },
	};
	char *fix = r->f[DIAG_ICD_LIB].fix, miss[128];
	size_t len = sizeof(r->f[DIAG_ICD_LIB].fix), i;

	missing_soname(icd->error, miss, sizeof(miss));
	for (i = 0; i < sizeof(deps) / sizeof(deps[0]); i++) {
		if (!strcmp(miss, deps[i].soname)) {
			snprintf(fix, len,
				 "install %s: the NVIDIA Vulkan driver needs %s (apt-get install %.*s)",
				 deps[i].package, miss,
				 (int)strcspn(deps[i].package, " "),
				 deps[i].package);
			return;
		}
	}
	if (miss[0] && strcmp(miss, diag_base_name(icd->library)) &&
	    strncmp(miss, "libnvidia", 9)) {
		snprintf(fix, len,
			 "install the package that provides %s (Debian: apt-file search %s)",
			 miss, miss);
	} else if (miss[0] && r->container[0] && !r->graphics) {
		snprintf(fix, len, "%s", diag_see_graphics);
	} else if (miss[0] && r->container[0]) {
		snprintf(fix, len, "%s", diag_not_mounted);
	} else if (miss[0]) {
		snprintf(fix, len,
			 "install the NVIDIA driver's GL/Vulkan libraries (Ubuntu: libnvidia-gl-<version>), or add their directory to LD_LIBRARY_PATH");
	} else {
		snprintf(fix, len,
			 "reinstall the NVIDIA driver so that its libraries and kernel module are one version (cat /proc/driver/nvidia/version)");
	}
}

void diag_check_manifest_libs(struct diag_report *r)
{
	const struct diag_icd *bad = NULL, *other = NULL;
	int i;

	for (i = 0; i < r->nr_icds; i++) {
		const struct diag_icd *icd = &r->icds[i];

		if (!icd->nvidia)
			continue;
		if (icd->loads == DIAG_OK) {
			diag_set(r, DIAG_ICD_LIB, DIAG_OK, "%s (from %s) loads",
				 icd->library, icd->path);
			return;
		}
		if (icd->loads == DIAG_BAD && !bad)
			bad = icd;
		if (icd->loads == DIAG_UNKNOWN && !other)
			other = icd;
	}
	if (!bad && other)
		bad = other;	/* only other architectures' libraries */
	if (!bad) {
		diag_set(r, DIAG_ICD_LIB, DIAG_UNKNOWN,
			 "not checked: no NVIDIA manifest names a library");
		return;
	}
	diag_set(r, DIAG_ICD_LIB, DIAG_BAD, "%s, named by %s, cannot work: %s",
		 bad->library[0] ? bad->library : "the library", bad->path,
		 bad->error);
	lib_fix(r, bad);
}

