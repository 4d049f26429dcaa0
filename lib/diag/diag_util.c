// SPDX-License-Identifier: MIT
/*
 * The helpers every part of the diagnosis uses (diag_util.h): writing
 * findings, reading below the root, the environment given, loading a
 * library, and the advice several findings share.  They call nothing of
 * the diagnosis's own, so its parts depend on this file and never on
 * each other through it.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag_util.h"

void diag_set(struct diag_report *r, enum diag_id id, enum diag_state s,
	      const char *fmt, ...)
{
	struct diag_finding *f = &r->f[id];
	va_list ap;

	f->state = s;
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
}

void diag_fix(struct diag_report *r, enum diag_id id,
	      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->f[id].fix, sizeof(r->f[id].fix), fmt, ap);
	va_end(ap);
}

void diag_cat(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

const char *diag_getenv(const struct diag_env *e, const char *name)
{
	size_t n = strlen(name);
	const char *v = NULL;
	char *const *p;

	if (!e->envp)
		v = getenv(name);
	for (p = e->envp; p && *p && !v; p++)
		if (!strncmp(*p, name, n) && (*p)[n] == '=')
			v = *p + n + 1;
	return v && *v ? v : NULL;
}

const char *diag_at(const struct diag_env *e, const char *path, char *buf,
		    size_t len)
{
	snprintf(buf, len, "%s%s", e->root ? e->root : "", path);
	return buf;
}

bool diag_exists(const struct diag_env *e, const char *path)
{
	char p[DIAG_PATH * 2];
	struct stat st;

	return stat(diag_at(e, path, p, sizeof(p)), &st) == 0;
}

int diag_first_line(const struct diag_env *e, const char *path, char *buf,
		    size_t len)
{
	char p[DIAG_PATH * 2];
	FILE *f = fopen(diag_at(e, path, p, sizeof(p)), "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int load_dlopen(const char *name, char *err, size_t len)
{
	const char *why;

	/* Left loaded: unloading a GPU driver's library is not always safe,
	 * and the Vulkan loader would load it again anyway. */
	if (dlopen(name, RTLD_LAZY | RTLD_LOCAL))
		return 0;
	why = dlerror();
	snprintf(err, len, "%s", why ? why : "dlopen failed");
	return -1;
}

int diag_load(const struct diag_env *e, const char *name, char *err,
	      size_t len)
{
	return (e->load ? e->load : load_dlopen)(name, err, len);
}

const char *diag_base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const char diag_see_graphics[] =
	"grant the container graphics, as the container finding says: the NVIDIA runtime mounts the Vulkan driver only then";
const char diag_not_mounted[] =
	"graphics is granted, yet the NVIDIA runtime mounted no Vulkan driver: check the NVIDIA Container Toolkit on the host (nvidia-ctk), or mount the host's nvidia_icd.json and libGLX_nvidia.so.0 in and set VK_DRIVER_FILES";

void diag_grant_graphics(const struct diag_report *r, char *buf,
			 size_t len)
{
	if (r->kubernetes)
		snprintf(buf, len,
			 "set NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics in the container's env; where graphics cannot be granted, load gdrdrv on the nodes and pass /dev/gdrdrv in (device plugin --gdrcopy-enabled, GPU Operator gdrcopy.enabled=true)");
	else
		snprintf(buf, len,
			 "start the container with docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics; where graphics cannot be granted, load gdrdrv on the host and pass /dev/gdrdrv in (NVIDIA_GDRCOPY=enabled)");
}
