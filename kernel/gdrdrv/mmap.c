// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CPU mappings of pinned regions.
 *
 * The mmap offset is the handle (vm_pgoff == handle); a region has at most
 * one mapping (VMAs split from it count as the same one).  ->mmap only
 * checks the request and sets up the VMA; the pages are inserted by the
 * fault handler under region->lock, one aligned chunk of the VMA
 * (GDRDRV_FAULT_CHUNK) per fault: a mapping of tens of GiB is millions of
 * PTEs, which one fault would insert with the region locked (the free
 * callback, and NVIDIA's lock behind it, waiting) for seconds.
 *
 * Why not in ->mmap: the kernel links a new VMA into the file's
 * address_space only after ->mmap returns.  PTEs filled in ->mmap would be
 * invisible to an unmap_mapping_range() of unpin or the free callback that
 * runs in between, and would survive it, pointing at released GPU memory.
 * A fault only comes to a linked VMA: a zap after the insert clears the
 * PTEs, and a fault after the zap finds the region released (its pin no
 * longer HELD) and gives SIGBUS.  Zap and insert are serialised by
 * region->lock, so after unpin or the callback returns no access through
 * any mapping of the region reaches its pages.
 *
 * Memory type: write-combined on x86.  vmf_insert_pfn_prot() gives each
 * PTE the type that PAT has recorded for the address (uncached if none),
 * so before any insert, ->mmap reserves WC for each physically contiguous
 * run (arch_io_reserve_memtype_wc), released when the mapping is zapped or
 * its last VMA closes.  PAT keeps no reservation of its own for inserted
 * PFNs, so partial munmaps need no care.  On arm64 the type is the PTE's
 * own attribute (gdrdrv_pgprot()) and the reservation does nothing.
 *
 * Sizes: mmap offsets, VMAs and PTEs count host pages (PAGE_SIZE: 4, 16
 * or 64 KiB on arm64), the page table GPU pages (64 KiB); a GPU page holds
 * 16, 4 or 1 host pages, so a host page never straddles two GPU pages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/io.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#ifdef CONFIG_PPC64
#include <asm/cpu_has_feature.h>
#endif

#include "compat.h"
#include "gdrdrv.h"

/* What one fault inserts: 512 PTEs with 4 KiB pages. */
#define GDRDRV_FAULT_CHUNK	SZ_2M

/* arm64 systems whose PCIe root complex needs device mappings. */
static bool gdrdrv_need_device_mapping;

void gdrdrv_platform_init(void)
{
#ifdef CONFIG_ARM64
	/* BlueField-3 root complex. */
	static const unsigned short ids[] = { 0xa2da, 0xa2db };
	struct pci_dev *pdev;
	int i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		pdev = pci_get_device(PCI_VENDOR_ID_MELLANOX, ids[i], NULL);
		if (pdev) {
			pci_dev_put(pdev);
			gdrdrv_need_device_mapping = true;
		}
	}
#endif
}

static bool gdrdrv_platform_could_cache(void)
{
#if defined(CONFIG_ARM64)
	return true;
#elif defined(CONFIG_PPC64)
	return cpu_has_feature(CPU_FTR_ARCH_300);	/* POWER9 */
#else
	return false;
#endif
}

static bool gdrdrv_region_cacheable(struct gdrdrv_region *r)
{
	const struct nvidia_p2p_page_table *pt = r->pt;

	lockdep_assert_held(&r->lock);

	if (!gdrdrv_platform_could_cache() || !pt || !pt->entries)
		return false;
	/* Memory reached through BAR1 is never mapped cached. */
	if (r->flags & GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE)
		return false;
#ifdef NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE
	if (pt->flags & NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE)
		return true;
#endif
#ifndef GDRDRV_NV_PROPRIETARY
	return page_is_ram(PHYS_PFN(pt->pages[0]->physical_address));
#else
	return false;
#endif
}

static u32 gdrdrv_auto_mapping_type(struct gdrdrv_region *r)
{
	if (gdrdrv_region_cacheable(r))
		return GDRDRV_MAPPING_TYPE_CACHING;
	if (gdrdrv_need_device_mapping)
		return GDRDRV_MAPPING_TYPE_DEVICE;
	return GDRDRV_MAPPING_TYPE_WC;
}

