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
 *    process (its thread group): from another process, or for a table the
 *    callback freed, it answers 0 and releases nothing.
 *  - put_pages with a p2p token looks in the token's client, from any
 *    process, and frees the table it was given even when that client no
 *    longer holds it: a put_pages under way when the callback runs (the
 *    token's owner freeing the memory) frees the table twice.  The
 *    callback cannot wait for put_pages (deadlock on RM's lock), so no
 *    ordering on our side prevents that.
 *  - put_pages_persistent has no caller check; persistent pins have no
 *    callback.  Any put can fail, and then releases nothing.
 *
 * So who may release a pin with put_pages (gdrdrv_may_put): a persistent
 * pin, anyone; a non-persistent pin made with token 0, only the process
 * that made it, which is the fd's opener (the only one that may use the
 * fd); a pin made with a p2p token, nobody.  A pin that the releasing task
 * may not put is left to its callback (LEFT): its mappings are zapped and
 * its handle is gone at once, and the callback releases it when the
 * memory is freed, at the latest when the memory's process exits.  The
 * last close of an fd by a fork child, or by a process the fd was passed
 * to, leaves the opener's pins so; a token pin is always left so.
 *
 * The hand-over, decided under region->lock (r->state):
 *  - GETTING -> HELD when get_pages returns; a callback before that
 *    finds GETTING and consumes the pin (-> GONE);
 *  - HELD -> GONE by the callback: it zaps the CPU mappings first;
 *  - HELD (or STUCK) -> PUTTING by an unpin that may put, which then
 *    calls put_pages unlocked.  A callback meanwhile only sets cb_fired:
 *    the pin is NVIDIA's to free and unpin's to account.  When put_pages
 *    returns, PUTTING -> GONE, whatever it returned if the callback ran
 *    (the table it was given no longer existed), else only on success: a
 *    put_pages that NVIDIA refused leaves the pin in place (STUCK), on
 *    its file's list, to be put again when the file is closed (or its
 *    opener exits); a callback may release it before;
 *  - HELD (or STUCK) -> LEFT by an unpin that may not put; LEFT -> GONE
 *    by the callback.
 * A pin not yet GONE holds a reference on its region, a count in
 * gdrdrv_pin_count and a reference on this module (a callback into it
 * may still come); whoever moves the state to GONE drops the three, once
 * done with the region.  The callback drops the module's reference as its
 * last act; NVIDIA holds its lock until the callback has returned, and
 * the module's exit takes that lock before it lets the code go
 * (gdrdrv_pin_exit).
 *
 * gdrdrv_pin_gate keeps gdrdrv's own pins from reusing a freed table
 * under an unpin's put_pages: every non-persistent put_pages holds it
 * shared from before the claim until it returns, every non-persistent
 * get_pages exclusively.  RM serialises both under one lock anyway.
 * Pins that other NVIDIA clients (nvidia-peermem) make in the same
 * process meanwhile cannot be held off by any client.
 *
 * The callback takes region->lock only, never gdrdrv_file.lock, which is
 * held by threads that may wait for NVIDIA's locks (see gdrdrv.h).
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

static DECLARE_RWSEM(gdrdrv_pin_gate);

/* Cycles spent in get_pages, as GDRCopy reports them (x86 only). */
static u64 gdrdrv_cycles(void)
{
#ifdef CONFIG_X86
	return get_cycles();
#else
	return 0;
#endif
}

/* The NVIDIA pin of r is released: drop what it held. */
static void gdrdrv_pin_released(struct gdrdrv_region *r)
{
	atomic_dec(&gdrdrv_pin_count);
	gdrdrv_region_put(r);
	module_put(THIS_MODULE);
}

