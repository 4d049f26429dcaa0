// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Releasing NVIDIA pins: unpin, the close of a file, and the free callback
 * of non-persistent pins, by NVIDIA's rules (pin.c).
 *
 * Who may release a pin with put_pages (gdrdrv_may_put): a persistent
 * pin, anyone; a non-persistent pin made with token 0, only the process
 * that made it, which is the fd's opener (the only one that may use the
 * fd), and not as it exits (see file.c); a pin made with a p2p token,
 * nobody.  A pin that the releasing task may not put is left to its
 * callback (LEFT): its mappings are zapped and its handle is gone at
 * once, and the callback releases it when the memory is freed, at the
 * latest when the last process holding the memory's NVIDIA clients (its
 * /dev/nvidia* descriptors) exits.  The last close of an fd by a fork
 * child, or by a process the fd was passed to, or by the exiting opener,
 * leaves the opener's pins so; a token pin is always left so.
 *
 * The hand-over, decided under region->lock (r->state):
 *  - GETTING -> HELD when get_pages returns; a callback before that
 *    finds GETTING and consumes the pin (-> GONE), and a get_pages that
 *    then fails releases nothing more;
 *  - HELD -> GONE by the callback: it zaps the CPU mappings first;
 *  - HELD (or STUCK) -> PUTTING by an unpin that may put, which then
 *    calls put_pages unlocked.  A callback meanwhile only sets cb_fired:
 *    the pin is NVIDIA's to free and unpin's to account.  When put_pages
 *    returns, PUTTING -> GONE, whatever it returned if the callback ran
 *    (the table it was given no longer existed), else on success, and
 *    for a persistent pin whose put failed inside RM, which is given up:
 *    gdrdrv lets go of it, NVIDIA keeps it until the GPU is reset.  A
 *    put that may be tried again (non-persistent, or failed before RM)
 *    leaves the pin in place (STUCK), on its file's list, to be put again
 *    when the file is closed (or its opener exits); a callback may
 *    release it before;
 *  - HELD (or STUCK) -> LEFT by an unpin that may not put; LEFT -> GONE
 *    by the callback;
 *  - STUCK at the last close, after one more put: LEFT if it has a
 *    callback, else (persistent) given up.
 * A pin not yet GONE holds a reference on its region, on its file (and
 * its charge there, so that max_pinned_per_file and /proc count it), a
 * count in gdrdrv_pin_count and a reference on this module (a callback
 * into it may still come); whoever moves the state to GONE counts it out
 * and drops those, once done with the region.  The callback drops the
 * module's reference as its last act; NVIDIA holds its lock until the
 * callback has returned, and the module's exit takes that lock before it
 * lets the code go (gdrdrv_pin_exit).
 *
 * gdrdrv_pin_gate keeps gdrdrv's own pins from reusing a freed table
 * under an unpin's put_pages: every non-persistent put_pages holds it
 * shared from before the claim until it returns, every non-persistent
 * get_pages exclusively.  RM serialises both under one lock anyway.
 * Pins that other NVIDIA clients (nvidia-peermem) make in the same process
 * meanwhile cannot be held off by any client.
 *
 * The callback takes region->lock only, never gdrdrv_file.lock, which is
 * held by threads that may wait for NVIDIA's locks (see gdrdrv.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/xarray.h>

#include "gdrdrv.h"

DECLARE_RWSEM(gdrdrv_pin_gate);

static const char *gdrdrv_state_name(enum gdrdrv_pin_state state)
{
	static const char * const names[] = {
		[GDRDRV_PIN_GETTING] = "being got",
		[GDRDRV_PIN_HELD] = "held",
		[GDRDRV_PIN_PUTTING] = "being put",
		[GDRDRV_PIN_STUCK] = "kept after a failed put",
		[GDRDRV_PIN_LEFT] = "left to its callback",
		[GDRDRV_PIN_GONE] = "released",
	};

	return names[state];
}

/*
 * r's pin has left its file's handle table but not NVIDIA: counted in
 * file->left until released.
 */
