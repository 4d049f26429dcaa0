// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: device memory and /dev/nvsim (simulated GPU, not real hardware).
 *
 * Memory objects are sets of 64 KiB BAR pages of one GPU; mappings place
 * them at device virtual addresses that the calling process reserved in
 * its own address space, one address space for every GPU.  Everything
 * belongs to the fd that created it and goes when the fd is released.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nvsim.h"
#include "nvsim_compat.h"

/* Bytes moved per step of read/write/copy; one page, bounded by a page. */
#define NVSIM_CHUNK	NVSIM_PAGE_BYTES

/* Every open /dev/nvsim; nvsim_lock. */
LIST_HEAD(nvsim_ctxs);
static u64 nvsim_next_buffer_id = 1;
/* The last p2p token handed out; nvsim_lock. */
static u64 nvsim_last_p2p_token;

static inline bool nvsim_aligned(u64 x)
{
	return !(x & (NVSIM_PAGE_BYTES - 1));
}

/* [va, va + size): non-empty, page aligned, no overflow, user addresses. */
static bool nvsim_range_ok(u64 va, u64 size)
{
	return size && nvsim_aligned(va) && nvsim_aligned(size) &&
	       va + size > va && va + size <= TASK_SIZE_MAX;
}

/* Page allocator */

static int nvsim_pages_alloc(struct nvsim_dev *gpu, unsigned long n, u32 *out)
{
	unsigned long i, start, bit;

	lockdep_assert_held(&nvsim_lock);
	if (n > gpu->npages - gpu->used)
		return -ENOMEM;

	if (nvsim_param_scatter()) {
		/* Descending: consecutive pages are never adjacent upward. */
		for (bit = gpu->npages, i = 0; i < n && bit-- > 0;)
			if (!test_bit(bit, gpu->bitmap))
				out[i++] = bit;
	} else {
		start = bitmap_find_next_zero_area(gpu->bitmap, gpu->npages, 0,
						   n, 0);
		if (start < gpu->npages) {
			for (i = 0; i < n; i++)
				out[i] = start + i;
		} else {
			i = 0;
			for_each_clear_bit(bit, gpu->bitmap, gpu->npages) {
				if (i == n)
					break;
				out[i++] = bit;
			}
		}
	}
	if (WARN_ON(i != n))
		return -ENOMEM;
	for (i = 0; i < n; i++)
		__set_bit(out[i], gpu->bitmap);
	gpu->used += n;
	return 0;
}

static void nvsim_pages_free(struct nvsim_dev *gpu, unsigned long n,
			     const u32 *pages)
{
	unsigned long i;

	lockdep_assert_held(&nvsim_lock);
	for (i = 0; i < n; i++) {
		if (nvsim_param_poison()) {
			memset_io(gpu->bar + ((u64)pages[i] << NVSIM_PAGE_SHIFT),
				  0x6b, NVSIM_PAGE_BYTES);
			/* GiBs of poison take a while: no soft lockup. */
			cond_resched();
		}
		__clear_bit(pages[i], gpu->bitmap);
	}
	if (nvsim_param_poison())
		wmb();	/* drain write-combining buffers */
	gpu->used -= n;
}

/* Memory objects */

static struct nvsim_mem *nvsim_mem_create(struct nvsim_dev *gpu, u64 size,
					  u32 user_flags)
{
	struct nvsim_mem *mem;
	int ret;

	lockdep_assert_held(&nvsim_lock);
	if (size >> NVSIM_PAGE_SHIFT > gpu->npages - gpu->used)
		return ERR_PTR(-ENOMEM);

	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem)
		return ERR_PTR(-ENOMEM);
	mem->size = size;
	mem->npages = size >> NVSIM_PAGE_SHIFT;
	mem->user_flags = user_flags;
	mem->pages = kvmalloc_array(mem->npages, sizeof(*mem->pages),
				    GFP_KERNEL);
	if (!mem->pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = nvsim_pages_alloc(gpu, mem->npages, mem->pages);
	if (ret)
		goto err_free_pages;
	nvsim_dev_get(gpu);
	mem->gpu = gpu;
	mem->refs = 1;
	return mem;

err_free_pages:
	kvfree(mem->pages);
err_free:
	kfree(mem);
	return ERR_PTR(ret);
}

