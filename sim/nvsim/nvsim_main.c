// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: gdrmap's simulated GPU.  NOT REAL HARDWARE.
 *
 * Binds to QEMU's ivshmem-plain PCI device and uses its BAR2 (shared
 * memory) as GPU memory, in 64 KiB pages.  Exports the nvidia_p2p_* kernel
 * API over that memory (nvsim_p2p.c) and hands the memory out to user
 * space through /dev/nvsim (nvsim_mem.c), for gdrmap's libcuda shim.
 *
 * This file: module parameters, PCI binding, /dev/nvsim, /proc counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/proc_fs.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "nvsim.h"
#include "nvsim_compat.h"

#define PCI_VENDOR_ID_IVSHMEM	0x1af4
#define PCI_DEVICE_ID_IVSHMEM	0x1110
#define NVSIM_BAR		2

bool nvsim_scatter;
module_param_named(scatter, nvsim_scatter, bool, 0644);
MODULE_PARM_DESC(scatter,
		 "Hand pages out in descending BAR order, never contiguous (default 0)");

bool nvsim_poison;
module_param_named(poison, nvsim_poison, bool, 0644);
MODULE_PARM_DESC(poison, "Fill freed pages with 0x6b (default 0)");

bool nvsim_dmabuf;
module_param_named(dmabuf, nvsim_dmabuf, bool, 0644);
MODULE_PARM_DESC(dmabuf, "Offer dma-buf export, CUDA's DMA_BUF_SUPPORTED (default 0)");

bool nvsim_dmabuf_mmap = true;
module_param_named(dmabuf_mmap, nvsim_dmabuf_mmap, bool, 0644);
MODULE_PARM_DESC(dmabuf_mmap,
		 "dma-bufs can be mmap'ed; 0 fails with ENOTSUPP as drivers before 580 (default 1)");

static unsigned long max_pages;
module_param(max_pages, ulong, 0444);
MODULE_PARM_DESC(max_pages, "Use at most this many 64 KiB pages (0: the whole BAR)");

/* Guards all of nvsim's state; see nvsim.h. */
DEFINE_MUTEX(nvsim_lock);
struct nvsim_dev *nvsim_gpu;
LIST_HEAD(nvsim_ctxs);
LIST_HEAD(nvsim_pins);
struct nvsim_counters nvsim_count;

static struct proc_dir_entry *nvsim_proc_dir;

static void nvsim_dev_release(struct kref *kref)
{
	struct nvsim_dev *gpu = container_of(kref, struct nvsim_dev, kref);

	iounmap(gpu->bar);
	pci_release_region(gpu->pdev, NVSIM_BAR);
	pci_disable_device(gpu->pdev);
	pci_dev_put(gpu->pdev);
	bitmap_free(gpu->bitmap);
	kfree(gpu);
}

void nvsim_dev_get(struct nvsim_dev *gpu)
{
	kref_get(&gpu->kref);
}

void nvsim_dev_put(struct nvsim_dev *gpu)
{
	kref_put(&gpu->kref, nvsim_dev_release);
}