/* Whether REQ_MAPPING_TYPE may ask for type (0..3) on r. */
int gdrdrv_check_mapping_type(struct gdrdrv_region *r, u32 type)
{
	int ret = 0;

	mutex_lock(&r->lock);
	switch (type) {
	case GDRDRV_MAPPING_TYPE_NONE:
		break;
	case GDRDRV_MAPPING_TYPE_WC:
		if (gdrdrv_need_device_mapping)
			ret = -EOPNOTSUPP;
		break;
	case GDRDRV_MAPPING_TYPE_CACHING:
		if (!gdrdrv_region_cacheable(r))
			ret = -EOPNOTSUPP;
		break;
	case GDRDRV_MAPPING_TYPE_DEVICE:
		if (!gdrdrv_need_device_mapping)
			ret = -EOPNOTSUPP;
		break;
	default:
		ret = -EINVAL;
		break;
	}
	mutex_unlock(&r->lock);
	return ret;
}

/*
 * The CPU's memory type for each mapping type.
 *
 * WC on arm64 is Normal non-cacheable (pgprot_writecombine: MT_NORMAL_NC,
 * as NVIDIA's driver maps BAR1 for write-combining there):
 *  - stores may be gathered into larger PCIe writes, as x86 WC does, which
 *    is what makes CPU writes to BAR1 fast;
 *  - loads are never cached, so every read reaches the GPU and none is
 *    stale; they may be speculated and reordered like any Normal access,
 *    which is harmless on a prefetchable BAR (reads have no side effects)
 *    and why the library puts `dmb osh` before its reads;
 *  - unaligned accesses, any access size and DC ZVA are allowed, so plain
 *    memcpy-like code and the compiler's vector code work on the mapping.
 * DEVICE is Device-nGnRE (pgprot_device), as GDRCopy uses, for root
 * complexes that cannot take Normal-NC traffic (BlueField-3): no
 * gathering, no reordering, no speculation, and unaligned accesses fault,
 * so the library copies through it with aligned accesses only.  Early
 * write acknowledgment (E) is all that PCIe's posted writes give anyway;
 * nGnRnE (pgprot_noncached) promises nothing more for them.
 * CACHING is kept for memory the CPU reaches coherently (Grace's C2C
 * link, where the GPU memory is RAM to the kernel): a cached mapping of
 * BAR1 across PCIe would return stale lines.  pgprot_writecombine and
 * pgprot_device are macros on arm64, usable by the proprietary flavour.
 */
static pgprot_t gdrdrv_pgprot(pgprot_t prot, u32 type)
{
	switch (type) {
	case GDRDRV_MAPPING_TYPE_WC:
		return gdrdrv_pgprot_writecombine(prot);
	case GDRDRV_MAPPING_TYPE_DEVICE:
		return pgprot_device(prot);
	default:
		return prot;		/* CACHING: the default, cached */
	}
}

/*
 * Splits the first len bytes of the pinned pages into physically
 * contiguous runs, stored in runs when it is not NULL.  Returns how many
 * runs there are, or -EINVAL for a page that is not host-page aligned.
 */
static int gdrdrv_split_runs(const struct nvidia_p2p_page_table *pt, u64 len,
			     struct gdrdrv_run *runs)
{
	u64 off, chunk, phys, end = 0;
	unsigned int i;
	int n = 0;

	for (i = 0, off = 0; off < len; i++, off += chunk) {
		phys = pt->pages[i]->physical_address;
		chunk = min_t(u64, GDRDRV_GPU_PAGE_SIZE, len - off);
		if (offset_in_page(phys))
			return -EINVAL;
		if (n == 0 || phys != end) {
			if (runs) {
				runs[n].phys = phys;
				runs[n].len = 0;
			}
			n++;
		}
		if (runs)
			runs[n - 1].len += chunk;
		end = phys + chunk;
	}
	return n;
}

static void gdrdrv_free_wc(const struct gdrdrv_run *runs, int n)
{
	int i;

	for (i = 0; i < n; i++)
		arch_io_free_memtype_wc(runs[i].phys, runs[i].len);
}

