// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * /proc/driver/gdrdrv: "params" (as GDRCopy 2.5+ has it),
 * "nv_get_pages_refcount", the count of NVIDIA pins not yet released,
 * which GDRCopy offers only with dbg_enabled and gdrdrv always does, so
 * that tests can check that nothing leaked (root's only, as GDRCopy's:
 * it tells when other users pin), and "pinned", the bytes and pins each
 * process holds, as far as the reader may see them (registry.c).
 * Failures here are not fatal.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "gdrdrv.h"

static struct proc_dir_entry *gdrdrv_proc_dir;

static int gdrdrv_params_show(struct seq_file *m, void *v)
{
	seq_printf(m, "Version: %s\n", GDRDRV_VERSION_STRING);
	seq_printf(m, "Built for NVIDIA driver flavor: %s\n", GDRDRV_NV_FLAVOR);
	seq_printf(m, "Use persistent mapping: %s\n",
		   gdrdrv_persistent ? "yes" : "no");
	seq_printf(m, "dbg_enabled: %d\n", gdrdrv_dbg_enabled);
	seq_printf(m, "info_enabled: %d\n", gdrdrv_info_enabled);
	return 0;
}

static int gdrdrv_refcount_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%d\n", atomic_read(&gdrdrv_pin_count));
	return 0;
}

static int gdrdrv_pinned_show(struct seq_file *m, void *v)
{
	return gdrdrv_files_show(m);
}

void gdrdrv_proc_init(void)
{
	gdrdrv_proc_dir = proc_mkdir("driver/" GDRDRV_NAME, NULL);
	if (!gdrdrv_proc_dir) {
		pr_warn("cannot create /proc/driver/%s\n", GDRDRV_NAME);
		return;
	}
	if (!proc_create_single("params", 0444, gdrdrv_proc_dir,
				gdrdrv_params_show))
		pr_warn("cannot create /proc/driver/%s/params\n", GDRDRV_NAME);
	if (!proc_create_single("nv_get_pages_refcount", 0440,
				gdrdrv_proc_dir, gdrdrv_refcount_show))
		pr_warn("cannot create /proc/driver/%s/nv_get_pages_refcount\n",
			GDRDRV_NAME);
	if (!proc_create_single("pinned", 0444, gdrdrv_proc_dir,
				gdrdrv_pinned_show))
		pr_warn("cannot create /proc/driver/%s/pinned\n", GDRDRV_NAME);
}

void gdrdrv_proc_exit(void)
{
	proc_remove(gdrdrv_proc_dir);
}
