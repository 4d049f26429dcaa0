// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: /proc/driver/nvsim (simulated GPU, not real hardware), the
 * counters that prove nothing leaked: those of every GPU summed, and each
 * GPU's own in gpuN/.  A file's data is its GPU, NULL for the sums.  The
 * test hook's file (nvsim_hooks.c) is made here too.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/kstrtox.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "nvsim.h"

static struct proc_dir_entry *nvsim_proc_dir;

#define NVSIM_SHOW(name, field)						\
static int nvsim_show_##name(struct seq_file *m, void *v)		\
{									\
	struct nvsim_snapshot s;					\
									\
	nvsim_snapshot(m->private, &s);					\
	seq_printf(m, "%lu\n", s.field);				\
	return 0;							\
}

NVSIM_SHOW(outstanding_pins, c.outstanding_pins)
NVSIM_SHOW(persistent_pins, c.persistent_pins)
NVSIM_SHOW(pinned_pages, c.pinned_pages)
NVSIM_SHOW(callbacks_fired, c.callbacks_fired)
NVSIM_SHOW(allocations, c.allocations)
NVSIM_SHOW(dmabufs, c.dmabufs)
NVSIM_SHOW(used_pages, used_pages)
NVSIM_SHOW(gpu_refs, c.gpu_refs)
NVSIM_SHOW(abandoned_pins, c.abandoned_pins)

static int nvsim_show_stats(struct seq_file *m, void *v)
{
	struct nvsim_p2p_counters p;
	struct nvsim_snapshot s;

	nvsim_snapshot(m->private, &s);
	seq_printf(m, "outstanding_pins: %lu\n", s.c.outstanding_pins);
	seq_printf(m, "persistent_pins: %lu\n", s.c.persistent_pins);
	seq_printf(m, "pinned_pages: %lu\n", s.c.pinned_pages);
	seq_printf(m, "callbacks_fired: %lu\n", s.c.callbacks_fired);
	seq_printf(m, "allocations: %lu\n", s.c.allocations);
	seq_printf(m, "dmabufs: %lu\n", s.c.dmabufs);
	seq_printf(m, "used_pages: %lu\n", s.used_pages);
	seq_printf(m, "total_pages: %lu\n", s.total_pages);
	seq_printf(m, "get_pages_calls: %lu\n", s.c.get_pages_calls);
	seq_printf(m, "put_pages_calls: %lu\n", s.c.put_pages_calls);
	seq_printf(m, "gpu_refs: %lu\n", s.c.gpu_refs);
	seq_printf(m, "abandoned_pins: %lu\n", s.c.abandoned_pins);
	seq_printf(m, "resets: %lu\n", s.c.resets);
	/* The API's own, not any GPU's: in the sums only. */
	if (!m->private) {
		nvsim_p2p_snapshot(&p);
		seq_printf(m, "get_pages_requests: %lu\n", p.get_pages_requests);
		seq_printf(m, "put_pages_requests: %lu\n", p.put_pages_requests);
		seq_printf(m, "stale_puts: %lu\n", p.stale_puts);
		seq_printf(m, "recycled_tables: %lu\n", p.recycled_tables);
		seq_printf(m, "foreign_puts: %lu\n", p.foreign_puts);
		seq_printf(m, "double_frees: %lu\n", p.double_frees);
		seq_printf(m, "use_after_free: %lu\n", p.use_after_free);
		seq_printf(m, "failed_puts: %lu\n", p.failed_puts);
		seq_printf(m, "rm_failed_puts: %lu\n", p.rm_failed_puts);
		seq_printf(m, "late_failed_gets: %lu\n", p.late_failed_gets);
		seq_printf(m, "gpu_ref_underflows: %lu\n",
			   p.gpu_ref_underflows);
	}
	return 0;
}

static const struct {
	const char *name;
	int (*show)(struct seq_file *m, void *v);
} nvsim_proc_files[] = {
	{ "outstanding_pins", nvsim_show_outstanding_pins },
	{ "persistent_pins", nvsim_show_persistent_pins },
	{ "pinned_pages", nvsim_show_pinned_pages },
	{ "callbacks_fired", nvsim_show_callbacks_fired },
	{ "allocations", nvsim_show_allocations },
	{ "dmabufs", nvsim_show_dmabufs },
	{ "used_pages", nvsim_show_used_pages },
	{ "gpu_refs", nvsim_show_gpu_refs },
	{ "abandoned_pins", nvsim_show_abandoned_pins },
	{ "stats", nvsim_show_stats },
};

static void nvsim_proc_fill(struct proc_dir_entry *dir, struct nvsim_dev *gpu)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nvsim_proc_files); i++)
		proc_create_single_data(nvsim_proc_files[i].name, 0444, dir,
					nvsim_proc_files[i].show, gpu);
}

/* reset: writing a GPU's index resets it, or fails with EBUSY. */
static ssize_t nvsim_reset_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *pos)
{
	unsigned int index;
	int ret;

	ret = kstrtouint_from_user(ubuf, len, 10, &index);
	if (ret)
		return ret;
	ret = nvsim_gpu_reset(index);
	return ret ? ret : len;
}

static const struct proc_ops nvsim_reset_ops = {
	.proc_write = nvsim_reset_write,
	.proc_lseek = noop_llseek,
};

/* gpuN/ of a new GPU; nothing when /proc/driver/nvsim is missing. */
void nvsim_proc_gpu_add(struct nvsim_dev *gpu)
{
	char name[16];

	if (!nvsim_proc_dir)
		return;
	snprintf(name, sizeof(name), "gpu%u", gpu->index);
	gpu->proc = proc_mkdir(name, nvsim_proc_dir);
	if (gpu->proc)
		nvsim_proc_fill(gpu->proc, gpu);
	else
		pr_warn("cannot create /proc/driver/nvsim/%s\n", name);
}

/* Waits for the readers of gpu's counters. */
void nvsim_proc_gpu_remove(struct nvsim_dev *gpu)
{
	proc_remove(gpu->proc);
}

/* Before any GPU: their directories go into it as they are probed. */
void nvsim_proc_init(void)
{
	nvsim_proc_dir = proc_mkdir("driver/nvsim", NULL);
	if (!nvsim_proc_dir) {
		pr_warn("cannot create /proc/driver/nvsim\n");
		return;
	}
	nvsim_proc_fill(nvsim_proc_dir, NULL);
	if (!proc_create("reset", 0200, nvsim_proc_dir, &nvsim_reset_ops))
		pr_warn("cannot create /proc/driver/nvsim/reset\n");
	nvsim_hooks_proc_init(nvsim_proc_dir);
}

void nvsim_proc_exit(void)
{
	proc_remove(nvsim_proc_dir);
}
