// SPDX-License-Identifier: MIT
/*
 * gdr_open and gdrmap_open: the one place where a backend is chosen.
 *
 * Order: gdrdrv (the kernel module) when /dev/gdrdrv can be used, then the
 * module-free backends: dmabuf (where the driver maps dma-bufs), rm
 * (nvidia.ko's own RM interface, any CUDA memory) and vulkan.
 * GDRMAP_BACKEND=<name> forces one; GDRCopy's GDRCOPY_USE_DMABUF_MMAP=1
 * forces dmabuf.
 *
 * gdr_open keeps GDRCopy's rule: it succeeds only with a backend that maps
 * every kind of CUDA memory, so it leaves out a partial one (vulkan: no
 * cudaMalloc memory) unless GDRMAP_BACKEND names it or is "any".  The
 * consumers that register whatever memory their users hand them (UCX and
 * the MPIs over it, libfabric) would otherwise copy that memory by DMA
 * call by call, slower than their own paths without gdr_copy, and NCCL
 * with NCCL_CUMEM_ENABLE=0 would dereference a mapping that cannot exist:
 * where GDRCopy's library steps aside, so does this one
 * (docs/copy-only.md).  gdrmap_open is for programs that know what they
 * pin: gdrmap's own command and Python package.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "base/log.h"

#define AS_BACKEND(id, name) &gdr_backend_##name,
static const struct gdr_backend *const backends[] = {
	GDR_BACKENDS(AS_BACKEND)
};
#define NR_BACKENDS (sizeof(backends) / sizeof(backends[0]))

/*
 * The backend the environment forces, or NULL; *any set where it asks for
 * every backend in order, a partial one included (GDRMAP_BACKEND=any).
 */
static const struct gdr_backend *forced_backend(int *bad, int *any)
{
	const char *name = getenv("GDRMAP_BACKEND");
	const char *dmabuf = getenv("GDRCOPY_USE_DMABUF_MMAP");
	size_t i;

	*bad = 0;
	*any = name && !strcmp(name, "any");
	if (*any)	/* GDRMAP_BACKEND wins over GDRCOPY_USE_DMABUF_MMAP */
		return NULL;
	if (name && *name) {
		for (i = 0; i < NR_BACKENDS; i++)
			if (!strcmp(name, backends[i]->name))
				return backends[i];
		gdr_err("GDRMAP_BACKEND=%s is not a backend: use gdrdrv, dmabuf, rm, vulkan or any, or unset it",
			name);
		*bad = 1;
		return NULL;
	}
	if (dmabuf && !strcmp(dmabuf, "1"))
		return &gdr_backend_dmabuf;
	return NULL;
}

static gdr_t open_first(int take_partial)
{
	char why[NR_BACKENDS][GDR_WHY_LEN];
	const struct gdr_backend *forced;
	int bad, any, err = ENODEV, first_err = 0;
	struct gdr *g;
	size_t i;

	forced = forced_backend(&bad, &any);
	if (bad) {
		errno = EINVAL;
		return NULL;
	}
	take_partial |= any;
	for (i = 0; i < NR_BACKENDS; i++) {
		if (forced && backends[i] != forced)
			continue;
		if (!forced && !take_partial && backends[i]->partial) {
			/* Not tried: opening Vulkan costs a program that only
			 * asks (UCX, at every start) tens of milliseconds. */
			snprintf(why[i], sizeof(why[i]),
				 "not tried by gdr_open: it maps only cuMemCreate memory, and pins cudaMalloc memory copy-only (each copy a DMA), so gdr_open leaves it out as GDRCopy's library would; GDRMAP_BACKEND=any takes it for programs that pin only memory they allocate with cuMemCreate (NCCL); gdrmap's command and Python package use it (gdrmap_open)");
			continue;
		}
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
	{
		char all[NR_BACKENDS * (GDR_WHY_LEN + 16)];
		size_t used = 0;

		all[0] = '\0';
		for (i = 0; i < NR_BACKENDS; i++)
			used += (size_t)snprintf(all + used, sizeof(all) - used,
						 "\n  %s: %s", backends[i]->name,
						 why[i]);
		gdr_err("no backend is usable here:%s", all);
	}
	/* The first backend's reason is the one most worth acting on. */
	errno = first_err;
	return NULL;
}

GDR_API gdr_t gdr_open(void)
{
	return open_first(0);
}

GDR_API gdr_t gdrmap_open(void)
{
	return open_first(1);
}