static int gdrdrv_reserve_wc(const struct gdrdrv_run *runs, int n)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = arch_io_reserve_memtype_wc(runs[i].phys, runs[i].len);
		if (ret)
			goto free_reserved;
	}
	return 0;

free_reserved:
	gdrdrv_free_wc(runs, i);
	return ret;
}

static void gdrdrv_release_wc(struct gdrdrv_region *r)
{
	lockdep_assert_held(&r->lock);

	if (!r->wc_runs)
		return;
	gdrdrv_free_wc(r->wc_runs, r->nr_wc_runs);
	kvfree(r->wc_runs);
	r->wc_runs = NULL;
	r->nr_wc_runs = 0;
}

/* Removes every CPU mapping of r; later accesses get SIGBUS. */
void gdrdrv_region_zap(struct gdrdrv_region *r)
{
	lockdep_assert_held(&r->lock);

	unmap_mapping_range(&r->file->mapping, (loff_t)r->handle << PAGE_SHIFT,
			    (loff_t)r->size, 1);
	gdrdrv_release_wc(r);
}

/*
 * Reserves the WC memory type for the physically contiguous runs of the
 * first len bytes of r, so that the PTEs inserted later take that type.
 */
static int gdrdrv_setup_wc(struct gdrdrv_region *r, u64 len)
{
	struct gdrdrv_run *runs;
	int n, ret;

	lockdep_assert_held(&r->lock);

	n = gdrdrv_split_runs(r->pt, len, NULL);
	if (n <= 0)
		return -EINVAL;
	runs = kvcalloc(n, sizeof(*runs), GFP_KERNEL_ACCOUNT);
	if (!runs)
		return -ENOMEM;
	gdrdrv_split_runs(r->pt, len, runs);

	ret = gdrdrv_reserve_wc(runs, n);
	if (ret) {
		kvfree(runs);
		return ret;
	}
	r->wc_runs = runs;
	r->nr_wc_runs = n;
	return 0;
}

/*
 * Inserts the PTEs of the chunk of the VMA that holds addr, so that a
 * mapping takes one fault per chunk and not one per host page.  A PTE
 * already there (a racing fault of another thread) is left as it is.
 */
static vm_fault_t gdrdrv_insert_chunk(struct gdrdrv_region *r,
				      struct vm_area_struct *vma,
				      unsigned long addr)
{
	pgprot_t prot = gdrdrv_pgprot_decrypted(vma->vm_page_prot);
	const struct nvidia_p2p_page_table *pt = r->pt;
	unsigned long start, end;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	u64 off, phys;

	lockdep_assert_held(&r->lock);

	if (vma->vm_pgoff < r->handle)
		return VM_FAULT_SIGBUS;
	start = max(vma->vm_start, ALIGN_DOWN(addr, GDRDRV_FAULT_CHUNK));
	end = min(vma->vm_end, ALIGN_DOWN(addr, GDRDRV_FAULT_CHUNK) +
		  GDRDRV_FAULT_CHUNK);
	off = ((u64)(vma->vm_pgoff - r->handle) << PAGE_SHIFT) +
	      (start - vma->vm_start);
	for (addr = start; addr < end; addr += PAGE_SIZE, off += PAGE_SIZE) {
		/* VMAs only shrink (VM_DONTEXPAND): never past the mmap. */
		if (WARN_ON_ONCE(off >= r->map_len))
			return VM_FAULT_SIGBUS;
		phys = pt->pages[off >> GDRDRV_GPU_PAGE_SHIFT]->physical_address +
		       (off & (GDRDRV_GPU_PAGE_SIZE - 1));
		ret = gdrdrv_insert_pfn_prot(vma, addr, PHYS_PFN(phys), prot);
		if (ret != VM_FAULT_NOPAGE)
			return ret;
	}
	return ret;
}

/*
 * An access to a page of a VMA with no PTE.  Faults only come to VMAs
 * that are linked into the file's address_space, so a zap that runs after
 * the insert sees (and clears) the new PTEs, and a fault after a zap finds
 * the region released under r->lock.
 */
