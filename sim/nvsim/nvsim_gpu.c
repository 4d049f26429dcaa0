// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: the simulated GPUs (not real hardware), each made from BAR2 of
 * an ivshmem-plain device, numbered by CUDA ordinal, and the lock that
 * guards all of nvsim's state (nvsim.h).  A GPU lives while its PCI
 * device is bound or any memory on it does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "nvsim.h"

/* Guards all of nvsim's state; see nvsim.h. */
DEFINE_MUTEX(nvsim_lock);
/* The GPUs by CUDA ordinal; NULL where none is bound. */
static struct nvsim_dev *nvsim_gpus[NVSIM_MAX_DEVICES];
static unsigned int nvsim_ngpus;	/* slots in use: highest index + 1 */

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

/* How many ordinals there are: the highest in use + 1, 0 without GPUs. */
unsigned int nvsim_gpu_count(void)
{
	lockdep_assert_held(&nvsim_lock);
	return nvsim_ngpus;
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

/*
 * A GPU of pdev's BAR2, given the first free ordinal: from then on open
 * fds may allocate on it.  Errors: -ENODEV (no usable BAR), -ENOSPC (all
 * ordinals taken), or the PCI core's.
 */
struct nvsim_dev *nvsim_gpu_add(struct pci_dev *pdev)
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
		return ERR_PTR(-ENODEV);
	}

	gpu = kzalloc(sizeof(*gpu), GFP_KERNEL);
	if (!gpu)
		return ERR_PTR(-ENOMEM);
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
	return gpu;

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
	return ERR_PTR(ret);
}

/*
 * The device goes: no new user finds the GPU; open fds and live memory
 * keep their references until they go.
 */
void nvsim_gpu_remove(struct nvsim_dev *gpu)
{
	nvsim_gpu_unregister(gpu);
	nvsim_dev_put(gpu);
}

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
	s->c.gpu_refs += c->gpu_refs;
	s->c.abandoned_pins += c->abandoned_pins;
	s->c.resets += c->resets;
	s->used_pages += gpu->used;
	s->total_pages += gpu->npages;
}

/* The counters of gpu, or the sums over every GPU when gpu is NULL. */
void nvsim_snapshot_locked(const struct nvsim_dev *gpu,
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

void nvsim_snapshot(const struct nvsim_dev *gpu, struct nvsim_snapshot *s)
{
	mutex_lock(&nvsim_lock);
	nvsim_snapshot_locked(gpu, s);
	mutex_unlock(&nvsim_lock);
}
