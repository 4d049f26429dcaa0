// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: device memory (simulated GPU, not real hardware).  Each GPU's
 * BAR is cut into 64 KiB pages; a memory object is a set of them, on one
 * GPU, kept while anything refers to it: handles and mappings of an open
 * /dev/nvsim (nvsim_ctx.c), persistent pins, dma-bufs.
 */
#include <linux/bitmap.h>
#include <linux/err.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "nvsim.h"

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

/* size bytes (a multiple of 64 KiB) of gpu's pages, one reference. */
struct nvsim_mem *nvsim_mem_create(struct nvsim_dev *gpu, u64 size,
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