static int nvsim_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct nvsim_dev *gpu;
	resource_size_t len;
	int ret;

	mutex_lock(&nvsim_lock);
	ret = nvsim_gpu ? -EBUSY : 0;
	mutex_unlock(&nvsim_lock);
	if (ret) {
		dev_info(&pdev->dev, "only one simulated GPU is supported; ignoring this device\n");
		return ret;
	}

	len = pci_resource_len(pdev, NVSIM_BAR);
	if (!(pci_resource_flags(pdev, NVSIM_BAR) & IORESOURCE_MEM) ||
	    len < NVSIM_PAGE_BYTES) {
		dev_err(&pdev->dev, "BAR%d is not a memory BAR of at least 64 KiB\n",
			NVSIM_BAR);
		return -ENODEV;
	}

	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu)
		return -ENOMEM;
	kref_init(&gpu->kref);

	ret = pci_enable_device_mem(pdev);
	if (ret)
		goto err_free;
	ret = pci_request_region(pdev, NVSIM_BAR, KBUILD_MODNAME);
	if (ret)
		goto err_disable;

	gpu->pdev = pci_dev_get(pdev);
	gpu->bar_phys = pci_resource_start(pdev, NVSIM_BAR);
	gpu->bar_bus = pci_bus_address(pdev, NVSIM_BAR);
	gpu->npages = len >> NVSIM_PAGE_SHIFT;
	if (max_pages && max_pages < gpu->npages)
		gpu->npages = max_pages;
	gpu->bar_size = (u64)gpu->npages << NVSIM_PAGE_SHIFT;

	/*
	 * Write-combining, the type gdrdrv gives user mappings on x86: with
	 * PAT, a kernel mapping of another type would silently turn them
	 * uncached.
	 */
	gpu->bar = ioremap_wc(gpu->bar_phys, gpu->bar_size);
	if (!gpu->bar) {
		ret = -ENOMEM;
		goto err_release;
	}
	gpu->bitmap = bitmap_zalloc(gpu->npages, GFP_KERNEL);
	if (!gpu->bitmap) {
		ret = -ENOMEM;
		goto err_unmap;
	}

	/* A random (version 4) UUID, like a real GPU's "GPU-..." one. */
	get_random_bytes(gpu->uuid, sizeof(gpu->uuid));
	gpu->uuid[6] = (gpu->uuid[6] & 0x0f) | 0x40;
	gpu->uuid[8] = (gpu->uuid[8] & 0x3f) | 0x80;

	pci_set_drvdata(pdev, gpu);
	mutex_lock(&nvsim_lock);
	nvsim_gpu = gpu;
	mutex_unlock(&nvsim_lock);

	dev_info(&pdev->dev,
		 "simulated GPU (not real hardware): BAR%d at %pa, %llu MiB, %lu pages of 64 KiB, uuid GPU-%pUb\n",
		 NVSIM_BAR, &gpu->bar_phys, gpu->bar_size >> 20, gpu->npages,
		 gpu->uuid);
	return 0;

err_unmap:
	iounmap(gpu->bar);
err_release:
	pci_dev_put(pdev);
	pci_release_region(pdev, NVSIM_BAR);
err_disable:
	pci_disable_device(pdev);
err_free:
	kfree(gpu);
	return ret;
}

static void nvsim_remove(struct pci_dev *pdev)
{
	struct nvsim_dev *gpu = pci_get_drvdata(pdev);

	mutex_lock(&nvsim_lock);
	if (nvsim_gpu == gpu)
		nvsim_gpu = NULL;
	mutex_unlock(&nvsim_lock);
	/* Open fds and live memory keep their references until they go. */
	nvsim_dev_put(gpu);
}

static const struct pci_device_id nvsim_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_IVSHMEM, PCI_DEVICE_ID_IVSHMEM) },
	{ }
};
MODULE_DEVICE_TABLE(pci, nvsim_pci_ids);

static struct pci_driver nvsim_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = nvsim_pci_ids,
	.probe = nvsim_probe,
	.remove = nvsim_remove,
	.driver.suppress_bind_attrs = true,
};

static struct miscdevice nvsim_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "nvsim",
	.fops = &nvsim_fops,
	.mode = 0666,
};

/* /proc/driver/nvsim */

static unsigned long nvsim_used_pages(void)
{
	unsigned long used;

	mutex_lock(&nvsim_lock);
	used = nvsim_gpu ? nvsim_gpu->used : 0;
	mutex_unlock(&nvsim_lock);
	return used;
}

#define NVSIM_COUNTER_SHOW(name)					\
static int nvsim_show_##name(struct seq_file *m, void *v)		\
{									\
	seq_printf(m, "%lu\n", READ_ONCE(nvsim_count.name));		\
	return 0;							\
}

NVSIM_COUNTER_SHOW(outstanding_pins)
NVSIM_COUNTER_SHOW(persistent_pins)
NVSIM_COUNTER_SHOW(pinned_pages)
NVSIM_COUNTER_SHOW(callbacks_fired)
NVSIM_COUNTER_SHOW(allocations)
NVSIM_COUNTER_SHOW(dmabufs)

static int nvsim_show_used_pages(struct seq_file *m, void *v)
{
	seq_printf(m, "%lu\n", nvsim_used_pages());
	return 0;
}

