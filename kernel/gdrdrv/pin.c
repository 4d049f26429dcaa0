// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Pinning GPU memory with nvidia_p2p_get_pages[_persistent], unpinning, and
 * the free callback of non-persistent pins.
 *
 * Who releases an NVIDIA pin is decided under region->lock, once:
 *  - unpin (or close) claims the pin (put_claimed) unless the callback has
 *    run, and then calls put_pages with none of our locks held.  NVIDIA
 *    makes a racing callback finish before put_pages goes on; that
 *    callback sees the claim and leaves the pin alone.
 *  - the free callback consumes the pin (cb_fired) unless unpin claimed
 *    it: it zaps the CPU mappings before NVIDIA frees the memory, and
 *    unpin later skips put_pages, which must not be called any more.
 * The one that releases the pin also drops the pin's region reference and
 * the pin count, after it is done with the region.
 *
 * The callback takes region->lock only, never gdrdrv_file.lock, which is
 * held by threads that may wait for NVIDIA's locks (see gdrdrv.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/timex.h>

#include "gdrdrv.h"

atomic_t gdrdrv_pin_count = ATOMIC_INIT(0);

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

/* Cycles spent in get_pages, as GDRCopy reports them (x86 only). */
static u64 gdrdrv_cycles(void)
{
#ifdef CONFIG_X86
	return get_cycles();
#else
	return 0;
#endif
}

static void gdrdrv_free_callback(void *data)
{
	struct gdrdrv_region *r = data;
	bool consumed;

	mutex_lock(&r->lock);
	r->cb_fired = true;
	consumed = !r->put_claimed;
	if (consumed) {
		gdrdrv_region_zap(r);
		if (r->pt)
			nvidia_p2p_free_page_table(r->pt);
		r->pt = NULL;
	}
	mutex_unlock(&r->lock);

	gdrdrv_dbg("free callback for handle %llu%s\n", r->handle,
		   consumed ? "" : " (racing unpin)");
	if (consumed) {
		atomic_dec(&gdrdrv_pin_count);
		gdrdrv_region_put(r);
	}
}

static int gdrdrv_nv_get_pages(struct gdrdrv_region *r,
			       struct nvidia_p2p_page_table **pt)
{
	if (!r->persistent)
		return nvidia_p2p_get_pages(r->p2p_token, r->va_space, r->va,
					    r->size, pt, gdrdrv_free_callback,
					    r);
#if GDRDRV_HAVE_PERSISTENT
	{
		u32 nvflags = 0;

#if GDRDRV_HAVE_FORCE_BAR1
		if (r->flags & GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE)
			nvflags |= NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING;
#endif
		return nvidia_p2p_get_pages_persistent(r->va, r->size, pt,
						       nvflags);
	}
#else
	return -EINVAL;
#endif
}

static int gdrdrv_nv_put_pages(struct gdrdrv_region *r,
			       struct nvidia_p2p_page_table *pt)
{
#if GDRDRV_HAVE_PERSISTENT
	if (r->persistent)
		return nvidia_p2p_put_pages_persistent(r->va, pt, 0);
#endif
	return nvidia_p2p_put_pages(r->p2p_token, r->va_space, r->va, pt);
}

/* Pins r's range; on success r->pt is set unless the callback ran. */
static int gdrdrv_get_pages(struct gdrdrv_region *r)
{
	struct nvidia_p2p_page_table *pt = NULL;
	u64 start;
	int ret;

	/* The pin's reference; the callback may drop it at any time. */
	gdrdrv_region_get(r);
	atomic_inc(&gdrdrv_pin_count);

	start = gdrdrv_cycles();
	ret = gdrdrv_nv_get_pages(r, &pt);
	r->tm_cycles = gdrdrv_cycles() - start;
	if (ret) {
		gdrdrv_dbg("get_pages(%#llx, %#llx) failed: %d\n",
			   r->va, r->size, ret);
		atomic_dec(&gdrdrv_pin_count);
		gdrdrv_region_put(r);
		return ret;
	}

	mutex_lock(&r->lock);
	if (!r->cb_fired)
		r->pt = pt;
	mutex_unlock(&r->lock);
	return 0;
}