static void gdrdrv_pin_mark_left(struct gdrdrv_region *r)
{
	lockdep_assert_held(&r->lock);
	if (r->left)
		return;
	r->left = true;
	atomic_inc(&r->file->left);
}

/*
 * r's pin is released (r->state just became GONE): out of every count,
 * under r->lock, so that nothing counts it once it reads GONE.
 */
void gdrdrv_pin_count_out(struct gdrdrv_region *r)
{
	lockdep_assert_held(&r->lock);
	atomic_dec(&gdrdrv_pin_count);
	gdrdrv_uncharge_pin(r->file, r->size);
	if (r->left) {
		r->left = false;
		atomic_dec(&r->file->left);
	}
}

/*
 * Drops the references that r's released pin held.  The module's goes
 * last: in the callback, the module may go once it is dropped.
 */
void gdrdrv_pin_drop(struct gdrdrv_region *r)
{
	struct gdrdrv_file *f = r->file;

	gdrdrv_region_put(r);
	gdrdrv_file_put(f);
	module_put(THIS_MODULE);
}

void gdrdrv_free_callback(void *data)
{
	struct gdrdrv_region *r = data;
	enum gdrdrv_pin_state was;
	u64 handle;

	mutex_lock(&r->lock);
	r->cb_fired = true;
	was = r->state;
	/* Copied here: unpin may free r as soon as it is unlocked. */
	handle = r->handle;
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
		 * not wait for this callback, and the counts must not say
		 * the pin is still there after it.
		 */
		gdrdrv_pin_count_out(r);
	}
	mutex_unlock(&r->lock);

	gdrdrv_dbg("free callback for handle %llu (%s)\n", handle,
		   gdrdrv_state_name(was));
	if (was == GDRDRV_PIN_PUTTING || was == GDRDRV_PIN_GONE)
		return;
	/*
	 * NVIDIA holds its lock until this returns, and the module's exit
	 * waits for that lock (gdrdrv_pin_exit).
	 */
	gdrdrv_pin_drop(r);
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

/*
 * Whether this task may release r's pin with put_pages (see the top).
 * own: the task is of the opener's thread group, which is not exiting.
 */
static bool gdrdrv_may_put(const struct gdrdrv_region *r, bool own)
{
	if (r->persistent)
		return true;
	return own && !r->p2p_token;
}

/* What became of a pin that an unpin put. */
enum gdrdrv_put_end {
	GDRDRV_PUT_RELEASED,	/* NVIDIA let go of it */
	GDRDRV_PUT_KEPT,	/* still NVIDIA's; put it again later */
	GDRDRV_PUT_GIVEN_UP,	/* still NVIDIA's; never to be put again */
};

static enum gdrdrv_put_end gdrdrv_put_end(const struct gdrdrv_region *r,
					  int ret)
{
	if (!ret || r->cb_fired)
		return GDRDRV_PUT_RELEASED;
	/* Past the stack allocation, it has dropped the GPU reference. */
	if (r->persistent && ret != -ENOMEM)
		return GDRDRV_PUT_GIVEN_UP;
	return GDRDRV_PUT_KEPT;
}

/*
 * Stops CPU access to r and releases its pin if r still holds it (the
 * hand-over is described at the top of this file).  own: see
 * gdrdrv_may_put.
 */
