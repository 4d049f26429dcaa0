// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: the ioctl commands of /dev/nvsim (simulated GPU, not real
 * hardware; nvsim_ioctl.h), one function each, over the memory model of
 * nvsim_mem.c and nvsim_ctx.c.  Each command's whole argument struct is
 * copied in, handled with nvsim_lock held (but for dma-buf export), and
 * copied back.
 */
#include <linux/fs.h>
#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nvsim.h"

/* One function per command, called with nvsim_lock held. */

static int nvsim_ioc_info(struct nvsim_ctx *ctx, struct nvsim_info *a)
{
	struct nvsim_dev *gpu = nvsim_gpu_by_index(a->device);
	u32 device = a->device;

	if (a->reserved0 || a->reserved[0] || a->reserved[1])
		return -EINVAL;
	if (!gpu)
		return -ENODEV;
	memset(a, 0, sizeof(*a));
	a->device = device;
	a->device_count = nvsim_gpu_count();
	a->abi_version = NVSIM_ABI_VERSION;
	a->page_size = NVSIM_PAGE_SIZE;
	a->bar_phys = gpu->bar_phys;
	a->bar_size = gpu->bar_size;
	a->free_bytes = (u64)(gpu->npages - gpu->used) << NVSIM_PAGE_SHIFT;
	memcpy(a->uuid, gpu->uuid, sizeof(a->uuid));
	a->pci_domain = pci_domain_nr(gpu->pdev->bus);
	a->pci_bus = gpu->pdev->bus->number;
	a->pci_device = PCI_SLOT(gpu->pdev->devfn);
	a->pci_function = PCI_FUNC(gpu->pdev->devfn);
	if (nvsim_param_dmabuf())
		a->caps |= NVSIM_CAP_DMABUF;
	if (nvsim_param_dmabuf_mmap())
		a->caps |= NVSIM_CAP_DMABUF_MMAP;
	return 0;
}

static int nvsim_ioc_mem_create(struct nvsim_ctx *ctx,
				struct nvsim_mem_create *a)
{
	struct nvsim_dev *gpu = nvsim_gpu_by_index(a->device);
	struct nvsim_mem *mem;
	int ret;

	if (a->reserved || !a->size || !nvsim_aligned(a->size))
		return -EINVAL;
	if (!gpu)
		return -ENODEV;
	mem = nvsim_mem_create(gpu, a->size, a->user_flags);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	ret = nvsim_handle_add(ctx, mem, &a->handle);
	nvsim_mem_put(mem);	/* the handle holds it now, or nobody */
	return ret;
}

static int nvsim_ioc_mem_release(struct nvsim_ctx *ctx,
				 struct nvsim_mem_release *a)
{
	if (a->reserved)
		return -EINVAL;
	return nvsim_handle_release(ctx, a->handle);
}

static int nvsim_ioc_mem_retain(struct nvsim_ctx *ctx,
				struct nvsim_mem_retain *a)
{
	struct nvsim_mapping *map = nvsim_find_map(ctx, a->va, 1);
	int ret;

	if (!map)
		return -ENOENT;
	ret = nvsim_handle_add(ctx, map->mem, &a->handle);
	if (ret)
		return ret;
	a->user_flags = map->mem->user_flags;
	a->size = map->mem->size;
	return 0;
}

static int nvsim_ioc_mem_info(struct nvsim_ctx *ctx, struct nvsim_mem_info *a)
{
	struct nvsim_mem *mem = nvsim_handle_mem(ctx, a->handle);

	if (!mem)
		return -ENOENT;
	a->user_flags = mem->user_flags;
	a->size = mem->size;
	a->device = mem->gpu->index;
	return 0;
}

static int nvsim_ioc_map(struct nvsim_ctx *ctx, struct nvsim_map *a)
{
	struct nvsim_mem *mem;

	if (a->reserved)
		return -EINVAL;
	mem = nvsim_handle_mem(ctx, a->handle);
	if (!mem)
		return -ENOENT;
	return nvsim_map_add(ctx, mem, a->va, a->size, a->offset,
			     &a->buffer_id);
}

static int nvsim_ioc_unmap(struct nvsim_ctx *ctx, struct nvsim_unmap *a)
{
	return nvsim_unmap_range(ctx, a->va, a->size);
}

