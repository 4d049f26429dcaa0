// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim_selftest: a test client of the nvidia_p2p_* API of nvsim (gdrmap's
 * simulated GPU), driven from user space by sim/tests/vm_p2p.c.  Test
 * tool only: never load it outside a test VM.
 *
 * Commands, written to /proc/driver/nvsim_selftest by the process that
 * owns the device memory (addresses are its CUDA device pointers):
 *   check VA LEN    argument checks and a pin/unpin round trip on
 *                   [VA, VA+LEN); the write fails with EIO if any fails
 *   pin VA LEN      non-persistent pin into the single slot
 *   ppin VA LEN     persistent pin into the slot
 *   unpin           put_pages / put_pages_persistent of the slot (even
 *                   after its callback ran: nvsim must answer 0); the
 *                   slot keeps a pin whose put failed
 *   forget          empties the slot without a put (a persistent pin
 *                   whose put failed inside RM must not be put again)
 * Reading the file gives "pinned P persistent Q callbacks N put_rc R
 * entries E peek XXXXXXXXXXXXXXXX uuid U phys A": the first 8 bytes of
 * the slot's first page, read through its physical address A (hex), and
 * the GPU UUID of its page table (32 hex digits), which tell which
 * simulated GPU nvidia_p2p_get_pages found the address on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nv-p2p.h"

static DEFINE_MUTEX(st_lock);
static struct proc_dir_entry *st_entry;

static struct {
	struct nvidia_p2p_page_table *pt;
	u64 va;
	bool persistent;
	bool cb_fired;		/* the table is gone */
	int put_rc;
	u32 entries;
	u64 phys0;
	u8 uuid[NVIDIA_P2P_GPU_UUID_LEN];
} slot;
static atomic_t st_callbacks = ATOMIC_INIT(0);

static void st_free_callback(void *data)
{
	/* Runs with nvsim's lock held: no nvidia_p2p_* calls here. */
	WRITE_ONCE(slot.cb_fired, true);
	atomic_inc(&st_callbacks);
}

static void st_dummy_callback(void *data)
{
	atomic_inc(&st_callbacks);
}

