/* SPDX-License-Identifier: MIT */
/*
 * Fake machines for the diagnosis's tests (lib/diag/): a directory
 * standing for /, an environment, and a loader that "loads" a library
 * when <root>/lib/<its file name> exists.  That file's text decides:
 * empty, it loads; "missing NAME", NAME cannot be found; "elf32", it is
 * another architecture's.
 */
#ifndef GDRMAP_TEST_DIAG_FAKE_H
#define GDRMAP_TEST_DIAG_FAKE_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag/diag.h"

static char fake_root[256];

/* mkdir -p below the root. */
static inline void fake_mkdir(const char *path)
{
	char p[1024], *s;

	snprintf(p, sizeof(p), "%s%s", fake_root, path);
	for (s = p + strlen(fake_root) + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

/* A file below the root (its directories made), with this text. */
static inline void fake_file(const char *path, const char *text)
{
	char p[1024], dir[512];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	if (dir[0])
		fake_mkdir(dir);
	snprintf(p, sizeof(p), "%s%s", fake_root, path);
	f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Remove a file below the root. */
static inline void fake_unlink(const char *path)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s%s", fake_root, path);
	unlink(p);
}

/* A driver manifest naming lib. */
static inline void fake_manifest(const char *path, const char *lib)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "{\n    \"file_format_version\" : \"1.0.1\",\n    \"ICD\": {\n        \"library_path\": \"%s\",\n        \"api_version\" : \"1.4.312\"\n    }\n}\n",
		 lib);
	fake_file(path, text);
}

static inline int fake_load(const char *name, char *err, size_t len)
{
	const char *base = strrchr(name, '/');
	char p[1024], text[128] = "";
	FILE *f;

	snprintf(p, sizeof(p), "%s/lib/%s", fake_root, base ? base + 1 : name);
	f = fopen(p, "r");
	if (!f) {
		snprintf(err, len,
			 "%s: cannot open shared object file: No such file or directory",
			 name);
		return -1;
	}
	if (!fgets(text, sizeof(text), f))
		text[0] = '\0';
	fclose(f);
	text[strcspn(text, "\n")] = '\0';
	if (!strncmp(text, "missing ", 8)) {
		snprintf(err, len,
			 "%s: cannot open shared object file: No such file or directory",
			 text + 8);
		return -1;
	}
	if (!strcmp(text, "elf32")) {
		snprintf(err, len, "%s: wrong ELF class: ELFCLASS32", name);
		return -1;
	}
	return 0;
}

static inline int fake_rm(const char *path, const struct stat *st, int flag,
			  struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* A fresh, empty root (the last one removed). */
static inline void fake_new(void)
{
	if (fake_root[0])
		nftw(fake_root, fake_rm, 16, FTW_DEPTH | FTW_PHYS);
	snprintf(fake_root, sizeof(fake_root), "/tmp/gdrmap-diag.XXXXXX");
	if (!mkdtemp(fake_root))
		fake_root[0] = '\0';
}

static inline void fake_done(void)
{
	if (fake_root[0])
		nftw(fake_root, fake_rm, 16, FTW_DEPTH | FTW_PHYS);
	fake_root[0] = '\0';
}

/* Run the diagnosis on the fake root with this environment. */
static inline void fake_run(struct diag_report *r, char *const *envp)
{
	static char *const none[] = { NULL };
	const struct diag_env env = {
		.root = fake_root, .envp = envp ? envp : none,
		.load = fake_load,
	};

	diag_run(&env, r);
}

/* The usual pieces of a working machine. */
static inline void fake_gpu_machine(void)
{
	fake_file("/dev/nvidiactl", "");
	fake_file("/dev/nvidia0", "");
	fake_file("/dev/nvidia-uvm", "");
	fake_file("/sys/bus/pci/devices/0000:65:00.0/vendor", "0x10de\n");
	fake_file("/sys/bus/pci/devices/0000:65:00.0/class", "0x030200\n");
	fake_file("/lib/libvulkan.so.1", "");
	fake_file("/lib/libGLX_nvidia.so.0", "");
	fake_file("/lib/libEGL.so.1", "");
	fake_manifest("/usr/share/vulkan/icd.d/nvidia_icd.json",
		      "libGLX_nvidia.so.0");
}

#endif /* GDRMAP_TEST_DIAG_FAKE_H */
