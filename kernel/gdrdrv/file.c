// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Open and release of /dev/gdrdrv: the per-fd state.
 *
 * Each fd gets its own address_space as filp->f_mapping, so its mappings
 * are found (and zapped) by offset without touching other fds' mappings.
 * Every VMA holds a reference on its file, so release runs only after the
 * last mapping of the fd is gone: the state outlives all of its VMAs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/module.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "gdrdrv.h"

static LIST_HEAD(gdrdrv_files);
static DEFINE_MUTEX(gdrdrv_files_lock);

/*
 * GDRCopy lets only the thread group that opened the fd use it: an fd
 * inherited over fork or passed over a socket gets -EACCES.
 */
bool gdrdrv_file_owned_by_current(const struct gdrdrv_file *f)
{
	return gdrdrv_owner_is_current(&f->owner);
}

static int gdrdrv_open(struct inode *inode, struct file *filp)
{
	struct gdrdrv_file *f;

	if (iminor(inode) != 0)
		return -ENXIO;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
#ifdef XA_FLAGS_ACCOUNT
	xa_init_flags(&f->regions, XA_FLAGS_ACCOUNT);	/* charged, as the pins */
#else
	xa_init(&f->regions);
#endif
	INIT_LIST_HEAD(&f->stuck);
	gdrdrv_owner_get(&f->owner);
	f->owner_nr = task_tgid_nr(current);
	atomic64_set(&f->pinned_bytes, 0);
	atomic_set(&f->pins, 0);

	address_space_init_once(&f->mapping);
	f->mapping.host = inode;
	f->mapping.a_ops = &empty_aops;
	filp->f_mapping = &f->mapping;
	filp->private_data = f;

	mutex_lock(&gdrdrv_files_lock);
	list_add_tail(&f->node, &gdrdrv_files);
	mutex_unlock(&gdrdrv_files_lock);

	gdrdrv_info("open by tgid %d\n", f->owner_nr);
	return 0;
}

/*
 * Called at every close of a descriptor of the file.  Only the opener may
 * use its pins, so once its last thread exits they are of no use to
 * anyone: release them then, not when a fork child that inherited the
 * descriptor (and can do nothing with it) finally exits.  By the time an
 * exiting process closes its files its mappings are gone.
 */
static int gdrdrv_flush(struct file *filp, fl_owner_t id)
{
	struct gdrdrv_file *f = filp->private_data;

	if (f && (current->flags & PF_EXITING) &&
	    !atomic_read(&current->signal->live) &&
	    gdrdrv_file_owned_by_current(f)) {
		gdrdrv_info("tgid %d exited: releasing its pins\n",
			    f->owner_nr);
		gdrdrv_unpin_all(f, true);
	}
	return 0;
}

static int gdrdrv_release(struct inode *inode, struct file *filp)
{
	struct gdrdrv_file *f = filp->private_data;

	if (!f)
		return 0;
	gdrdrv_info("last close, by tgid %d\n", task_tgid_nr(current));

	mutex_lock(&gdrdrv_files_lock);
	list_del(&f->node);
	mutex_unlock(&gdrdrv_files_lock);

	/*
	 * Elsewhere than in the opener's process (a fork child, a process
	 * the fd was passed to), callback-mode pins cannot be put: pin.c
	 * leaves them to their callbacks.
	 */
	gdrdrv_unpin_all(f, gdrdrv_file_owned_by_current(f));
	gdrdrv_forget_stuck(f);
	filp->private_data = NULL;
	xa_destroy(&f->regions);
	gdrdrv_owner_put(&f->owner);
	mutex_destroy(&f->lock);
	kfree(f);
	return 0;
}

/* Whether a file before f in the list has f's owner; the files lock held. */
static bool gdrdrv_owner_listed_before(const struct gdrdrv_file *f)
{
	const struct gdrdrv_file *g;

	lockdep_assert_held(&gdrdrv_files_lock);
	list_for_each_entry(g, &gdrdrv_files, node) {
		if (g == f)
			return false;
		if (g->owner_nr == f->owner_nr)
			return true;
	}
	return false;
}

/* /proc/driver/gdrdrv/pinned: "pid bytes pins", one line per process. */
void gdrdrv_files_show(struct seq_file *m)
{
	const struct gdrdrv_file *f, *g;
	u64 bytes;
	int pins;

	mutex_lock(&gdrdrv_files_lock);
	list_for_each_entry(f, &gdrdrv_files, node) {
		if (gdrdrv_owner_listed_before(f))
			continue;
		bytes = 0;
		pins = 0;
		list_for_each_entry(g, &gdrdrv_files, node) {
			if (g->owner_nr == f->owner_nr) {
				bytes += atomic64_read(&g->pinned_bytes);
				pins += atomic_read(&g->pins);
			}
		}
		seq_printf(m, "%d %llu %d\n", f->owner_nr, bytes, pins);
		cond_resched();	/* quadratic in open files, readable by all */
	}
	mutex_unlock(&gdrdrv_files_lock);
}

const struct file_operations gdrdrv_fops = {
	.owner		= THIS_MODULE,
	.open		= gdrdrv_open,
	.flush		= gdrdrv_flush,
	.release	= gdrdrv_release,
	.unlocked_ioctl	= gdrdrv_ioctl,
	.mmap		= gdrdrv_mmap,
};
