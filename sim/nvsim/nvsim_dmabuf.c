// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: dma-buf export of device memory (simulated GPU, not real
 * hardware), for cuMemGetHandleForAddressRange(DMA_BUF_FD).  Only CPU
 * mmap is offered: attaching the buffer to another device is refused.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/fcntl.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "nvsim.h"
#include "nvsim_compat.h"

NVSIM_IMPORT_NS_DMA_BUF();

struct nvsim_dmabuf {
	struct nvsim_mem *mem;	/* holds a reference, like a persistent pin */
	u64 offset;		/* of the buffer in mem, host page aligned */
};

static struct sg_table *nvsim_dmabuf_map(struct dma_buf_attachment *at,
					 enum dma_data_direction dir)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static void nvsim_dmabuf_unmap(struct dma_buf_attachment *at,
			       struct sg_table *sgt,
			       enum dma_data_direction dir)
{
}

static void nvsim_dmabuf_release(struct dma_buf *dmabuf)
{
	struct nvsim_dmabuf *b = dmabuf->priv;

	mutex_lock(&nvsim_lock);
	b->mem->gpu->count.dmabufs--;
	nvsim_mem_put(b->mem);
	mutex_unlock(&nvsim_lock);
	kfree(b);
}

/*
 * Map the BAR pages write-combined, one host page per call: a remap that
 * does not cover the whole VMA is checked page by page against the
 * kernel's own WC mapping of the BAR by x86 PAT.
 */
static int nvsim_dmabuf_do_mmap(struct dma_buf *dmabuf,
				struct vm_area_struct *vma)
{
	struct nvsim_dmabuf *b = dmabuf->priv;
	struct nvsim_mem *mem = b->mem;	/* pages fixed while referenced */
	unsigned long addr;
	u64 off, phys;
	int ret;

	if (!nvsim_param_dmabuf_mmap())
		return -ENOTSUPP;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	off = b->offset + ((u64)vma->vm_pgoff << PAGE_SHIFT);
	for (addr = vma->vm_start; addr < vma->vm_end;
	     addr += PAGE_SIZE, off += PAGE_SIZE) {
		phys = mem->gpu->bar_phys +
		       ((u64)mem->pages[off >> NVSIM_PAGE_SHIFT] <<
			NVSIM_PAGE_SHIFT) + (off & (NVSIM_PAGE_BYTES - 1));
		ret = io_remap_pfn_range(vma, addr, phys >> PAGE_SHIFT,
					 PAGE_SIZE, vma->vm_page_prot);
		if (ret)
			return ret;
	}
	return 0;
}

static const struct dma_buf_ops nvsim_dmabuf_ops = {
	.map_dma_buf = nvsim_dmabuf_map,
	.unmap_dma_buf = nvsim_dmabuf_unmap,
	.release = nvsim_dmabuf_release,
	.mmap = nvsim_dmabuf_do_mmap,
};

/* NVSIM_IOC_EXPORT_DMABUF; called without nvsim_lock. */
int nvsim_export_dmabuf(struct nvsim_ctx *ctx, struct nvsim_export_dmabuf *a)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct nvsim_mapping *map;
	struct nvsim_dmabuf *b;
	struct dma_buf *dmabuf;
	int fd;

	if (!nvsim_param_dmabuf())
		return -EOPNOTSUPP;
	if (a->flags || a->fd || !a->size || !PAGE_ALIGNED(a->va) ||
	    !PAGE_ALIGNED(a->size))
		return -EINVAL;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	mutex_lock(&nvsim_lock);
	map = nvsim_find_map(ctx, a->va, a->size);
	if (!map) {
		mutex_unlock(&nvsim_lock);
		kfree(b);
		return -EINVAL;
	}
	b->mem = map->mem;
	b->mem->refs++;
	b->offset = map->offset + (a->va - map->va);
	b->mem->gpu->count.dmabufs++;
	mutex_unlock(&nvsim_lock);

	exp.ops = &nvsim_dmabuf_ops;
	exp.size = a->size;
	exp.flags = O_RDWR | O_CLOEXEC;
	exp.priv = b;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf)) {
		mutex_lock(&nvsim_lock);
		b->mem->gpu->count.dmabufs--;
		nvsim_mem_put(b->mem);
		mutex_unlock(&nvsim_lock);
		kfree(b);
		return PTR_ERR(dmabuf);
	}
	fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);	/* releases b */
		return fd;
	}
	a->fd = fd;
	return 0;
}
