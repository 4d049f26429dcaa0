// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Open and release of /dev/gdrdrv: the per-fd state, and the registry of
 * open files that /proc/driver/gdrdrv/pinned reads.
 *
 * Each fd gets its own address_space as filp->f_mapping, so its mappings
 * are found (and zapped) by offset without touching other fds' mappings.
 * Every VMA holds a reference on its file, so release runs only after the
 * last mapping of the fd is gone: the state outlives all of its VMAs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/xarray.h>

#include "gdrdrv.h"

/*
 * Every open file, by an id of its own.  A reader of /proc takes the
 * xarray's spinlock for one file at a time, so an open or a close never
 * waits for a whole walk; a file leaves it before it is freed.
 */
static DEFINE_XARRAY(gdrdrv_files);
static atomic_long_t gdrdrv_last_file_id = ATOMIC_LONG_INIT(0);
static atomic_t gdrdrv_nr_files = ATOMIC_INIT(0);

static int gdrdrv_open(struct inode *inode, struct file *filp)
{
	struct gdrdrv_file *f;
	int ret;

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
	f->owner_uid = current_euid();
	atomic64_set(&f->pinned_bytes, 0);
	atomic_set(&f->pins, 0);

	address_space_init_once(&f->mapping);
	f->mapping.host = inode;
	f->mapping.a_ops = &empty_aops;

	f->id = atomic_long_inc_return(&gdrdrv_last_file_id);
	ret = xa_insert(&gdrdrv_files, f->id, f, GFP_KERNEL);
	if (ret) {
		gdrdrv_owner_put(&f->owner);
		mutex_destroy(&f->lock);
		kfree(f);
		return ret;
	}
	atomic_inc(&gdrdrv_nr_files);
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

	xa_erase(&gdrdrv_files, f->id);
	atomic_dec(&gdrdrv_nr_files);

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

/* One process's line of /proc/driver/gdrdrv/pinned. */
struct gdrdrv_pinned_line {
	pid_t pid;
	int pins;
	u64 bytes;
};

static int gdrdrv_line_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct gdrdrv_pinned_line *)a)->pid;
	pid_t y = ((const struct gdrdrv_pinned_line *)b)->pid;

	return (x > y) - (x < y);
}

/*
 * The pid by which the reader sees the opener of f, or 0 if it may not:
 * root (uid 0 of the initial user namespace) sees every user's processes,
 * another user only its own, each by its pid in the reader's pid
 * namespace and only if that namespace has it.  cred: the credentials
 * the /proc file was opened with.
 */
static pid_t gdrdrv_visible_pid(const struct gdrdrv_file *f,
				const struct cred *cred)
{
	if (!uid_eq(cred->euid, GLOBAL_ROOT_UID) &&
	    !uid_eq(cred->euid, f->owner_uid))
		return 0;
	return gdrdrv_owner_nr_seen(&f->owner);
}

/*
 * /proc/driver/gdrdrv/pinned: "pid bytes pins", one line per process
 * with the device open.  The files are copied one at a time, then summed
 * by process.
 */
int gdrdrv_files_show(struct seq_file *m)
{
	const struct cred *cred = m->file->f_cred;
	struct gdrdrv_pinned_line *lines;
	const struct gdrdrv_file *f;
	unsigned long id = 0;
	size_t n = 0, max, i, j;
	u64 bytes;
	pid_t pid;
	int pins;

	/* Room for the files open now, and some opened during the walk. */
	max = (size_t)atomic_read(&gdrdrv_nr_files) + 16;
	lines = kvmalloc_array(max, sizeof(*lines), GFP_KERNEL);
	if (!lines)
		return -ENOMEM;
	while (n < max) {
		xa_lock(&gdrdrv_files);
		f = xa_find(&gdrdrv_files, &id, ULONG_MAX, XA_PRESENT);
		pid = f ? gdrdrv_visible_pid(f, cred) : 0;
		if (pid) {
			lines[n].pid = pid;
			lines[n].bytes = atomic64_read(&f->pinned_bytes);
			lines[n].pins = atomic_read(&f->pins);
			n++;
		}
		xa_unlock(&gdrdrv_files);
		if (!f)
			break;
		id++;
		cond_resched();
	}

	sort(lines, n, sizeof(*lines), gdrdrv_line_cmp, NULL);
	for (i = 0; i < n; i = j) {
		bytes = 0;
		pins = 0;
		for (j = i; j < n && lines[j].pid == lines[i].pid; j++) {
			bytes += lines[j].bytes;
			pins += lines[j].pins;
		}
		seq_printf(m, "%d %llu %d\n", lines[i].pid, bytes, pins);
	}
	kvfree(lines);
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
