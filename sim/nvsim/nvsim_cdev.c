// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: /dev/nvsim (simulated GPU, not real hardware), the misc device
 * through which gdrmap's libcuda shim gets device memory.  An open fd is
 * one address space of the opening process (nvsim_ctx.c); its ioctls are
 * in nvsim_ioctl.c; pread/pwrite copy device memory, the offset being
 * the device address.
 */
#include <linux/fs.h>
#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nvsim.h"

/* pread/pwrite: offset = device virtual address. */
static ssize_t nvsim_rw(struct file *file, char __user *ubuf, size_t len,
			loff_t *ppos, bool write)
{
	struct nvsim_ctx *ctx = file->private_data;
	struct nvsim_mapping *map;
	u64 va = *ppos;
	size_t done = 0, n;
	void *bounce;
	ssize_t ret = 0;

	if (current->mm != ctx->mm)
		return -EACCES;
	if (!len)
		return 0;

	mutex_lock(&nvsim_lock);
	map = nvsim_find_map(ctx, va, len);
	mutex_unlock(&nvsim_lock);
	if (!map)
		return -EFAULT;

	bounce = kvmalloc(min_t(u64, len, NVSIM_CHUNK), GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;

	/* Page by page, user copies outside the lock. */
	while (done < len) {
		n = min_t(u64, len - done, nvsim_page_left(va + done));
		if (write && copy_from_user(bounce, ubuf + done, n)) {
			ret = -EFAULT;
			break;
		}
		mutex_lock(&nvsim_lock);
		map = nvsim_find_map(ctx, va + done, n);
		if (map && write) {
			memcpy_toio(nvsim_map_io(map, va + done), bounce, n);
			wmb();	/* drain WC buffers */
		} else if (map) {
			memcpy_fromio(bounce, nvsim_map_io(map, va + done), n);
		}
		mutex_unlock(&nvsim_lock);
		if (!map) {
			ret = -EFAULT;
			break;
		}
		if (!write && copy_to_user(ubuf + done, bounce, n)) {
			ret = -EFAULT;
			break;
		}
		done += n;
		cond_resched();
	}
	kvfree(bounce);
	if (done) {
		*ppos += done;
		ret = done;
	}
	return ret;
}

static ssize_t nvsim_read(struct file *file, char __user *buf, size_t len,
			  loff_t *ppos)
{
	return nvsim_rw(file, buf, len, ppos, false);
}

static ssize_t nvsim_write(struct file *file, const char __user *buf,
			   size_t len, loff_t *ppos)
{
	return nvsim_rw(file, (char __user *)buf, len, ppos, true);
}

static int nvsim_open(struct inode *inode, struct file *file)
{
	struct nvsim_ctx *ctx = nvsim_ctx_create();

	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	file->private_data = ctx;
	return 0;
}

static int nvsim_release(struct inode *inode, struct file *file)
{
	nvsim_ctx_destroy(file->private_data);
	return 0;
}

static const struct file_operations nvsim_fops = {
	.owner = THIS_MODULE,
	.open = nvsim_open,
	.release = nvsim_release,
	.unlocked_ioctl = nvsim_ioctl,
	.read = nvsim_read,
	.write = nvsim_write,
	.llseek = default_llseek,
};

static struct miscdevice nvsim_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nvsim",
	.fops = &nvsim_fops,
	.mode = 0666,
};

int nvsim_cdev_register(void)
{
	return misc_register(&nvsim_misc);
}

void nvsim_cdev_unregister(void)
{
	misc_deregister(&nvsim_misc);
}