/* Releases a claimed pin. */
static void gdrdrv_put_pages(struct gdrdrv_region *r,
			     struct nvidia_p2p_page_table *pt)
{
	int ret;

	ret = gdrdrv_nv_put_pages(r, pt);
	if (ret) {
		/*
		 * The pin, and a callback into this module with it, may
		 * still exist: keep the region and the module for good.
		 */
		pr_err("put_pages for handle %llu failed: %d; keeping the pin\n",
		       r->handle, ret);
		__module_get(THIS_MODULE);
		return;
	}
	atomic_dec(&gdrdrv_pin_count);
	gdrdrv_region_put(r);
}

/* Takes the pin for put_pages, unless the free callback consumed it. */
static struct nvidia_p2p_page_table *gdrdrv_claim_pin(struct gdrdrv_region *r)
{
	struct nvidia_p2p_page_table *pt = r->pt;

	lockdep_assert_held(&r->lock);

	if (r->cb_fired || !pt)
		return NULL;
	r->put_claimed = true;
	r->pt = NULL;
	return pt;
}

/* Stops CPU access to r and releases its pin (if still held). */
static void gdrdrv_region_unpin(struct gdrdrv_region *r)
{
	struct nvidia_p2p_page_table *pt;

	mutex_lock(&r->lock);
	gdrdrv_region_zap(r);
	pt = gdrdrv_claim_pin(r);
	mutex_unlock(&r->lock);

	if (pt)
		gdrdrv_put_pages(r, pt);
}

static int gdrdrv_check_page_table(struct gdrdrv_region *r)
{
	const struct nvidia_p2p_page_table *pt = r->pt;

	lockdep_assert_held(&r->lock);

	/* Freed already: the handle will report the callback. */
	if (!pt)
		return 0;
	if (!NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(pt)) {
		pr_err("page table version %#x, built for %#x\n",
		       pt->version, NVIDIA_P2P_PAGE_TABLE_VERSION);
		return -EFAULT;
	}
	if (pt->page_size != NVIDIA_P2P_PAGE_SIZE_64KB) {
		pr_err("GPU page size type %u is not 64 KiB\n", pt->page_size);
		return -EINVAL;
	}
	return 0;
}

static int gdrdrv_pin_check(const struct gdrdrv_pin_req *req)
{
	u64 end;

	if (!req->addr || !req->size)
		return -EINVAL;
	if (check_add_overflow(req->addr, req->size, &end) ||
	    end > U64_MAX - (GDRDRV_GPU_PAGE_SIZE - 1))
		return -EINVAL;
	if (req->flags & ~(u32)GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE)
		return -EINVAL;

	if (!gdrdrv_persistent)
		return req->flags ? -EINVAL : 0;
	if (req->p2p_token || req->va_space)
		return -EINVAL;
	if ((req->flags & GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE) &&
	    !GDRDRV_HAVE_FORCE_BAR1)
		return -EINVAL;
	return 0;
}

static struct gdrdrv_region *gdrdrv_region_alloc(struct gdrdrv_file *f,
						 const struct gdrdrv_pin_req *req)
{
	struct gdrdrv_region *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return NULL;
	kref_init(&r->ref);
	mutex_init(&r->lock);
	atomic_set(&r->map_count, 0);
	r->file = f;
	r->va = round_down(req->addr, GDRDRV_GPU_PAGE_SIZE);
	r->size = round_up(req->addr + req->size, GDRDRV_GPU_PAGE_SIZE) - r->va;
	r->offset = req->addr - r->va;
	r->p2p_token = req->p2p_token;
	r->va_space = req->va_space;
	r->flags = req->flags;
	r->persistent = gdrdrv_persistent;
	r->req_type = GDRDRV_MAPPING_TYPE_NONE;
	r->map_type = GDRDRV_MAPPING_TYPE_NONE;
	return r;
}

