// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The registry of files, and their lifetime: what
 * /proc/driver/gdrdrv/pinned reads.
 *
 * A file is listed from its open until its last reference goes: the open
 * file's, or that of the last NVIDIA pin made through it that is not yet
 * released.  A pin can outlive the file's last close (left to its free
 * callback, or kept after a failed put_pages; pin.c), and it stays charged
 * to the file and shown under the file's opener until NVIDIA lets it go,
 * so that pins nobody can unpin any more are seen and counted against
 * max_pinned_per_file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/xarray.h>

#include "gdrdrv.h"

/*
 * Every file, by an id of its own.  A reader of /proc takes the xarray's
 * spinlock for one file at a time, so an open or a close never waits for
 * a whole walk; a file leaves it before it is freed.
 */
static DEFINE_XARRAY(gdrdrv_files);
static atomic_long_t gdrdrv_last_file_id = ATOMIC_LONG_INIT(0);
static atomic_t gdrdrv_nr_files = ATOMIC_INIT(0);

/* Lists a new file (its reference count initialised: the open file's). */
int gdrdrv_file_register(struct gdrdrv_file *f)
{
	int ret;

	f->id = atomic_long_inc_return(&gdrdrv_last_file_id);
	ret = xa_insert(&gdrdrv_files, f->id, f, GFP_KERNEL);
	if (!ret)
		atomic_inc(&gdrdrv_nr_files);
	return ret;
}

static void gdrdrv_file_free(struct kref *ref)
{
	struct gdrdrv_file *f = container_of(ref, struct gdrdrv_file, ref);

	xa_erase(&gdrdrv_files, f->id);
	atomic_dec(&gdrdrv_nr_files);
	WARN_ON(atomic_read(&f->pins) || atomic_read(&f->left));
	xa_destroy(&f->regions);
	gdrdrv_owner_put(&f->owner);
	mutex_destroy(&f->lock);
	kfree(f);
}

void gdrdrv_file_get(struct gdrdrv_file *f)
{
	kref_get(&f->ref);
}

/*
 * May free f: from the free callback too, which holds NVIDIA's locks;
 * freeing takes only the registry's spinlock.
 */
void gdrdrv_file_put(struct gdrdrv_file *f)
{
	kref_put(&f->ref, gdrdrv_file_free);
}

/* One process's line of /proc/driver/gdrdrv/pinned. */
struct gdrdrv_pinned_line {
	pid_t pid;
	int pins;
	int left;
	u64 bytes;
};

static int gdrdrv_line_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct gdrdrv_pinned_line *)a)->pid;
	pid_t y = ((const struct gdrdrv_pinned_line *)b)->pid;

	return (x > y) - (x < y);
}

/*
 * The pid by which the /proc file shows the opener of f, or 0 if it may
 * not: root (uid 0 of the initial user namespace) sees every user's
 * processes, another user only its own, each by its pid in the pid
 * namespace of the procfs the file is in, and only if that namespace has
 * it.  Both come from the /proc file, not from the task reading it, so a
 * descriptor passed to another process shows what it showed its opener.
 * A closed file is shown only while pins made through it remain.
 */
static pid_t gdrdrv_visible_pid(const struct gdrdrv_file *f,
				const struct cred *cred,
				struct pid_namespace *ns)
{
	if (READ_ONCE(f->closed) && !atomic_read(&f->pins))
		return 0;
	if (!uid_eq(cred->euid, GLOBAL_ROOT_UID) &&
	    !uid_eq(cred->euid, f->owner_uid))
		return 0;
	return gdrdrv_owner_nr_seen(&f->owner, ns);
}

/* A copy of lines with room for twice as many; NULL if none can be had. */
static struct gdrdrv_pinned_line *gdrdrv_lines_grow(
	struct gdrdrv_pinned_line *lines, size_t n, size_t *max)
{
	struct gdrdrv_pinned_line *more;

	if (*max > SIZE_MAX / 2 / sizeof(*lines))
		return NULL;
	more = kvmalloc_array(*max * 2, sizeof(*lines), GFP_KERNEL);
	if (!more)
		return NULL;
	memcpy(more, lines, n * sizeof(*lines));
	kvfree(lines);
	*max *= 2;
	return more;
}

/*
 * /proc/driver/gdrdrv/pinned: "pid bytes pins left", one line per
 * process with the device open or pins made through it not yet released.
 * The files are copied one at a time, then summed by process; files
 * opened during the walk get room as they come.
 */
int gdrdrv_files_show(struct seq_file *m)
{
	struct pid_namespace *ns = gdrdrv_proc_pid_ns(m->file);
	const struct cred *cred = m->file->f_cred;
	struct gdrdrv_pinned_line *lines, *more;
	const struct gdrdrv_file *f;
	unsigned long id = 0;
	size_t n = 0, max, i, j;
	int pins, left;
	u64 bytes;
	pid_t pid;

	max = (size_t)atomic_read(&gdrdrv_nr_files) + 16;
	lines = kvmalloc_array(max, sizeof(*lines), GFP_KERNEL);
	if (!lines)
		return -ENOMEM;
	for (;;) {
		if (n == max) {
			more = gdrdrv_lines_grow(lines, n, &max);
			if (!more) {
				kvfree(lines);
				return -ENOMEM;
			}
			lines = more;
		}
		xa_lock(&gdrdrv_files);
		f = xa_find(&gdrdrv_files, &id, ULONG_MAX, XA_PRESENT);
		pid = f ? gdrdrv_visible_pid(f, cred, ns) : 0;
		if (pid) {
			lines[n].pid = pid;
			lines[n].bytes = atomic64_read(&f->pinned_bytes);
			lines[n].pins = atomic_read(&f->pins);
			lines[n].left = atomic_read(&f->left);
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
		left = 0;
		for (j = i; j < n && lines[j].pid == lines[i].pid; j++) {
			bytes += lines[j].bytes;
			pins += lines[j].pins;
			left += lines[j].left;
		}
		seq_printf(m, "%d %llu %d %d\n", lines[i].pid, bytes, pins, left);
	}
	kvfree(lines);
	return 0;
}