static vm_fault_t gdrdrv_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gdrdrv_region *r = vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	mutex_lock(&r->lock);
	/* Unpinned, freed (zapped) or without its WC reservation: SIGBUS. */
	if (r->state == GDRDRV_PIN_HELD &&
	    (r->map_type != GDRDRV_MAPPING_TYPE_WC || r->wc_runs))
		ret = gdrdrv_insert_chunk(r, vma, vmf->address);
	mutex_unlock(&r->lock);
	return ret;
}

/* A split or a move of a VMA: one more VMA of the same mapping. */
static void gdrdrv_vm_open(struct vm_area_struct *vma)
{
	struct gdrdrv_region *r = vma->vm_private_data;

	atomic_inc(&r->map_count);
	gdrdrv_region_get(r);
}

static void gdrdrv_vm_close(struct vm_area_struct *vma)
{
	struct gdrdrv_region *r = vma->vm_private_data;

	mutex_lock(&r->lock);
	if (atomic_dec_and_test(&r->map_count))
		gdrdrv_release_wc(r);
	mutex_unlock(&r->lock);
	gdrdrv_region_put(r);
}

static const struct vm_operations_struct gdrdrv_vm_ops = {
	.open	= gdrdrv_vm_open,
	.close	= gdrdrv_vm_close,
	.fault	= gdrdrv_vm_fault,
};

static int gdrdrv_mmap_check(struct gdrdrv_region *r, u64 len)
{
	const struct nvidia_p2p_page_table *pt = r->pt;

	lockdep_assert_held(&r->lock);

	if (r->offset)			/* pinned address not 64 KiB aligned */
		return -EINVAL;
	if (len > r->size)
		return -EINVAL;
	if (atomic_read(&r->map_count))	/* one mapping per handle */
		return -EINVAL;
	if (r->state != GDRDRV_PIN_HELD || !pt->entries)
		return -EINVAL;
	if (len > ((u64)pt->entries << GDRDRV_GPU_PAGE_SHIFT))
		return -EINVAL;
	return 0;
}

int gdrdrv_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct gdrdrv_file *f = filp->private_data;
	struct gdrdrv_region *r;
	u64 len = vma->vm_end - vma->vm_start;
	u32 type;
	int ret;

	if (!f)
		return -EIO;
	if (!gdrdrv_file_owned_by_current(f))
		return -EACCES;
	/* A private (copy-on-write) mapping of device memory makes no sense. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/* Nor does running code from it. */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	mutex_lock(&f->lock);
	r = gdrdrv_region_lookup(f, vma->vm_pgoff);
	if (!r) {
		ret = -EINVAL;
		goto unlock_file;
	}

	mutex_lock(&r->lock);
	ret = gdrdrv_mmap_check(r, len);
	if (ret)
		goto unlock_region;

	type = r->req_type;
	if (type == GDRDRV_MAPPING_TYPE_NONE)
		type = gdrdrv_auto_mapping_type(r);
	if (WARN_ON_ONCE(type == GDRDRV_MAPPING_TYPE_CACHING &&
			 (r->flags & GDRDRV_PIN_BUFFER_FLAG_FORCE_PCIE))) {
		ret = -EINVAL;
		goto unlock_region;
	}

	gdrdrv_vm_flags_mod(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP |
			    VM_IO | VM_PFNMAP, VM_MAYEXEC);
	vma->vm_page_prot = gdrdrv_pgprot(vma->vm_page_prot, type);
	/* The pages are inserted by the first fault. */
	if (type == GDRDRV_MAPPING_TYPE_WC) {
		ret = gdrdrv_setup_wc(r, len);
		if (ret)
			goto unlock_region;
	} else if (gdrdrv_split_runs(r->pt, len, NULL) <= 0) {
		ret = -EINVAL;
		goto unlock_region;
	}
	gdrdrv_dbg("mapping handle %llu: %llu bytes, type %u\n", r->handle,
		   len, type);

	r->map_type = type;
	r->map_len = len;
	atomic_set(&r->map_count, 1);
	gdrdrv_region_get(r);		/* the VMA's reference */
	vma->vm_private_data = r;
	vma->vm_ops = &gdrdrv_vm_ops;

unlock_region:
	mutex_unlock(&r->lock);
unlock_file:
	mutex_unlock(&f->lock);
	return ret;
}