#define EXPECT(cond) \
	do { if (!(cond)) { pr_err("check failed: %s\n", #cond); bad++; } } while (0)

static int st_check(u64 va, u64 len)
{
	struct nvidia_p2p_page_table *pt = NULL;
	struct nvidia_p2p_dma_mapping *dm = NULL;
	const u64 pg = 0x10000;
	int bad = 0, ret;
	u32 i;

	EXPECT(nvidia_p2p_get_pages(0, 0, va, len, &pt, NULL, NULL) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages(0, 0, va + 0x1000, len, &pt,
				    st_dummy_callback, NULL) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages(0, 0, va, len - 0x1000, &pt,
				    st_dummy_callback, NULL) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages(0, 0, va, 0, &pt, st_dummy_callback,
				    NULL) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages(0, 0, va, len + pg, &pt,
				    st_dummy_callback, NULL) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages(0, 0, va - pg, len, &pt,
				    st_dummy_callback, NULL) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages(0, 0, ~0ULL << 16, 2 * pg, &pt,
				    st_dummy_callback, NULL) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages(1, 2, va, len, &pt, st_dummy_callback,
				    NULL) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages_persistent(va, len, &pt,
					       NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING) ==
	       -ENOTSUPP);
	EXPECT(nvidia_p2p_get_pages_persistent(va, len, &pt, 2) == -EINVAL);
	EXPECT(nvidia_p2p_get_pages_persistent(va + 0x1000, len, &pt, 0) ==
	       -EINVAL);
	EXPECT(nvidia_p2p_put_pages(0, 0, va, NULL) == 0);
	EXPECT(nvidia_p2p_put_pages_persistent(va, NULL, 0) == 0);
	EXPECT(nvidia_p2p_free_page_table(NULL) == 0);
	EXPECT(nvidia_p2p_free_dma_mapping(NULL) == 0);

	/* A good non-persistent pin. */
	ret = nvidia_p2p_get_pages(0, 0, va, len, &pt, st_dummy_callback, NULL);
	EXPECT(ret == 0);
	if (!ret) {
		EXPECT(pt->version == NVIDIA_P2P_PAGE_TABLE_VERSION);
		EXPECT(pt->page_size == NVIDIA_P2P_PAGE_SIZE_64KB);
		EXPECT(pt->entries == len / pg);
		EXPECT(pt->gpu_uuid);
		for (i = 0; i < pt->entries; i++)
			EXPECT(pt->pages[i] &&
			       !(pt->pages[i]->physical_address & (pg - 1)));
		EXPECT(nvidia_p2p_dma_map_pages(NULL, pt, &dm) == -EINVAL);
		EXPECT(nvidia_p2p_put_pages(0, 0, va, pt) == 0);
	}

	/* A good persistent pin, and one of a sub-range. */
	ret = nvidia_p2p_get_pages_persistent(va, len, &pt, 0);
	EXPECT(ret == 0);
	if (!ret) {
		EXPECT(pt->entries == len / pg);
		EXPECT(nvidia_p2p_put_pages_persistent(va, pt, 1) == -EINVAL);
		/* The wrong put finds nothing and releases nothing. */
		EXPECT(nvidia_p2p_put_pages(0, 0, va, pt) == 0);
		EXPECT(nvidia_p2p_put_pages_persistent(va, pt, 0) == 0);
	}
	if (len > pg) {
		ret = nvidia_p2p_get_pages_persistent(va + pg, len - pg, &pt, 0);
		EXPECT(ret == 0);
		if (!ret)
			EXPECT(nvidia_p2p_put_pages_persistent(va + pg, pt,
							       0) == 0);
	}
	return bad ? -EIO : 0;
}

static int st_pin(u64 va, u64 len, bool persistent)
{
	int ret;

	if (slot.pt && !slot.cb_fired)
		return -EBUSY;
	memset(&slot, 0, sizeof(slot));
	if (persistent)
		ret = nvidia_p2p_get_pages_persistent(va, len, &slot.pt, 0);
	else
		ret = nvidia_p2p_get_pages(0, 0, va, len, &slot.pt,
					   st_free_callback, NULL);
	if (ret) {
		slot.pt = NULL;
		return ret;
	}
	slot.va = va;
	slot.persistent = persistent;
	slot.entries = slot.pt->entries;
	slot.phys0 = slot.pt->pages[0]->physical_address;
	memcpy(slot.uuid, slot.pt->gpu_uuid, sizeof(slot.uuid));
	return 0;
}

static int st_unpin(void)
{
	if (!slot.pt)
		return -ENOENT;
	/* After the callback the table is gone; nvsim must still say 0. */
	if (slot.persistent)
		slot.put_rc = nvidia_p2p_put_pages_persistent(slot.va, slot.pt, 0);
	else
		slot.put_rc = nvidia_p2p_put_pages(0, 0, slot.va, slot.pt);
	/* A failed put released nothing: the pin may be put again. */
	if (!slot.put_rc)
		slot.pt = NULL;
	return 0;
}

static int st_forget(void)
{
	if (!slot.pt)
		return -ENOENT;
	slot.pt = NULL;
	return 0;
}

static ssize_t st_write(struct file *file, const char __user *ubuf,
			size_t len, loff_t *ppos)
{
	char buf[96], cmd[16];
	u64 va = 0, size = 0;
	int ret, n;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	n = sscanf(buf, "%15s %llx %llx", cmd, &va, &size);
	if (n < 1)
		return -EINVAL;

	mutex_lock(&st_lock);
	if (!strcmp(cmd, "check") && n == 3)
		ret = st_check(va, size);
	else if (!strcmp(cmd, "pin") && n == 3)
		ret = st_pin(va, size, false);
	else if (!strcmp(cmd, "ppin") && n == 3)
		ret = st_pin(va, size, true);
	else if (!strcmp(cmd, "unpin"))
		ret = st_unpin();
	else if (!strcmp(cmd, "forget"))
		ret = st_forget();
	else
		ret = -EINVAL;
	mutex_unlock(&st_lock);
	return ret ? ret : len;
}

static int st_show(struct seq_file *m, void *v)
{
	u64 peek = 0;
	void *p;

	mutex_lock(&st_lock);
	if (slot.pt && (slot.persistent || !READ_ONCE(slot.cb_fired))) {
		p = memremap(slot.phys0, 8, MEMREMAP_WC);
		if (p) {
			peek = READ_ONCE(*(u64 *)p);
			memunmap(p);
		}
	}
	seq_printf(m, "pinned %d persistent %d callbacks %d put_rc %d entries %u peek %016llx uuid %*phN phys %llx\n",
		   !!slot.pt, slot.persistent,
		   atomic_read(&st_callbacks), slot.put_rc, slot.entries, peek,
		   (int)sizeof(slot.uuid), slot.uuid, slot.phys0);
	mutex_unlock(&st_lock);
	return 0;
}

static int st_open(struct inode *inode, struct file *file)
{
	return single_open(file, st_show, NULL);
}

static const struct proc_ops st_ops = {
	.proc_open = st_open,
	.proc_read = seq_read,
	.proc_lseek = seq_lseek,
	.proc_release = single_release,
	.proc_write = st_write,
};

static int __init st_init(void)
{
	st_entry = proc_create("driver/nvsim_selftest", 0600, NULL, &st_ops);
	return st_entry ? 0 : -ENOMEM;
}

static void __exit st_exit(void)
{
	proc_remove(st_entry);
	mutex_lock(&st_lock);
	st_unpin();
	mutex_unlock(&st_lock);
}

module_init(st_init);
module_exit(st_exit);

MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("Test client of nvsim's nvidia_p2p_* (gdrmap simulated GPU tests only)");
