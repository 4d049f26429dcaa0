// SPDX-License-Identifier: MIT
/*
 * gdr_open: the one place where a backend is chosen.
 *
 * Order: gdrdrv (the kernel module) when /dev/gdrdrv can be used, then the
 * module-free backends, dmabuf and vulkan.  GDRMAP_BACKEND=<name> forces
 * one; GDRCopy's GDRCOPY_USE_DMABUF_MMAP=1 forces dmabuf.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "log.h"

static const struct gdr_backend *const backends[] = {
	&gdr_backend_gdrdrv,
	&gdr_backend_dmabuf,
	&gdr_backend_vulkan,
};
#define NR_BACKENDS (sizeof(backends) / sizeof(backends[0]))
_Static_assert(NR_BACKENDS == 3, "gdr_open's message names three backends");

static const struct gdr_backend *forced_backend(int *bad)
{
	const char *name = getenv("GDRMAP_BACKEND");
	const char *dmabuf = getenv("GDRCOPY_USE_DMABUF_MMAP");
	size_t i;

	*bad = 0;
	if (name && *name) {
		for (i = 0; i < NR_BACKENDS; i++)
			if (!strcmp(name, backends[i]->name))
				return backends[i];
		gdr_err("GDRMAP_BACKEND=%s is not a backend: use gdrdrv, dmabuf or vulkan, or unset it",
			name);
		*bad = 1;
		return NULL;
	}
	if (dmabuf && !strcmp(dmabuf, "1"))
		return &gdr_backend_dmabuf;
	return NULL;
}

GDR_API gdr_t gdr_open(void)
{
	char why[NR_BACKENDS][GDR_WHY_LEN];
	const struct gdr_backend *forced;
	int bad, err = ENODEV, first_err = 0;
	struct gdr *g;
	size_t i;

	forced = forced_backend(&bad);
	if (bad) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < NR_BACKENDS; i++) {
		if (forced && backends[i] != forced)
			continue;
		g = gdr_open_backend(backends[i], why[i], sizeof(why[i]),
				     &err);
		if (g)
			return g;
		gdr_info("%s backend not usable: %s", backends[i]->name,
			 why[i]);
		first_err = first_err ? first_err : err;
		if (forced) {
			gdr_err("the %s backend (forced by the environment) is not usable: %s",
				forced->name, why[i]);
			errno = err;
			return NULL;
		}
	}
	/* One message, so that gdrmap_last_error() holds all of it. */
	gdr_err("no backend is usable here:\n  %s: %s\n  %s: %s\n  %s: %s",
		backends[0]->name, why[0], backends[1]->name, why[1],
		backends[2]->name, why[2]);
	/* The first backend's reason is the one most worth acting on. */
	errno = first_err;
	return NULL;
}