/*
 * Gives r the fd's next range of mmap offsets.  Handles only grow, so a
 * stale mapping never points at a later pin, and stay below 2^32.
 */
static int gdrdrv_reserve_handle(struct gdrdrv_file *f,
				 struct gdrdrv_region *r)
{
	u64 pages = r->size >> PAGE_SHIFT;
	int ret = 0;

	BUILD_BUG_ON(PAGE_SIZE > GDRDRV_GPU_PAGE_SIZE);

	mutex_lock(&f->lock);
	if (pages > GDRDRV_HANDLE_LIMIT - f->next_handle) {
		ret = -ENOMEM;
	} else {
		r->handle = f->next_handle;
		f->next_handle += pages;
	}
	mutex_unlock(&f->lock);
	return ret;
}

/*
 * Gives back the offsets of a pin that failed, if no pin took later ones
 * (a failed pin was never mapped), so that failing pins do not use up the
 * handle space.
 */
static void gdrdrv_release_handle(struct gdrdrv_file *f,
				  struct gdrdrv_region *r)
{
	mutex_lock(&f->lock);
	if (f->next_handle == r->handle + (r->size >> PAGE_SHIFT))
		f->next_handle = r->handle;
	mutex_unlock(&f->lock);
}

int gdrdrv_pin(struct gdrdrv_file *f, const struct gdrdrv_pin_req *req,
	       u64 *handle)
{
	struct gdrdrv_region *r;
	int ret;

	ret = gdrdrv_pin_check(req);
	if (ret)
		return ret;
	r = gdrdrv_region_alloc(f, req);
	if (!r)
		return -ENOMEM;
	ret = gdrdrv_reserve_handle(f, r);
	if (ret)
		goto put_region;

	/* No lock of ours is held while NVIDIA takes its own. */
	ret = gdrdrv_get_pages(r);
	if (ret)
		goto release_handle;

	mutex_lock(&r->lock);
	ret = gdrdrv_check_page_table(r);
	mutex_unlock(&r->lock);
	if (ret)
		goto unpin_region;

	mutex_lock(&f->lock);
	ret = xa_insert(&f->regions, (unsigned long)r->handle, r, GFP_KERNEL);
	mutex_unlock(&f->lock);
	if (ret)
		goto unpin_region;

	gdrdrv_dbg("pinned %#llx+%#llx as handle %llu (%s)\n", r->va, r->size,
		   r->handle, r->persistent ? "persistent" : "callback");
	*handle = r->handle;
	return 0;

unpin_region:
	gdrdrv_region_unpin(r);
release_handle:
	gdrdrv_release_handle(f, r);
put_region:
	gdrdrv_region_put(r);
	return ret;
}

int gdrdrv_unpin(struct gdrdrv_file *f, u64 handle)
{
	struct gdrdrv_region *r = NULL;

	mutex_lock(&f->lock);
	if (handle < GDRDRV_HANDLE_LIMIT)
		r = xa_erase(&f->regions, (unsigned long)handle);
	mutex_unlock(&f->lock);
	if (!r)
		return -EINVAL;

	gdrdrv_dbg("unpin handle %llu\n", handle);
	gdrdrv_region_unpin(r);
	gdrdrv_region_put(r);		/* the xarray's reference */
	return 0;
}

/* At close: the fd has no mappings left, only pins. */
void gdrdrv_unpin_all(struct gdrdrv_file *f)
{
	struct gdrdrv_region *r;
	unsigned long handle;

	mutex_lock(&f->lock);
	xa_for_each(&f->regions, handle, r) {
		xa_erase(&f->regions, handle);
		mutex_unlock(&f->lock);

		gdrdrv_region_unpin(r);
		gdrdrv_region_put(r);

		mutex_lock(&f->lock);
	}
	mutex_unlock(&f->lock);
}
