// SPDX-License-Identifier: GPL-2.0 OR MIT
/* proc_pid_ns() takes the proc super block (5.8; before, an inode). */
#include <linux/fs.h>
#include <linux/proc_fs.h>

struct pid_namespace *conftest(struct super_block *sb);
struct pid_namespace *conftest(struct super_block *sb)
{
	return proc_pid_ns(sb);
}
