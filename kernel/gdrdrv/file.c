// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Open and release of /dev/gdrdrv: the per-fd state (its lifetime and the
 * registry that /proc/driver/gdrdrv/pinned reads are registry.c's).
 *
 * Each fd gets its own address_space as filp->f_mapping, so its mappings
 * are found (and zapped) by offset without touching other fds' mappings.
 * Every VMA holds a reference on its file, so release runs only after the
 * last mapping of the fd is gone: the state outlives all of its VMAs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "gdrdrv.h"

static int gdrdrv_open(struct inode *inode, struct file *filp)
{
	struct gdrdrv_file *f;
	int ret;

	if (iminor(inode) != 0)
		return -ENXIO;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	kref_init(&f->ref);
	mutex_init(&f->lock);
#ifdef XA_FLAGS_ACCOUNT
	xa_init_flags(&f->regions, XA_FLAGS_ACCOUNT);	/* charged, as the pins */
#else
	xa_init(&f->regions);
#endif
	INIT_LIST_HEAD(&f->stuck);
	gdrdrv_owner_get(&f->owner);
	f->owner_nr = task_tgid_nr(current);
	f->owner_uid = current_euid();
	atomic64_set(&f->pinned_bytes, 0);
	atomic_set(&f->pins, 0);
	atomic_set(&f->left, 0);

	address_space_init_once(&f->mapping);
	f->mapping.host = inode;
	f->mapping.a_ops = &empty_aops;

	ret = gdrdrv_file_register(f);
	if (ret) {
		gdrdrv_owner_put(&f->owner);
		mutex_destroy(&f->lock);
		kfree(f);
		return ret;
	}
	filp->f_mapping = &f->mapping;
	filp->private_data = f;

	gdrdrv_info("open by tgid %d\n", f->owner_nr);
	return 0;
}

/*
 * Called at every close of a descriptor of the file.  Only the opener may
 * use its pins, so once its last thread exits they are of no use to
 * anyone: release them then, not when a fork child that inherited the
 * descriptor (and can do nothing with it) finally exits.  By the time an
 * exiting process closes its files its mappings are gone.
 *
 * An exiting opener leaves its callback-mode pins to their callbacks
 * (pin.c): by then NVIDIA may no longer find them for it.  Its CUDA
 * library may have freed its NVIDIA clients already, and a pin in an MPS
 * server's memory is found only while the client's pid is registered
 * with the server (RM's NV503C_CTRL_CMD_REGISTER_PID), which freeing the
 * client ends: put_pages would answer 0 and release nothing, its
 * callback into a freed region still to come.
 */
static int gdrdrv_flush(struct file *filp, fl_owner_t id)
{
	struct gdrdrv_file *f = filp->private_data;

	if (f && (current->flags & PF_EXITING) &&
	    !atomic_read(&current->signal->live) &&
	    gdrdrv_file_owned_by_current(f)) {
		gdrdrv_info("tgid %d exited: releasing its pins\n",
			    f->owner_nr);
		gdrdrv_unpin_all(f, false);
	}
	return 0;
}

static int gdrdrv_release(struct inode *inode, struct file *filp)
{
	struct gdrdrv_file *f = filp->private_data;

	if (!f)
		return 0;
	gdrdrv_info("last close, by tgid %d\n", task_tgid_nr(current));

	/*
	 * Elsewhere than in the opener's process (a fork child, a process
	 * the fd was passed to), or in the opener as it exits (see
	 * gdrdrv_flush), callback-mode pins cannot be put: pin.c leaves
	 * them to their callbacks.  Those stay charged to f, which stays
	 * listed until the last of them is released.
	 */
	WRITE_ONCE(f->closed, true);
	gdrdrv_unpin_all(f, gdrdrv_file_owned_by_current(f) &&
			 !(current->flags & PF_EXITING));
	gdrdrv_forget_stuck(f);
	filp->private_data = NULL;
	gdrdrv_file_put(f);
	return 0;
}

const struct file_operations gdrdrv_fops = {
	.owner		= THIS_MODULE,
	.open		= gdrdrv_open,
	.flush		= gdrdrv_flush,
	.release	= gdrdrv_release,
	.unlocked_ioctl	= gdrdrv_ioctl,
	.mmap		= gdrdrv_mmap,
};
