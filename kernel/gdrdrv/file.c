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
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "gdrdrv.h"

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

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	xa_init(&f->regions);
	gdrdrv_owner_get(&f->owner);

	address_space_init_once(&f->mapping);
	f->mapping.host = inode;
	f->mapping.a_ops = &empty_aops;
	filp->f_mapping = &f->mapping;
	filp->private_data = f;

	gdrdrv_info("open by tgid %d\n", task_tgid_nr(current));
	return 0;
}

static int gdrdrv_release(struct inode *inode, struct file *filp)
{
	struct gdrdrv_file *f = filp->private_data;

	if (!f)
		return 0;
	gdrdrv_info("last close, by tgid %d\n", task_tgid_nr(current));

	gdrdrv_unpin_all(f);
	filp->private_data = NULL;
	xa_destroy(&f->regions);
	gdrdrv_owner_put(&f->owner);
	mutex_destroy(&f->lock);
	kfree(f);
	return 0;
}

const struct file_operations gdrdrv_fops = {
	.owner		= THIS_MODULE,
	.open		= gdrdrv_open,
	.release	= gdrdrv_release,
	.unlocked_ioctl	= gdrdrv_ioctl,
	.mmap		= gdrdrv_mmap,
};
