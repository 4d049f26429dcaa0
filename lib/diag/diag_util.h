/* SPDX-License-Identifier: MIT */
/* What the diagnosis's parts (diag*.c) share, defined in diag_util.c:
 * reading below the root, the environment given, and writing findings. */
#ifndef GDRMAP_DIAG_UTIL_H
#define GDRMAP_DIAG_UTIL_H

#include "diag.h"

__attribute__((format(printf, 4, 5)))
void diag_set(struct diag_report *r, enum diag_id id, enum diag_state s,
	      const char *fmt, ...);
/* The fix of a finding. */
__attribute__((format(printf, 3, 4)))
void diag_fix(struct diag_report *r, enum diag_id id, const char *fmt, ...);
/* Append to a string buffer, truncating quietly. */
__attribute__((format(printf, 3, 4)))
void diag_cat(char *buf, size_t len, const char *fmt, ...);

/* A variable's value; set but empty counts as unset, as for the loader. */
const char *diag_getenv(const struct diag_env *e, const char *name);
/* path below the root, in buf. */
const char *diag_at(const struct diag_env *e, const char *path, char *buf,
		    size_t len);
bool diag_exists(const struct diag_env *e, const char *path);
/* The first line of a file below the root, without its newline. */
int diag_first_line(const struct diag_env *e, const char *path, char *buf,
		    size_t len);
/* env->load, or dlopen. */
int diag_load(const struct diag_env *e, const char *name, char *err,
	      size_t len);
const char *diag_base_name(const char *path);

/* How to give a container the NVIDIA Vulkan driver, or do without it. */
void diag_grant_graphics(const struct diag_report *r, char *buf, size_t len);
/* The fix of what a container without graphics lacks, and of what one
 * with graphics lacks all the same. */
extern const char diag_see_graphics[], diag_not_mounted[];

/* The parts of diag_run, in the order it calls them. */
void diag_detect_container(const struct diag_env *e, struct diag_report *r);
void diag_check_devices(const struct diag_env *e, struct diag_report *r);
void diag_check_loader(const struct diag_env *e, struct diag_report *r);
void diag_check_manifests(const struct diag_env *e, struct diag_report *r);
void diag_check_manifest_libs(struct diag_report *r);
void diag_check_container(struct diag_report *r);

#endif /* GDRMAP_DIAG_UTIL_H */