void nvsim_mem_put(struct nvsim_mem *mem)
{
	lockdep_assert_held(&nvsim_lock);
	if (--mem->refs)
		return;
	nvsim_pages_free(mem->gpu, mem->npages, mem->pages);
	nvsim_dev_put(mem->gpu);
	kvfree(mem->pages);
	kfree(mem);
}

/* Handles */

static int nvsim_handle_add(struct nvsim_ctx *ctx, struct nvsim_mem *mem,
			    u32 *id)
{
	struct nvsim_handle *h;
	unsigned long idx;
	int ret;

	lockdep_assert_held(&nvsim_lock);
	xa_for_each(&ctx->handles, idx, h) {
		if (h->mem == mem) {
			h->refs++;
			*id = idx;
			return 0;
		}
	}
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	ret = xa_alloc(&ctx->handles, id, h, xa_limit_31b, GFP_KERNEL);
	if (ret) {
		kfree(h);
		return ret == -EBUSY ? -ENOMEM : ret;
	}
	h->mem = mem;
	h->refs = 1;
	mem->refs++;
	return 0;
}

static int nvsim_handle_release(struct nvsim_ctx *ctx, u32 id)
{
	struct nvsim_handle *h;

	lockdep_assert_held(&nvsim_lock);
	h = xa_load(&ctx->handles, id);
	if (!h)
		return -ENOENT;
	if (--h->refs)
		return 0;
	xa_erase(&ctx->handles, id);
	nvsim_mem_put(h->mem);
	kfree(h);
	return 0;
}

/* Mappings */

/* The mapping of ctx that holds all of [va, va + len), or NULL. */
struct nvsim_mapping *nvsim_find_map(struct nvsim_ctx *ctx, u64 va, u64 len)
{
	struct nvsim_mapping *map;

	lockdep_assert_held(&nvsim_lock);
	if (va + len < va)
		return NULL;
	list_for_each_entry(map, &ctx->maps, node) {
		if (va >= map->va && va - map->va < map->size)
			return map->size - (va - map->va) >= len ? map : NULL;
	}
	return NULL;
}

/* Does [va, va + size) overlap a mapping of any fd of this process? */
static bool nvsim_overlaps(struct mm_struct *mm, u64 va, u64 size)
{
	struct nvsim_ctx *ctx;
	struct nvsim_mapping *map;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry(ctx, &nvsim_ctxs, node) {
		if (ctx->mm != mm)
			continue;
		list_for_each_entry(map, &ctx->maps, node)
			if (va < map->va + map->size && map->va < va + size)
				return true;
	}
	return false;
}

static int nvsim_map_add(struct nvsim_ctx *ctx, struct nvsim_mem *mem,
			 u64 va, u64 size, u64 offset, u64 *buffer_id)
{
	struct nvsim_mapping *map, *pos;

	lockdep_assert_held(&nvsim_lock);
	if (!nvsim_range_ok(va, size) || !nvsim_aligned(offset) ||
	    offset >= mem->size || size > mem->size - offset)
		return -EINVAL;
	if (nvsim_overlaps(ctx->mm, va, size))
		return -EEXIST;

	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map)
		return -ENOMEM;
	map->ctx = ctx;
	map->mem = mem;
	mem->refs++;
	map->va = va;
	map->size = size;
	map->offset = offset;
	map->buffer_id = nvsim_next_buffer_id++;
	INIT_LIST_HEAD(&map->pins);

	/* Keep ctx->maps sorted by address. */
	list_for_each_entry(pos, &ctx->maps, node)
		if (pos->va > va)
			break;
	list_add_tail(&map->node, &pos->node);

	mem->gpu->count.allocations++;
	*buffer_id = map->buffer_id;
	return 0;
}

static void nvsim_map_destroy(struct nvsim_mapping *map)
{
	lockdep_assert_held(&nvsim_lock);
	/* Invalidate non-persistent pins first, as RM does on free. */
	nvsim_fire_callbacks(map);
	list_del(&map->node);
	map->mem->gpu->count.allocations--;
	nvsim_mem_put(map->mem);
	kfree(map);
}

