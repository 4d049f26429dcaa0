// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: gdrmap's simulated GPU.  NOT REAL HARDWARE.
 *
 * Binds to every QEMU ivshmem-plain PCI device (up to NVSIM_MAX_DEVICES),
 * each one simulated GPU whose memory is the device's BAR2 (shared
 * memory), in 64 KiB pages.  Exports the nvidia_p2p_* kernel
 * API over that memory (nvsim_p2p.c) and hands the memory out to user
 * space through /dev/nvsim (nvsim_mem.c), for gdrmap's libcuda shim.
 *
 * This file: PCI binding, /dev/nvsim, /proc counters.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "nvsim.h"
#include "nvsim_compat.h"

#define PCI_VENDOR_ID_IVSHMEM	0x1af4
#define PCI_DEVICE_ID_IVSHMEM	0x1110
#define NVSIM_BAR		2

/* Guards all of nvsim's state; see nvsim.h. */
DEFINE_MUTEX(nvsim_lock);
struct nvsim_dev *nvsim_gpus[NVSIM_MAX_DEVICES];
unsigned int nvsim_ngpus;
LIST_HEAD(nvsim_ctxs);
LIST_HEAD(nvsim_pins);

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

/* The GPU of a CUDA ordinal, or NULL. */
struct nvsim_dev *nvsim_gpu_by_index(u32 index)
{
	lockdep_assert_held(&nvsim_lock);
	return index < nvsim_ngpus ? nvsim_gpus[index] : NULL;
}

/*
 * A GPU's UUID, made from its PCI address so that it is the same on every
 * boot and differs between GPUs: "nvsm", then domain, bus and devfn in
 * the last six bytes, with the version (8, custom) and variant bits of
 * RFC 9562.
 */
static void nvsim_make_uuid(struct pci_dev *pdev, u8 *uuid)
{
	u32 domain = pci_domain_nr(pdev->bus);

	memset(uuid, 0, NVIDIA_P2P_GPU_UUID_LEN);
	memcpy(uuid, "nvsm", 4);
	uuid[6] = 0x80;
	uuid[8] = 0x80;
	uuid[10] = domain >> 24;
	uuid[11] = domain >> 16;
	uuid[12] = domain >> 8;
	uuid[13] = domain;
	uuid[14] = pdev->bus->number;
	uuid[15] = pdev->devfn;
}

static void nvsim_proc_gpu_add(struct nvsim_dev *gpu);

/* Give gpu the first free ordinal; -ENOSPC when all are taken. */
static int nvsim_gpu_register(struct nvsim_dev *gpu)
{
	unsigned int i;

	mutex_lock(&nvsim_lock);
	for (i = 0; i < NVSIM_MAX_DEVICES && nvsim_gpus[i]; i++)
		;
	if (i < NVSIM_MAX_DEVICES) {
		gpu->index = i;
		nvsim_gpus[i] = gpu;
		nvsim_ngpus = max(nvsim_ngpus, i + 1);
	}
	mutex_unlock(&nvsim_lock);
	return i < NVSIM_MAX_DEVICES ? 0 : -ENOSPC;
}

static void nvsim_gpu_unregister(struct nvsim_dev *gpu)
{
	mutex_lock(&nvsim_lock);
	nvsim_gpus[gpu->index] = NULL;
	while (nvsim_ngpus && !nvsim_gpus[nvsim_ngpus - 1])
		nvsim_ngpus--;
	mutex_unlock(&nvsim_lock);
}

static int nvsim_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	unsigned long max_pages;
	struct nvsim_dev *gpu;
	resource_size_t len;
	int ret;

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
	max_pages = nvsim_param_max_pages();
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
	nvsim_make_uuid(pdev, gpu->uuid);

	ret = nvsim_gpu_register(gpu);
	if (ret) {
		dev_info(&pdev->dev, "at most %d simulated GPUs; ignoring this device\n",
			 NVSIM_MAX_DEVICES);
		goto err_bitmap;
	}
	pci_set_drvdata(pdev, gpu);
	nvsim_proc_gpu_add(gpu);

	dev_info(&pdev->dev,
		 "simulated GPU %u (not real hardware): BAR%d at %pa, %llu MiB, %lu pages of 64 KiB, uuid GPU-%pUb\n",
		 gpu->index, NVSIM_BAR, &gpu->bar_phys, gpu->bar_size >> 20,
		 gpu->npages, gpu->uuid);
	return 0;

err_bitmap:
	bitmap_free(gpu->bitmap);
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

	proc_remove(gpu->proc);	/* waits for readers of its counters */
	nvsim_gpu_unregister(gpu);
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

/*
 * /proc/driver/nvsim: the counters of every GPU summed, and each GPU's own
 * in gpuN/.  A file's data is its GPU, NULL for the sums.
 */

struct nvsim_snapshot {
	struct nvsim_counters c;
	unsigned long used_pages;
	unsigned long total_pages;
};