static int nvsim_show_stats(struct seq_file *m, void *v)
{
	struct nvsim_counters c;
	unsigned long used = 0, total = 0;

	mutex_lock(&nvsim_lock);
	c = nvsim_count;
	if (nvsim_gpu) {
		used = nvsim_gpu->used;
		total = nvsim_gpu->npages;
	}
	mutex_unlock(&nvsim_lock);

	seq_printf(m, "outstanding_pins: %lu\n", c.outstanding_pins);
	seq_printf(m, "persistent_pins: %lu\n", c.persistent_pins);
	seq_printf(m, "pinned_pages: %lu\n", c.pinned_pages);
	seq_printf(m, "callbacks_fired: %lu\n", c.callbacks_fired);
	seq_printf(m, "allocations: %lu\n", c.allocations);
	seq_printf(m, "dmabufs: %lu\n", c.dmabufs);
	seq_printf(m, "used_pages: %lu\n", used);
	seq_printf(m, "total_pages: %lu\n", total);
	seq_printf(m, "get_pages_calls: %lu\n", c.get_pages_calls);
	seq_printf(m, "put_pages_calls: %lu\n", c.put_pages_calls);
	seq_printf(m, "stale_puts: %lu\n", c.stale_puts);
	seq_printf(m, "recycled_tables: %lu\n", c.recycled_tables);
	return 0;
}

static void nvsim_proc_init(void)
{
	nvsim_proc_dir = proc_mkdir("driver/nvsim", NULL);
	if (!nvsim_proc_dir) {
		pr_warn("cannot create /proc/driver/nvsim\n");
		return;
	}
	proc_create_single("outstanding_pins", 0444, nvsim_proc_dir,
			   nvsim_show_outstanding_pins);
	proc_create_single("persistent_pins", 0444, nvsim_proc_dir,
			   nvsim_show_persistent_pins);
	proc_create_single("pinned_pages", 0444, nvsim_proc_dir,
			   nvsim_show_pinned_pages);
	proc_create_single("callbacks_fired", 0444, nvsim_proc_dir,
			   nvsim_show_callbacks_fired);
	proc_create_single("allocations", 0444, nvsim_proc_dir,
			   nvsim_show_allocations);
	proc_create_single("dmabufs", 0444, nvsim_proc_dir,
			   nvsim_show_dmabufs);
	proc_create_single("used_pages", 0444, nvsim_proc_dir,
			   nvsim_show_used_pages);
	proc_create_single("stats", 0444, nvsim_proc_dir, nvsim_show_stats);
	nvsim_hooks_proc_init(nvsim_proc_dir);
}

static int __init nvsim_init(void)
{
	int ret;

	pr_info("gdrmap simulated GPU (not real hardware) loading; nvidia_p2p_* here are a simulation\n");

	ret = pci_register_driver(&nvsim_pci_driver);
	if (ret)
		return ret;
	ret = misc_register(&nvsim_misc);
	if (ret)
		goto err_pci;
	nvsim_proc_init();

	mutex_lock(&nvsim_lock);
	if (!nvsim_gpu)
		pr_info("no ivshmem-plain device (1af4:1110) found; /dev/nvsim will report ENODEV\n");
	mutex_unlock(&nvsim_lock);
	return 0;

err_pci:
	pci_unregister_driver(&nvsim_pci_driver);
	return ret;
}

static void __exit nvsim_exit(void)
{
	proc_remove(nvsim_proc_dir);
	misc_deregister(&nvsim_misc);

	/*
	 * Open fds hold the module, so only persistent pins can be left:
	 * a client (gdrdrv) leaked them.
	 */
	mutex_lock(&nvsim_lock);
	WARN(nvsim_count.outstanding_pins || nvsim_count.pinned_pages,
	     "nvsim: unloading with %lu outstanding pins (%lu pages)\n",
	     nvsim_count.outstanding_pins, nvsim_count.pinned_pages);
	nvsim_free_leftover_pins();
	mutex_unlock(&nvsim_lock);

	pci_unregister_driver(&nvsim_pci_driver);
	pr_info("simulated GPU unloaded\n");
}

module_init(nvsim_init);
module_exit(nvsim_exit);

MODULE_LICENSE("Dual MIT/GPL");
MODULE_AUTHOR("gdrmap");
MODULE_DESCRIPTION("gdrmap simulated GPU: nvidia_p2p_* over a QEMU ivshmem BAR (not real hardware)");
MODULE_VERSION("1.0");
