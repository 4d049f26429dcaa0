// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gdrdrv module entry points and parameters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/uidgid.h>

#include "gdrdrv.h"

int gdrdrv_dbg_enabled;
module_param_named(dbg_enabled, gdrdrv_dbg_enabled, int, 0644);
MODULE_PARM_DESC(dbg_enabled, "Log debug messages (default 0)");

int gdrdrv_info_enabled;
module_param_named(info_enabled, gdrdrv_info_enabled, int, 0644);
MODULE_PARM_DESC(info_enabled, "Log informational messages (default 0)");

static int use_persistent_mapping = 1;
module_param(use_persistent_mapping, int, 0444);
MODULE_PARM_DESC(use_persistent_mapping,
		 "Pin with nvidia_p2p_get_pages_persistent (1, default) or with nvidia_p2p_get_pages and a free callback (0)");

static ushort dev_mode = GDRDRV_DEFAULT_DEV_MODE;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode,
		 "Permissions of /dev/gdrdrv as devtmpfs creates it (default 0666, as GDRCopy's scripts)");

static uint dev_gid;
module_param(dev_gid, uint, 0444);
MODULE_PARM_DESC(dev_gid,
		 "Group (number) of /dev/gdrdrv as devtmpfs creates it (default 0, root)");

static unsigned long long max_pin_size;
module_param(max_pin_size, ullong, 0444);
MODULE_PARM_DESC(max_pin_size,
		 "Largest pin in bytes (default 0: the largest PCI memory BAR, on arm64/POWER or all RAM)");

unsigned long long gdrdrv_max_pinned_per_file;
module_param_named(max_pinned_per_file, gdrdrv_max_pinned_per_file, ullong,
		   0644);
MODULE_PARM_DESC(max_pinned_per_file,
		 "Bytes one open /dev/gdrdrv may hold pinned (default 0: no limit, as GDRCopy)");

/*
 * Off by default, unlike GDRCopy: NVIDIA's tokens are guessable, and a
 * token pin can only be left to its callback (pin.c).  gdrdrv(4) says
 * what a site gives up.
 */
bool gdrdrv_allow_p2p_tokens;
module_param_named(allow_p2p_tokens, gdrdrv_allow_p2p_tokens, bool, 0644);
MODULE_PARM_DESC(allow_p2p_tokens,
		 "Honour PIN_BUFFER's p2p_token/va_space, which name another process's GPU memory, in callback mode (default 0; GDRCopy always does)");

bool gdrdrv_persistent;

static int __init gdrdrv_init(void)
{
	int ret;

	if (dev_mode & ~0777) {
		pr_err("dev_mode %#o is not a permission mode\n", dev_mode);
		return -EINVAL;
	}
	if (!gid_valid(KGIDT_INIT(dev_gid))) {
		pr_err("dev_gid %u is not a group\n", dev_gid);
		return -EINVAL;
	}
#ifdef GDRDRV_NV_PROPRIETARY
	/* No device node is made here (node.c): nothing to apply them to. */
	if (dev_mode != GDRDRV_DEFAULT_DEV_MODE || dev_gid) {
		pr_err("dev_mode=%#o dev_gid=%u: the proprietary flavour makes no device node, so it cannot apply them; load it without them and give the node its mode and group where it is made (mknod -m MODE, chgrp)\n",
		       dev_mode, dev_gid);
		return -EINVAL;
	}
#endif
	gdrdrv_persistent = use_persistent_mapping && GDRDRV_HAVE_PERSISTENT;
	if (use_persistent_mapping && !gdrdrv_persistent)
		pr_warn("built without the persistent nvidia_p2p API; pins use free callbacks\n");

	gdrdrv_platform_init();
	gdrdrv_limits_init(max_pin_size);
	ret = gdrdrv_node_create(dev_mode, dev_gid);
	if (ret)
		return ret;
	gdrdrv_proc_init();

	pr_info("version %s for the %s NVIDIA driver, %s pins\n",
		GDRDRV_VERSION_STRING, GDRDRV_NV_FLAVOR,
		gdrdrv_persistent ? "persistent" : "callback");
	return 0;
}

static void __exit gdrdrv_exit(void)
{
	int pins;

	gdrdrv_proc_exit();
	gdrdrv_node_destroy();
	/* Every pin held the module: all are released, their callbacks done. */
	gdrdrv_pin_exit();

	pins = atomic_read(&gdrdrv_pin_count);
	WARN(pins != 0, "gdrdrv: %d NVIDIA pins still held at unload\n", pins);
}

module_init(gdrdrv_init);
module_exit(gdrdrv_exit);

MODULE_LICENSE("Dual MIT/GPL");
MODULE_VERSION(GDRDRV_VERSION_STRING);
MODULE_DESCRIPTION("gdrmap gdrdrv: CPU mappings of GPU memory (GDRCopy 2.x ABI), built for the "
		   GDRDRV_NV_FLAVOR " NVIDIA driver");
MODULE_AUTHOR("gdrmap developers");
