// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A pinned region as an object: its references and its lookup by handle.
 * Below both pin.c, which makes and releases pins, and mmap.c, which maps
 * them (and which pin.c calls to zap a region's mappings): neither needs
 * the other for this.
 */
#include <linux/kref.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "gdrdrv.h"

static void gdrdrv_region_release(struct kref *ref)
{
	struct gdrdrv_region *r = container_of(ref, struct gdrdrv_region, ref);

	WARN_ON(r->pt);
	WARN_ON(r->wc_runs);
	mutex_destroy(&r->lock);
	kfree(r);
}

void gdrdrv_region_get(struct gdrdrv_region *r)
{
	kref_get(&r->ref);
}

void gdrdrv_region_put(struct gdrdrv_region *r)
{
	kref_put(&r->ref, gdrdrv_region_release);
}

struct gdrdrv_region *gdrdrv_region_lookup(struct gdrdrv_file *f, u64 handle)
{
	lockdep_assert_held(&f->lock);

	if (handle >= GDRDRV_HANDLE_LIMIT)
		return NULL;
	return xa_load(&f->regions, (unsigned long)handle);
}