static void nvsim_snapshot_add(struct nvsim_snapshot *s,
			       const struct nvsim_dev *gpu)
{
	const struct nvsim_counters *c = &gpu->count;

	s->c.outstanding_pins += c->outstanding_pins;
	s->c.persistent_pins += c->persistent_pins;
	s->c.pinned_pages += c->pinned_pages;
	s->c.callbacks_fired += c->callbacks_fired;
	s->c.allocations += c->allocations;
	s->c.get_pages_calls += c->get_pages_calls;
	s->c.put_pages_calls += c->put_pages_calls;
	s->c.dmabufs += c->dmabufs;
	s->used_pages += gpu->used;
	s->total_pages += gpu->npages;
}

/* The counters of gpu, or the sums over every GPU when gpu is NULL. */
static void nvsim_snapshot_locked(const struct nvsim_dev *gpu,
				  struct nvsim_snapshot *s)
{
	unsigned int i;

	lockdep_assert_held(&nvsim_lock);
	memset(s, 0, sizeof(*s));
	if (gpu) {
		nvsim_snapshot_add(s, gpu);
		return;
	}
	for (i = 0; i < nvsim_ngpus; i++)
		if (nvsim_gpus[i])
			nvsim_snapshot_add(s, nvsim_gpus[i]);
}

static void nvsim_snapshot(const struct nvsim_dev *gpu,
			   struct nvsim_snapshot *s)
{
	mutex_lock(&nvsim_lock);
	nvsim_snapshot_locked(gpu, s);
	mutex_unlock(&nvsim_lock);
}

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
	/* The API's own, not any GPU's: in the sums only. */
	if (!m->private) {
		mutex_lock(&nvsim_lock);
		p = nvsim_p2p_count;
		mutex_unlock(&nvsim_lock);
		seq_printf(m, "get_pages_requests: %lu\n", p.get_pages_requests);
		seq_printf(m, "put_pages_requests: %lu\n", p.put_pages_requests);
		seq_printf(m, "stale_puts: %lu\n", p.stale_puts);
		seq_printf(m, "recycled_tables: %lu\n", p.recycled_tables);
		seq_printf(m, "foreign_puts: %lu\n", p.foreign_puts);
		seq_printf(m, "double_frees: %lu\n", p.double_frees);
		seq_printf(m, "use_after_free: %lu\n", p.use_after_free);
		seq_printf(m, "failed_puts: %lu\n", p.failed_puts);
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
	{ "stats", nvsim_show_stats },
};

static void nvsim_proc_fill(struct proc_dir_entry *dir, struct nvsim_dev *gpu)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nvsim_proc_files); i++)
		proc_create_single_data(nvsim_proc_files[i].name, 0444, dir,
					nvsim_proc_files[i].show, gpu);
}

/* gpuN/ of a new GPU; nothing when /proc/driver/nvsim is missing. */
static void nvsim_proc_gpu_add(struct nvsim_dev *gpu)
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

static void nvsim_proc_init(void)
{
	nvsim_proc_dir = proc_mkdir("driver/nvsim", NULL);
	if (!nvsim_proc_dir) {
		pr_warn("cannot create /proc/driver/nvsim\n");
		return;
	}
	nvsim_proc_fill(nvsim_proc_dir, NULL);
	nvsim_hooks_proc_init(nvsim_proc_dir);
}

static int __init nvsim_init(void)
{
	int ret;

	pr_info("gdrmap simulated GPU (not real hardware) loading; nvidia_p2p_* here are a simulation\n");

	/* The GPUs' own /proc directories go into it as they are probed. */
	nvsim_proc_init();
	ret = pci_register_driver(&nvsim_pci_driver);
	if (ret)
		goto err_proc;
	ret = misc_register(&nvsim_misc);
	if (ret)
		goto err_pci;

	mutex_lock(&nvsim_lock);
	if (!nvsim_ngpus)
		pr_info("no ivshmem-plain device (1af4:1110) found; /dev/nvsim will report ENODEV\n");
	mutex_unlock(&nvsim_lock);
	return 0;

err_pci:
	pci_unregister_driver(&nvsim_pci_driver);
err_proc:
	proc_remove(nvsim_proc_dir);
	return ret;
}

static void __exit nvsim_exit(void)
{
	struct nvsim_snapshot s;

	misc_deregister(&nvsim_misc);

	/*
	 * Open fds hold the module, so only persistent pins can be left:
	 * a client (gdrdrv) leaked them.
	 */
	mutex_lock(&nvsim_lock);
	nvsim_snapshot_locked(NULL, &s);
	WARN(s.c.outstanding_pins || s.c.pinned_pages,
	     "nvsim: unloading with %lu outstanding pins (%lu pages)\n",
	     s.c.outstanding_pins, s.c.pinned_pages);
	nvsim_free_leftover_pins();
	mutex_unlock(&nvsim_lock);

	pci_unregister_driver(&nvsim_pci_driver);
	proc_remove(nvsim_proc_dir);
	pr_info("simulated GPU unloaded\n");
}

module_init(nvsim_init);
module_exit(nvsim_exit);

MODULE_LICENSE("Dual MIT/GPL");
MODULE_AUTHOR("gdrmap");
MODULE_DESCRIPTION("gdrmap simulated GPU: nvidia_p2p_* over a QEMU ivshmem BAR (not real hardware)");
MODULE_VERSION("1.0");
