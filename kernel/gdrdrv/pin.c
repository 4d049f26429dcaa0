// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Pinning GPU memory with nvidia_p2p_get_pages[_persistent], unpinning, and
 * the free callback of non-persistent pins.
 *
 * NVIDIA's contract (open-gpu-kernel-modules: nv-p2p.c and RM's p2p code;
 * sim/nvsim/README.md names the driver function behind each rule):
 *  - the free callback runs under RM's API lock, from the task that frees
 *    the memory (or tears its process's clients down at exit); as soon as
 *    it returns, NVIDIA frees the page table and forgets it.  It is
 *    registered last in get_pages and may run before get_pages returns.
 *  - put_pages takes the same lock, so it waits for a running callback.
 *    With token 0 it finds the table only among the pins of the calling
 *    process (its thread group, and for an MPS client the server's object
 *    while the client's pid is registered with it): from elsewhere, or for
 *    a table the callback freed, it answers 0 and releases nothing.
 *  - put_pages with a p2p token looks in the token's client, from any
 *    process, and frees the table it was given even when that client no
 *    longer holds it: a put_pages under way when the callback runs (the
 *    token's owner freeing the memory) frees the table twice.  The
 *    callback cannot wait for put_pages (deadlock on RM's lock), so no
 *    ordering on our side prevents that.
 *  - put_pages_persistent has no caller check; persistent pins have no
 *    callback, and each holds a reference on the GPU (which blocks its
 *    reset).
 *  - a put can fail in two places.  Before RM, when the driver cannot
 *    allocate its stack: -ENOMEM, nothing taken, nothing released, and it
 *    has not waited for a running callback.  Inside RM: nothing released
 *    either, but put_pages_persistent drops the pin's GPU reference
 *    whatever RM answered, so a persistent pin whose put failed there must
 *    never be put again (each put would drop the GPU's usage count once
 *    more, stopping the GPU under its other users or warning below zero).
 *    RM's put paths answer no "out of memory" in the versions read (515,
 *    595): -ENOMEM is the stack's.
 *
 * Releasing pins, and who may, is release.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/timex.h>

#include "gdrdrv.h"

atomic_t gdrdrv_pin_count = ATOMIC_INIT(0);

/* Cycles spent in get_pages, as GDRCopy reports them (x86 only). */
static u64 gdrdrv_cycles(void)
{
#ifdef CONFIG_X86
	return get_cycles();
#else
	return 0;
#endif
}

/* Never called: the pin of gdrdrv_pin_exit cannot succeed. */
static void gdrdrv_no_callback(void *data)
{
}

/*
 * At module exit, every pin is released (each held a module reference),
 * but the callback that released the last one may not have returned yet:
 * its last instructions are ours.  NVIDIA runs callbacks with RM's API
 * lock held, and get_pages takes that lock: a pin of address 0, which no
 * process has, takes and drops it, and fails.  Persistent mode registers
 * no callback.  Read in 515.43.04 and 595.45.04: every caller of a
 * mapping's free callback (third_party_p2p.c: CliDelThirdPartyP2PVidmemInfo,
 * from thirdpartyp2pDestruct, CliUnregisterMemoryFromThirdPartyP2P and
 * the UNREGISTER_VIDMEM control) runs inside an RM API call, which holds
 * that lock, and rm_p2p_get_pages (osapi.c) takes it.  A driver that
 * called back without it would need another wait here.
 */
void gdrdrv_pin_exit(void)
{
	static char dummy;
	struct nvidia_p2p_page_table *pt = NULL;

	if (gdrdrv_persistent)
		return;
	if (!nvidia_p2p_get_pages(0, 0, 0, GDRDRV_GPU_PAGE_SIZE, &pt,
				  gdrdrv_no_callback, &dummy))
		nvidia_p2p_put_pages(0, 0, 0, pt);
}

static int gdrdrv_nv_get_pages(struct gdrdrv_region *r,
			       struct nvidia_p2p_page_table **pt)
{
	int ret;

	if (!r->persistent) {
		down_write(&gdrdrv_pin_gate);
		ret = nvidia_p2p_get_pages(r->p2p_token, r->va_space, r->va,
					   r->size, pt, gdrdrv_free_callback,
					   r);
		up_write(&gdrdrv_pin_gate);
		return ret;
	}
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

/*
 * Pins r's range: HELD, or GONE if the callback already ran.  The pin's
 * references and its charge (taken by gdrdrv_reserve_handle) are the
 * pin's from here on: whoever releases it gives them back.
 */
static int gdrdrv_get_pages(struct gdrdrv_region *r)
{
	struct nvidia_p2p_page_table *pt = NULL;
	bool getting;
	u64 start;
	int ret;

	/* The pin's references; the callback may drop them at any time. */
	gdrdrv_region_get(r);
	gdrdrv_file_get(r->file);
	atomic_inc(&gdrdrv_pin_count);
	__module_get(THIS_MODULE);

	start = gdrdrv_cycles();
	ret = gdrdrv_nv_get_pages(r, &pt);
	r->tm_cycles = gdrdrv_cycles() - start;
	if (ret) {
		gdrdrv_dbg("get_pages(%#llx, %#llx) failed: %d\n",
			   r->va, r->size, ret);
		/*
		 * A driver that fails after registering the callback may
		 * have run it already: then the pin is released.
		 */
		mutex_lock(&r->lock);
		getting = r->state == GDRDRV_PIN_GETTING;
		if (getting) {
			r->state = GDRDRV_PIN_GONE;
			gdrdrv_pin_count_out(r);
		}
		mutex_unlock(&r->lock);
		if (getting)
			gdrdrv_pin_drop(r);
		return ret;
	}

	mutex_lock(&r->lock);
	if (r->state == GDRDRV_PIN_GETTING) {
		r->pt = pt;
		r->state = GDRDRV_PIN_HELD;
	}
	mutex_unlock(&r->lock);
	return 0;
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
	if (gdrdrv_check_pin_size(round_up(end, GDRDRV_GPU_PAGE_SIZE) -
				  round_down(req->addr, GDRDRV_GPU_PAGE_SIZE)))
		return -EINVAL;

	if (!gdrdrv_persistent) {
		if (req->flags)
			return -EINVAL;
		/* Another process's memory, named by its tokens. */
		if ((req->p2p_token || req->va_space) &&
		    !READ_ONCE(gdrdrv_allow_p2p_tokens)) {
			gdrdrv_dbg("p2p_token/va_space refused (allow_p2p_tokens=0)\n");
			return -EPERM;
		}
		return 0;
	}
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

	/* Charged to the caller's memory cgroup, as its pins are its own. */
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return NULL;
	kref_init(&r->ref);
	mutex_init(&r->lock);
	INIT_LIST_HEAD(&r->stuck);
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
	r->state = GDRDRV_PIN_GETTING;
	return r;
}

/*
 * Gives r the fd's next range of mmap offsets and charges its size to the
 * fd.  Handles only grow, so a stale mapping never points at a later pin,
 * and stay below 2^32.
 */
static int gdrdrv_reserve_handle(struct gdrdrv_file *f,
				 struct gdrdrv_region *r)
{
	u64 pages = r->size >> PAGE_SHIFT;
	int ret;

	BUILD_BUG_ON(PAGE_SIZE > GDRDRV_GPU_PAGE_SIZE);

	mutex_lock(&f->lock);
	if (pages > GDRDRV_HANDLE_LIMIT - f->next_handle) {
		ret = -ENOMEM;
	} else {
		ret = gdrdrv_charge_pin(f, r->size);
		if (!ret) {
			r->handle = f->next_handle;
			f->next_handle += pages;
		}
	}
	mutex_unlock(&f->lock);
	return ret;
}

/*
 * Gives back the offsets of a pin that get_pages refused (its charge went
 * with the pin) if no pin took later ones (a failed pin was never mapped),
 * so that failing pins do not use up the handle space.
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

	/* Once listed, another thread may unpin and free r at any time. */
	gdrdrv_dbg("pinning %#llx+%#llx as handle %llu (%s)\n", r->va, r->size,
		   r->handle, r->persistent ? "persistent" : "callback");
	*handle = r->handle;
	mutex_lock(&f->lock);
	ret = xa_insert(&f->regions, (unsigned long)*handle, r, GFP_KERNEL);
	mutex_unlock(&f->lock);
	if (ret)
		goto unpin_region;
	return 0;

unpin_region:
	/* Its offsets stay used: a pin kept after a failed put zaps them. */
	gdrdrv_region_unpin(f, r, true);
	goto put_region;
release_handle:
	gdrdrv_release_handle(f, r);
put_region:
	gdrdrv_region_put(r);
	return ret;
}