static void gdrdrv_free_callback(void *data)
{
	struct gdrdrv_region *r = data;
	enum gdrdrv_pin_state was;

	mutex_lock(&r->lock);
	r->cb_fired = true;
	was = r->state;
	/* Only a HELD pin can have mappings (unpin zapped the others'). */
	if (was == GDRDRV_PIN_HELD)
		gdrdrv_region_zap(r);
	/* PUTTING: unpin accounts for it when put_pages returns. */
	if (was != GDRDRV_PIN_PUTTING && was != GDRDRV_PIN_GONE) {
		if (r->pt)
			nvidia_p2p_free_page_table(r->pt);
		r->pt = NULL;
		r->state = GDRDRV_PIN_GONE;
		/*
		 * Counted out under the lock: a close that sees GONE does
		 * not wait for this callback, and the count must not say
		 * the pin is still there after it.
		 */
		atomic_dec(&gdrdrv_pin_count);
	}
	mutex_unlock(&r->lock);

	gdrdrv_dbg("free callback for handle %llu (state %d)\n", r->handle,
		   was);
	if (was == GDRDRV_PIN_PUTTING || was == GDRDRV_PIN_GONE)
		return;
	gdrdrv_region_put(r);
	/*
	 * Last, since the module may go once it is dropped: NVIDIA holds
	 * its lock until this returns, and the module's exit waits for
	 * that lock (gdrdrv_pin_exit).
	 */
	module_put(THIS_MODULE);
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
 * no callback.
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

static int gdrdrv_nv_put_pages(struct gdrdrv_region *r,
			       struct nvidia_p2p_page_table *pt)
{
#if GDRDRV_HAVE_PERSISTENT
	if (r->persistent)
		return nvidia_p2p_put_pages_persistent(r->va, pt, 0);
#endif
	return nvidia_p2p_put_pages(r->p2p_token, r->va_space, r->va, pt);
}

/* Pins r's range: HELD, or GONE if the callback already ran. */
static int gdrdrv_get_pages(struct gdrdrv_region *r)
{
	struct nvidia_p2p_page_table *pt = NULL;
	u64 start;
	int ret;

	/* The pin's references; the callback may drop them at any time. */
	gdrdrv_region_get(r);
	atomic_inc(&gdrdrv_pin_count);
	__module_get(THIS_MODULE);

	start = gdrdrv_cycles();
	ret = gdrdrv_nv_get_pages(r, &pt);
	r->tm_cycles = gdrdrv_cycles() - start;
	if (ret) {
		gdrdrv_dbg("get_pages(%#llx, %#llx) failed: %d\n",
			   r->va, r->size, ret);
		mutex_lock(&r->lock);
		r->state = GDRDRV_PIN_GONE;
		mutex_unlock(&r->lock);
		gdrdrv_pin_released(r);
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

/* Whether this task may release r's pin with put_pages (see the top). */
static bool gdrdrv_may_put(const struct gdrdrv_region *r, bool owner)
{
	if (r->persistent)
		return true;
	return owner && !r->p2p_token;
}

/*
 * Stops CPU access to r and releases its pin if r still holds it (the
 * hand-over is described at the top of this file).  owner: the task is
 * of the thread group that opened f.
 */
static void gdrdrv_region_unpin(struct gdrdrv_file *f,
				struct gdrdrv_region *r, bool owner)
{
	struct nvidia_p2p_page_table *pt = NULL;
	bool may_put = gdrdrv_may_put(r, owner);
	bool released = false, left = false;
	int ret = 0;

	if (!r->persistent)
		down_read(&gdrdrv_pin_gate);

	mutex_lock(&r->lock);
	gdrdrv_region_zap(r);
	if (r->state == GDRDRV_PIN_HELD || r->state == GDRDRV_PIN_STUCK) {
		if (may_put) {
			pt = r->pt;
			r->state = GDRDRV_PIN_PUTTING;
		} else {
			r->state = GDRDRV_PIN_LEFT;
			left = true;
		}
	}
	mutex_unlock(&r->lock);

	if (pt) {
		ret = gdrdrv_nv_put_pages(r, pt);

		mutex_lock(&r->lock);
		released = !ret || r->cb_fired;
		r->state = released ? GDRDRV_PIN_GONE : GDRDRV_PIN_STUCK;
		if (released)
			r->pt = NULL;
		mutex_unlock(&r->lock);

		if (ret && released)
			gdrdrv_dbg("put_pages for handle %llu: %d after the free callback ran\n",
				   r->handle, ret);
	}
	if (!r->persistent)
		up_read(&gdrdrv_pin_gate);

	if (left)
		gdrdrv_dbg("handle %llu left to its free callback (%s)\n",
			   r->handle, r->p2p_token ? "a p2p token pin" :
			   "not the pinning process");
	if (!pt)
		return;
	if (released) {
		gdrdrv_pin_released(r);
		return;
	}
	/*
	 * The pin, and a callback into this module with it, may still
	 * exist: keep it, and put it again when the file is closed.
	 */
	pr_err("put_pages for handle %llu failed: %d; keeping the pin until the file is closed or its memory freed\n",
	       r->handle, ret);
	mutex_lock(&f->lock);
	gdrdrv_region_get(r);
	list_add_tail(&r->stuck, &f->stuck);
	mutex_unlock(&f->lock);
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
 * Undoes gdrdrv_reserve_handle for a pin that failed.  Its offsets go
 * back if no pin took later ones (a failed pin was never mapped), so that
 * failing pins do not use up the handle space.
 */
static void gdrdrv_release_handle(struct gdrdrv_file *f,
				  struct gdrdrv_region *r)
{
	mutex_lock(&f->lock);
	gdrdrv_uncharge_pin(f, r->size);
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
	gdrdrv_region_unpin(f, r, true);
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
	if (r)
		gdrdrv_uncharge_pin(f, r->size);
	mutex_unlock(&f->lock);
	if (!r)
		return -EINVAL;

	gdrdrv_dbg("unpin handle %llu\n", handle);
	gdrdrv_region_unpin(f, r, true);
	gdrdrv_region_put(r);		/* the xarray's reference */
	return 0;
}

/*
 * At close, or when the process that opened the fd has exited while
 * another (a fork child) still holds it: release every pin, and put again
 * those whose put_pages failed before.  owner: the task is of the thread
 * group that opened f.
 */
void gdrdrv_unpin_all(struct gdrdrv_file *f, bool owner)
{
	struct gdrdrv_region *r, *tmp;
	unsigned long handle;
	LIST_HEAD(stuck);

	mutex_lock(&f->lock);
	list_splice_init(&f->stuck, &stuck);
	xa_for_each(&f->regions, handle, r) {
		xa_erase(&f->regions, handle);
		gdrdrv_uncharge_pin(f, r->size);
		mutex_unlock(&f->lock);

		gdrdrv_region_unpin(f, r, owner);
		gdrdrv_region_put(r);

		mutex_lock(&f->lock);
	}
	mutex_unlock(&f->lock);

	list_for_each_entry_safe(r, tmp, &stuck, stuck) {
		list_del_init(&r->stuck);
		gdrdrv_region_unpin(f, r, owner);
		gdrdrv_region_put(r);
	}
}

/*
 * At the last close, after gdrdrv_unpin_all: a pin whose put_pages failed
 * there too stays NVIDIA's, with its reference on the module, until its
 * callback releases it (never, for a persistent pin).
 */
void gdrdrv_forget_stuck(struct gdrdrv_file *f)
{
	struct gdrdrv_region *r, *tmp;

	list_for_each_entry_safe(r, tmp, &f->stuck, stuck) {
		list_del_init(&r->stuck);
		pr_err("handle %llu stays pinned after the last close: put_pages failed; only a free callback can release it now\n",
		       r->handle);
		gdrdrv_region_put(r);
	}
}