static int nvsim_ioc_alloc(struct nvsim_ctx *ctx, struct nvsim_alloc *a)
{
	struct nvsim_dev *gpu = nvsim_gpu_by_index(a->device);
	struct nvsim_mem *mem;
	int ret;

	if (!nvsim_range_ok(a->va, a->size))
		return -EINVAL;
	if (!gpu)
		return -ENODEV;
	if (nvsim_overlaps(ctx->mm, a->va, a->size))
		return -EEXIST;
	mem = nvsim_mem_create(gpu, a->size, a->user_flags);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	ret = nvsim_map_add(ctx, mem, a->va, a->size, 0, &a->buffer_id);
	nvsim_mem_put(mem);	/* the mapping holds it now, or nobody */
	return ret;
}

static int nvsim_ioc_query(struct nvsim_ctx *ctx, struct nvsim_query *a)
{
	struct nvsim_mapping *map = nvsim_find_map(ctx, a->va, 1);
	u64 va = a->va;

	if (!map)
		return -ENOENT;
	memset(a, 0, sizeof(*a));
	a->va = va;
	a->base = map->va;
	a->size = map->size;
	a->offset = map->offset;
	a->mem_size = map->mem->size;
	a->buffer_id = map->buffer_id;
	a->p2p_token = ctx->p2p_token;
	a->va_space = ctx->va_space;
	a->user_flags = map->mem->user_flags;
	a->device = map->mem->gpu->index;
	return 0;
}

static int nvsim_ioc_memset(struct nvsim_ctx *ctx, struct nvsim_memset *a,
			    void *bounce)
{
	struct nvsim_mapping *map;
	u64 len, done, n, va;
	unsigned int i;

	if (a->elem_size != 1 && a->elem_size != 2 && a->elem_size != 4)
		return -EINVAL;
	if (a->va & (a->elem_size - 1))
		return -EINVAL;
	if (!a->count)
		return 0;
	if (a->count > U64_MAX / a->elem_size)
		return -EINVAL;
	len = a->count * a->elem_size;
	map = nvsim_find_map(ctx, a->va, len);
	if (!map)
		return -EFAULT;

	if (a->elem_size == 2)
		for (i = 0; i < NVSIM_CHUNK / 2; i++)
			((u16 *)bounce)[i] = a->value;
	else if (a->elem_size == 4)
		for (i = 0; i < NVSIM_CHUNK / 4; i++)
			((u32 *)bounce)[i] = a->value;

	for (done = 0; done < len; done += n) {
		va = a->va + done;
		n = min(len - done, nvsim_page_left(va));
		if (a->elem_size == 1)
			memset_io(nvsim_map_io(map, va), a->value & 0xff, n);
		else
			memcpy_toio(nvsim_map_io(map, va), bounce, n);
	}
	wmb();	/* drain write-combining buffers before user space reads */
	return 0;
}

/* Bytes from the start of the page of e - 1 to e (e is an end address). */
static inline u64 nvsim_page_before(u64 e)
{
	return ((e - 1) & (NVSIM_PAGE_BYTES - 1)) + 1;
}

static int nvsim_ioc_copy(struct nvsim_ctx *ctx, struct nvsim_copy *a,
			  void *bounce)
{
	struct nvsim_mapping *dmap, *smap;
	bool backward;
	u64 done, n, s, d;

	if (!a->size)
		return 0;
	dmap = nvsim_find_map(ctx, a->dst, a->size);
	smap = nvsim_find_map(ctx, a->src, a->size);
	if (!dmap || !smap)
		return -EFAULT;

	/* Overlapping with dst above src: copy from the end (memmove). */
	backward = a->dst > a->src && a->dst - a->src < a->size;
	for (done = 0; done < a->size; done += n) {
		if (!backward) {
			s = a->src + done;
			d = a->dst + done;
			n = min3(a->size - done, nvsim_page_left(s),
				 nvsim_page_left(d));
		} else {
			s = a->src + a->size - done;
			d = a->dst + a->size - done;
			n = min3(a->size - done, nvsim_page_before(s),
				 nvsim_page_before(d));
			s -= n;
			d -= n;
		}
		memcpy_fromio(bounce, nvsim_map_io(smap, s), n);
		memcpy_toio(nvsim_map_io(dmap, d), bounce, n);
	}
	wmb();	/* as in memset */
	return 0;
}

static int nvsim_ioc_register_pid(struct nvsim_ctx *ctx,
				  struct nvsim_register_pid *a)
{
	if (a->reserved || a->pid <= 0)
		return -EINVAL;
	return nvsim_register_client(ctx, a->pid);
}