void gdrdrv_region_unpin(struct gdrdrv_file *f,
				struct gdrdrv_region *r, bool own)
{
	enum gdrdrv_put_end end = GDRDRV_PUT_KEPT;
	struct nvidia_p2p_page_table *pt = NULL;
	bool may_put = gdrdrv_may_put(r, own);
	bool left = false;
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
			gdrdrv_pin_mark_left(r);
			left = true;
		}
	}
	mutex_unlock(&r->lock);

	if (pt) {
		ret = gdrdrv_nv_put_pages(r, pt);

		mutex_lock(&r->lock);
		end = gdrdrv_put_end(r, ret);
		if (end == GDRDRV_PUT_KEPT) {
			r->state = GDRDRV_PIN_STUCK;
			gdrdrv_pin_mark_left(r);
		} else {
			r->state = GDRDRV_PIN_GONE;
			r->pt = NULL;
			gdrdrv_pin_count_out(r);
		}
		mutex_unlock(&r->lock);

		if (ret && end == GDRDRV_PUT_RELEASED)
			gdrdrv_dbg("put_pages for handle %llu: %d after the free callback ran\n",
				   r->handle, ret);
	}
	if (!r->persistent)
		up_read(&gdrdrv_pin_gate);

	if (left)
		gdrdrv_dbg("handle %llu left to its free callback (%s)\n",
			   r->handle, r->p2p_token ? "a p2p token pin" :
			   own ? "its table is NVIDIA's" :
			   "not the pinning process, or it is exiting");
	if (!pt)
		return;
	switch (end) {
	case GDRDRV_PUT_GIVEN_UP:
		/* Once per pin: it is never put again. */
		pr_err("put_pages_persistent for handle %llu failed inside the NVIDIA driver (%d), which dropped the GPU reference all the same; giving the pin up: NVIDIA keeps it, and its BAR1 space, until the GPU is reset\n",
		       r->handle, ret);
		fallthrough;
	case GDRDRV_PUT_RELEASED:
		gdrdrv_pin_drop(r);
		return;
	case GDRDRV_PUT_KEPT:
		break;
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
	gdrdrv_region_unpin(f, r, true);
	gdrdrv_region_put(r);		/* the xarray's reference */
	return 0;
}

/*
 * At close, or when the process that opened the fd exits while another (a
 * fork child) still holds it: release every pin, and put again those whose
 * put_pages failed, before or just now (a failure before the driver's lock
 * is a failed allocation, which may pass a moment later; at the last
 * close it is the pin's last chance).  may_put_own: see gdrdrv_may_put.
 */
void gdrdrv_unpin_all(struct gdrdrv_file *f, bool may_put_own)
{
	struct gdrdrv_region *r, *tmp;
	unsigned long handle;
	LIST_HEAD(stuck);

	mutex_lock(&f->lock);
	xa_for_each(&f->regions, handle, r) {
		xa_erase(&f->regions, handle);
		mutex_unlock(&f->lock);

		gdrdrv_region_unpin(f, r, may_put_own);
		gdrdrv_region_put(r);

		mutex_lock(&f->lock);
	}
	list_splice_init(&f->stuck, &stuck);
	mutex_unlock(&f->lock);

	list_for_each_entry_safe(r, tmp, &stuck, stuck) {
		list_del_init(&r->stuck);
		gdrdrv_region_unpin(f, r, may_put_own);
		gdrdrv_region_put(r);
	}
}

/*
 * At the last close, after gdrdrv_unpin_all: a pin whose put_pages failed
 * there too is nobody's to put any more.  A callback-mode pin is left to
 * its callback, charged to f until then; a persistent pin has none, and is
 * given up (NVIDIA keeps it until the GPU is reset).
 */
void gdrdrv_forget_stuck(struct gdrdrv_file *f)
{
	struct gdrdrv_region *r, *tmp;
	bool give_up;

	list_for_each_entry_safe(r, tmp, &f->stuck, stuck) {
		list_del_init(&r->stuck);
		mutex_lock(&r->lock);
		give_up = r->persistent && r->state == GDRDRV_PIN_STUCK;
		if (give_up) {
			r->state = GDRDRV_PIN_GONE;
			r->pt = NULL;
			gdrdrv_pin_count_out(r);
		} else if (r->state == GDRDRV_PIN_STUCK) {
			r->state = GDRDRV_PIN_LEFT;
		}
		mutex_unlock(&r->lock);
		if (give_up) {
			pr_err("handle %llu: put_pages_persistent failed at the last close too; giving the pin up: NVIDIA keeps it until the GPU is reset\n",
			       r->handle);
			gdrdrv_pin_drop(r);
		} else {
			gdrdrv_dbg("handle %llu left to its free callback after failed puts\n",
				   r->handle);
		}
		gdrdrv_region_put(r);
	}
}