static int nvsim_unmap_range(struct nvsim_ctx *ctx, u64 va, u64 size)
{
	struct nvsim_mapping *map, *tmp;
	bool found = false;

	lockdep_assert_held(&nvsim_lock);
	if (!size || va + size < va)
		return -EINVAL;
	/* Check first, then act: a partly covered mapping changes nothing. */
	list_for_each_entry(map, &ctx->maps, node) {
		if (va >= map->va + map->size || map->va >= va + size)
			continue;
		if (map->va < va || map->va + map->size > va + size)
			return -EINVAL;
		found = true;
	}
	if (!found)
		return -ENOENT;
	list_for_each_entry_safe(map, tmp, &ctx->maps, node)
		if (map->va >= va && map->va + map->size <= va + size)
			nvsim_map_destroy(map);
	return 0;
}

/* BAR address (kernel mapping) of device address va inside map. */
static void __iomem *nvsim_map_io(struct nvsim_mapping *map, u64 va)
{
	u64 off = map->offset + (va - map->va);
	u64 page = map->mem->pages[off >> NVSIM_PAGE_SHIFT];

	return map->mem->gpu->bar + (page << NVSIM_PAGE_SHIFT) +
	       (off & (NVSIM_PAGE_BYTES - 1));
}

/* Bytes from va to the end of its 64 KiB page. */
static inline u64 nvsim_page_left(u64 va)
{
	return NVSIM_PAGE_BYTES - (va & (NVSIM_PAGE_BYTES - 1));
}

/* ioctls: one function per command, called with nvsim_lock held. */

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
	struct nvsim_handle *h = xa_load(&ctx->handles, a->handle);

	if (!h)
		return -ENOENT;
	a->user_flags = h->mem->user_flags;
	a->size = h->mem->size;
	a->device = h->mem->gpu->index;
	return 0;
}

static int nvsim_ioc_map(struct nvsim_ctx *ctx, struct nvsim_map *a)
{
	struct nvsim_handle *h;

	if (a->reserved)
		return -EINVAL;
	h = xa_load(&ctx->handles, a->handle);
	if (!h)
		return -ENOENT;
	return nvsim_map_add(ctx, h->mem, a->va, a->size, a->offset,
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
};

static long nvsim_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
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
	struct nvsim_ctx *ctx;

	if (!current->mm)
		return -EINVAL;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	INIT_LIST_HEAD(&ctx->maps);
	xa_init_flags(&ctx->handles, XA_FLAGS_ALLOC1);
	mmgrab(current->mm);
	ctx->mm = current->mm;
	ctx->tgid = get_pid(task_tgid(current));

	mutex_lock(&nvsim_lock);
	if (!nvsim_gpu_count()) {
		mutex_unlock(&nvsim_lock);
		put_pid(ctx->tgid);
		mmdrop(ctx->mm);
		kfree(ctx);
		return -ENODEV;
	}
	/*
	 * As guessable as the driver's: RM's thirdpartyp2pConstruct takes
	 * p2p tokens from one global counter, and CliAddThirdPartyP2PVASpace
	 * gives an object's first VA space 0xfe00.
	 */
	ctx->p2p_token = ++nvsim_last_p2p_token;
	ctx->va_space = 0xfe00;
	list_add_tail(&ctx->node, &nvsim_ctxs);
	mutex_unlock(&nvsim_lock);

	file->private_data = ctx;
	return 0;
}

static int nvsim_release(struct inode *inode, struct file *file)
{
	struct nvsim_ctx *ctx = file->private_data;
	struct nvsim_mapping *map, *tmp;
	struct nvsim_handle *h;
	unsigned long idx;

	mutex_lock(&nvsim_lock);
	/* As a real driver at context teardown: callbacks fire here. */
	list_for_each_entry_safe(map, tmp, &ctx->maps, node)
		nvsim_map_destroy(map);
	xa_for_each(&ctx->handles, idx, h) {
		nvsim_mem_put(h->mem);
		kfree(h);
	}
	xa_destroy(&ctx->handles);
	list_del(&ctx->node);
	mutex_unlock(&nvsim_lock);

	put_pid(ctx->tgid);
	mmdrop(ctx->mm);
	kfree(ctx);
	return 0;
}

const struct file_operations nvsim_fops = {
	.owner = THIS_MODULE,
	.open = nvsim_open,
	.release = nvsim_release,
	.unlocked_ioctl = nvsim_ioctl,
	.read = nvsim_read,
	.write = nvsim_write,
	.llseek = default_llseek,
};