union nvsim_ioc_args {
	struct nvsim_info info;
	struct nvsim_mem_create mem_create;
	struct nvsim_mem_release mem_release;
	struct nvsim_mem_retain mem_retain;
	struct nvsim_mem_info mem_info;
	struct nvsim_map map;
	struct nvsim_unmap unmap;
	struct nvsim_alloc alloc;
	struct nvsim_query query;
	struct nvsim_memset memset;
	struct nvsim_copy copy;
	struct nvsim_export_dmabuf export_dmabuf;
	struct nvsim_register_pid register_pid;
};

long nvsim_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct nvsim_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	union nvsim_ioc_args a;
	void *bounce = NULL;
	long ret;

	if (current->mm != ctx->mm)
		return -EACCES;

	switch (cmd) {
	case NVSIM_IOC_INFO:
	case NVSIM_IOC_MEM_CREATE:
	case NVSIM_IOC_MEM_RELEASE:
	case NVSIM_IOC_MEM_RETAIN:
	case NVSIM_IOC_MEM_INFO:
	case NVSIM_IOC_MAP:
	case NVSIM_IOC_UNMAP:
	case NVSIM_IOC_ALLOC:
	case NVSIM_IOC_QUERY:
	case NVSIM_IOC_EXPORT_DMABUF:
	case NVSIM_IOC_REGISTER_PID:
		break;
	case NVSIM_IOC_MEMSET:
	case NVSIM_IOC_COPY:
		bounce = kvmalloc(NVSIM_CHUNK, GFP_KERNEL);
		if (!bounce)
			return -ENOMEM;
		break;
	default:
		return -ENOTTY;
	}
	BUILD_BUG_ON(sizeof(a) > 128);
	memset(&a, 0, sizeof(a));
	if ((_IOC_DIR(cmd) & _IOC_WRITE) &&
	    copy_from_user(&a, uarg, _IOC_SIZE(cmd))) {
		ret = -EFAULT;
		goto out;
	}

	if (cmd == NVSIM_IOC_EXPORT_DMABUF) {
		/* Takes the lock itself: the dma-buf's release needs it. */
		ret = nvsim_export_dmabuf(ctx, &a.export_dmabuf);
		goto copy_out;
	}

	mutex_lock(&nvsim_lock);
	switch (cmd) {
	case NVSIM_IOC_INFO:
		ret = nvsim_ioc_info(ctx, &a.info);
		break;
	case NVSIM_IOC_MEM_CREATE:
		ret = nvsim_ioc_mem_create(ctx, &a.mem_create);
		break;
	case NVSIM_IOC_MEM_RELEASE:
		ret = nvsim_ioc_mem_release(ctx, &a.mem_release);
		break;
	case NVSIM_IOC_MEM_RETAIN:
		ret = nvsim_ioc_mem_retain(ctx, &a.mem_retain);
		break;
	case NVSIM_IOC_MEM_INFO:
		ret = nvsim_ioc_mem_info(ctx, &a.mem_info);
		break;
	case NVSIM_IOC_MAP:
		ret = nvsim_ioc_map(ctx, &a.map);
		break;
	case NVSIM_IOC_UNMAP:
		ret = nvsim_ioc_unmap(ctx, &a.unmap);
		break;
	case NVSIM_IOC_ALLOC:
		ret = nvsim_ioc_alloc(ctx, &a.alloc);
		break;
	case NVSIM_IOC_QUERY:
		ret = nvsim_ioc_query(ctx, &a.query);
		break;
	case NVSIM_IOC_REGISTER_PID:
		ret = nvsim_ioc_register_pid(ctx, &a.register_pid);
		break;
	case NVSIM_IOC_MEMSET:
		ret = nvsim_ioc_memset(ctx, &a.memset, bounce);
		break;
	default: /* NVSIM_IOC_COPY */
		ret = nvsim_ioc_copy(ctx, &a.copy, bounce);
		break;
	}
	mutex_unlock(&nvsim_lock);

copy_out:
	/*
	 * A failed copy-out leaves a created object behind; it belongs to
	 * the fd and goes when the fd is closed, like any other (an exported
	 * dma-buf's fd stays installed in the caller's table).
	 */
	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(uarg, &a, _IOC_SIZE(cmd)))
		ret = -EFAULT;
out:
	kvfree(bounce);
	return ret;
}
