/* SPDX-License-Identifier: MIT */
/*
 * Why the module-free (vulkan) backend cannot work on this machine: every
 * cause looked for on its own, so that one missing piece never hides
 * another, each with the fix for it.
 *
 * One implementation for two users, built once into an internal archive
 * (libgdrdiag.a, lib/lib.mk): libgdrapi links it, and gdr_open's failure
 * lists the causes (gdrmap_last_error()); the gdrmap command links it,
 * and doctor makes each finding a check and writes the facts behind it
 * as JSON.  doctor cannot get those facts through the library's public
 * API (text only, and the library in use may be another libgdrapi.so.2).
 *
 * Nothing here depends on the process's state: files are read below
 * env->root, variables come from env->envp and libraries are loaded
 * through env->load, so tests build whole fake machines in a directory.
 */
#ifndef GDRMAP_DIAG_H
#define GDRMAP_DIAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum diag_id {
	DIAG_DEVICES,	/* /dev/nvidiactl, /dev/nvidiaN, /dev/nvidia-uvm */
	DIAG_CONTAINER,	/* a container without the graphics capability */
	DIAG_LOADER,	/* libvulkan.so.1 */
	DIAG_ICD,	/* an NVIDIA Vulkan ICD manifest where the loader looks */
	DIAG_ICD_LIB,	/* the library it names loads */
	DIAG_VK_GPU,	/* Vulkan enumerates the GPU CUDA has */
	DIAG_NR
};

/* The findings' names, as doctor's checks are called. */
extern const char *const diag_names[DIAG_NR];

enum diag_state {
	DIAG_UNKNOWN,	/* not checked: something it needs is missing */
	DIAG_OK,
	DIAG_BAD,	/* a cause: msg says what, fix what to do */
};

struct diag_finding {
	enum diag_state state;
	char msg[512];
	char fix[512];
};

struct diag_env {
	const char *root;	/* prefix of every path read; "" or NULL: / */
	char *const *envp;	/* NULL: the process's environment */
	/* Load a library as dlopen(name) would: 0, or -1 with dlerror's
	 * text in err.  NULL: dlopen (what loads stays loaded). */
	int (*load)(const char *name, char *err, size_t len);
};

#define DIAG_PATH	256
#define DIAG_MAX_DIRS	16
#define DIAG_MAX_ICDS	16
#define DIAG_MAX_VKDEVS	16

/* One driver manifest found, and whether its library loads. */
struct diag_icd {
	char path[DIAG_PATH];
	char library[DIAG_PATH];	/* library_path, relative ones resolved */
	bool nvidia;
	enum diag_state loads;	/* UNKNOWN: not tried, or another architecture */
	char error[256];
};

/* A Vulkan physical device, as vulkan.c enumerates them. */
struct diag_vk_dev {
	uint8_t uuid[16];
	char name[64];
	bool mappable;	/* device-local host-visible memory, fd import */
};

struct diag_report {
	struct diag_finding f[DIAG_NR];

	char container[96];	/* what says it is one; "" if none */
	bool kubernetes;
	char caps[128];		/* NVIDIA_DRIVER_CAPABILITIES; "" if unset */
	bool graphics;		/* ... grants graphics (or all) */
	char gpu_pci[16];	/* an NVIDIA GPU in sysfs; "" if none */
	char dev_missing[128];	/* the /dev/nvidia* files missing; "" if none */

	char icd_source[32];	/* the variable that replaced the search, or "" */
	int nr_dirs;		/* where manifests were looked for */
	char dirs[DIAG_MAX_DIRS][DIAG_PATH];
	int nr_icds;
	struct diag_icd icds[DIAG_MAX_ICDS];
};

/*
 * Every check that needs no running Vulkan: devices, container, loader,
 * manifests and their libraries.  DIAG_VK_GPU is left unknown.
 */
void diag_run(const struct diag_env *env, struct diag_report *r);

/*
 * DIAG_VK_GPU: does Vulkan enumerate, with memory the CPU can map, a GPU
 * with one of CUDA's UUIDs?  ndev < 0: Vulkan did not get as far as
 * enumerating (vk_why says why, or NULL when it was not tried); ncuda 0:
 * CUDA's GPUs are unknown.  Call after diag_run, whose findings it uses.
 */
void diag_vk_gpu(struct diag_report *r, const char *vk_why,
		 const struct diag_vk_dev *devs, int ndev,
		 const uint8_t (*cuda)[16], int ncuda);

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi writes it. */
void diag_uuid_str(const uint8_t uuid[16], char buf[41]);

/*
 * Append one line per cause found ("\n    - what: fix") to buf (which
 * holds a string); returns how many.
 */
int diag_explain(const struct diag_report *r, char *buf, size_t len);

#endif /* GDRMAP_DIAG_H */
