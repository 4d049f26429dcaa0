// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: the nvidia_p2p_* kernel API over the simulated GPU's memory
 * (not real hardware).  It is as strict as NVIDIA's driver wherever the
 * driver can hurt a client: each rule, and the driver function it models,
 * is listed in sim/nvsim/README.md.  In short:
 *
 *  - non-persistent pins (nvidia_p2p_get_pages) need a free callback;
 *    freeing the memory runs it synchronously from the freeing task,
 *    with nvsim_lock (our "RM API lock") held, then frees the table; the
 *    callback may run before get_pages has returned;
 *  - put_pages finds its pin by the table's address, but only among the
 *    pins of the client its token names: with token 0, those of the
 *    calling process (current's thread group); not found, it answers 0
 *    and releases nothing.  With a token, a table that is not that
 *    token's is freed all the same by the driver (a double free there):
 *    here a WARN and a counter, nothing freed;
 *  - freed tables are reused, newest first, as the slab allocator NVIDIA
 *    gets them from does, so a stale table is met in tests, not only in
 *    theory;
 *  - persistent pins hold the memory until put_pages_persistent, even
 *    when it is freed meanwhile; they have no callback, and their put has
 *    no caller check.  put_pages_persistent of anything but a live
 *    persistent table is a use after free in the driver: a WARN here;
 *  - put_pages can fail as the driver's does: before any lock (fail_puts:
 *    nothing released or dropped, safe to retry), or inside RM after it
 *    (fail_puts_rm: nothing released, yet a persistent put has dropped
 *    the GPU reference that its pin held, so it must not be put again);
 *  - each persistent pin holds a reference on its GPU's usage count,
 *    which a reset waits for; dropping one that nobody holds WARNs, as
 *    the driver's nv_close_device does;
 *  - a get_pages can be made to fail after its callback was registered
 *    (fail_gets_late), when the callback may already have run;
 *  - a request is validated before anything is allocated for it (unlike
 *    NVIDIA's, which sizes its arrays from the length first).
 *
 * A virtual address names one mapping, and so one memory object on one
 * GPU: that GPU's BAR pages, UUID and counters are the pin's.  Freeing
 * memory fires only the callbacks of pins on that memory.
 *
 * This file makes pins and decides who may release them; the pins
 * themselves, their reuse and their callbacks are nvsim_pins.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "nvsim.h"
#include "nvsim_compat.h"

static struct nvsim_p2p_counters nvsim_p2p_count;
/* Counted outside nvsim_lock: the failure comes before any lock. */
static atomic_long_t nvsim_early_failed_puts = ATOMIC_LONG_INIT(0);
/* Numbers the get_pages calls, so that a late failure finds its pin. */
static u64 nvsim_last_get;

/* A copy of the API's counters, for /proc. */
void nvsim_p2p_snapshot(struct nvsim_p2p_counters *p)
{
	mutex_lock(&nvsim_lock);
	*p = nvsim_p2p_count;
	mutex_unlock(&nvsim_lock);
	p->failed_puts = atomic_long_read(&nvsim_early_failed_puts);
}

/*
 * Drops a GPU reference that a persistent pin held.  The driver's
 * nv_close_device WARNs and stops at 0 ("Attempting to close unopened
 * minor device"); before that, at 0, it would have stopped the device
 * under whoever else still used it.
 */
static void nvsim_gpu_ref_put(struct nvsim_dev *gpu)
{
	lockdep_assert_held(&nvsim_lock);
	if (gpu->count.gpu_refs) {
		gpu->count.gpu_refs--;
		return;
	}
	nvsim_p2p_count.gpu_ref_underflows++;
	WARN(1, "nvsim: GPU %u: a GPU reference dropped that nobody held (NVIDIA's nv_close_device: attempting to close an unopened device)\n",
	     gpu->index);
}

/*
 * A reset of gpu (nvidia-smi -r), refused while the GPU is in use: while
 * kernel clients hold its usage count (persistent pins: the driver's
 * gpuIsInUse counts externalKernelClientCount, which nvidia_dev_get_uuid
 * raises) or user clients have memory on it.  A reset frees what RM held
 * for the GPU: the pins abandoned by a failed persistent put.
 */
int nvsim_gpu_reset(u32 index)
{
	struct nvsim_counters *c;
	struct nvsim_dev *gpu;
	int ret = 0;

	mutex_lock(&nvsim_lock);
	gpu = nvsim_gpu_by_index(index);
	if (!gpu) {
		ret = -ENODEV;
		goto unlock;
	}
	c = &gpu->count;
	if (c->gpu_refs || c->allocations || c->dmabufs) {
		pr_info("GPU %u is in use (%lu GPU references, %lu allocations, %lu dma-bufs): reset refused\n",
			index, c->gpu_refs, c->allocations, c->dmabufs);
		ret = -EBUSY;
		goto unlock;
	}
	nvsim_free_abandoned_pins(gpu);
	c->resets++;
	pr_info("GPU %u reset\n", index);
unlock:
	mutex_unlock(&nvsim_lock);
	return ret;
}

/*
 * get_pages failing after its pin was made and its callback registered:
 * the pin is undone, as the driver's failure path puts what it got, unless
 * its callback ran (and freed it) meanwhile.
 */
static int nvsim_fail_late(u64 serial, u64 va)
{
	struct nvsim_pin *pin;

	mutex_lock(&nvsim_lock);
	nvsim_p2p_count.late_failed_gets++;
	pin = nvsim_find_pin_serial(serial);
	if (pin) {
		if (pin->persistent)
			nvsim_gpu_ref_put(pin->gpu);
		nvsim_pin_free(pin, false);
	}
	mutex_unlock(&nvsim_lock);
	pr_info("get_pages(%#llx) failed late (fail_gets_late)%s\n", va,
		pin ? "" : ", after its free callback ran");
	return -EIO;
}

static int nvsim_pin(u64 p2p_token, u32 va_space, u64 va, u64 len,
		     bool persistent, void (*free_callback)(void *data),
		     void *data, struct nvidia_p2p_page_table **page_table)
{
	struct nvsim_mapping *map;
	struct nvsim_pin *pin;
	struct nvsim_mem *mem;
	u64 first, n, i, page, serial;
	int ret = -EINVAL;
	bool recycled, late;

	might_sleep();
	if (!page_table || !len || (va | len) & (NVSIM_PAGE_BYTES - 1) ||
	    va + len < va)
		return -EINVAL;
	n = len >> NVSIM_PAGE_SHIFT;

	/* The range first: its size bounds what is allocated for it. */
	mutex_lock(&nvsim_lock);
	nvsim_p2p_count.get_pages_requests++;
	map = nvsim_lookup(p2p_token, va_space, va, len);
	if (!map)
		goto unlock;

	ret = -ENOMEM;
	pin = nvsim_pin_new(&recycled);
	if (!pin)
		goto unlock;
	if (recycled)
		nvsim_p2p_count.recycled_tables++;
	pin->pt.pages = kvmalloc_array(n, sizeof(*pin->pt.pages), GFP_KERNEL);
	pin->page_structs = kvcalloc(n, sizeof(*pin->page_structs),
				     GFP_KERNEL);
	if (!pin->pt.pages || !pin->page_structs)
		goto free_pin;

	mem = map->mem;
	first = (map->offset + (va - map->va)) >> NVSIM_PAGE_SHIFT;
	for (i = 0; i < n; i++) {
		page = mem->pages[first + i];
		pin->page_structs[i].physical_address =
			mem->gpu->bar_phys + (page << NVSIM_PAGE_SHIFT);
		pin->pt.pages[i] = &pin->page_structs[i];
	}
	pin->gpu = mem->gpu;
	memcpy(pin->uuid, mem->gpu->uuid, sizeof(pin->uuid));
	pin->pt.version = NVIDIA_P2P_PAGE_TABLE_VERSION;
	pin->pt.page_size = NVIDIA_P2P_PAGE_SIZE_64KB;
	pin->pt.entries = n;
	pin->pt.gpu_uuid = pin->uuid;
	pin->pt.flags = 0;
	pin->va = va;
	pin->persistent = persistent;
	pin->serial = serial = ++nvsim_last_get;
	if (persistent) {
		pin->mem = mem;
		/* nvidia_dev_get_uuid: the GPU is in use while pinned. */
		mem->gpu->count.gpu_refs++;
	} else {
		pin->map = map;
		pin->free_callback = free_callback;
		pin->data = data;
	}
	nvsim_pin_add(pin);
	mutex_unlock(&nvsim_lock);

	nvsim_hook_event(NVSIM_EV_PIN, va, len);
	*page_table = &pin->pt;
	/*
	 * NVIDIA registers the callback last, under its own lock, and
	 * returns after dropping it: the callback may have run (and freed
	 * the table) by the time the caller sees the table.
	 */
	nvsim_hook_at(NVSIM_AT_GET_RETURN, va);
	late = nvsim_param_take_fail_get_late();
	if (!late)
		return 0;
	*page_table = NULL;
	return nvsim_fail_late(serial, va);

free_pin:
	kvfree(pin->pt.pages);
	kvfree(pin->page_structs);
	kfree(pin);
unlock:
	mutex_unlock(&nvsim_lock);
	return ret;
}

int nvidia_p2p_get_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address, uint64_t length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	if (!free_callback)
		return -EINVAL;
	return nvsim_pin(p2p_token, va_space, virtual_address, length, false,
			 free_callback, data, page_table);
}
EXPORT_SYMBOL_NVSIM_P2P(nvidia_p2p_get_pages);

int nvidia_p2p_get_pages_persistent(uint64_t virtual_address, uint64_t length,
				    struct nvidia_p2p_page_table **page_table,
				    uint32_t flags)
{
	/* BAR1 mappings are forced only on coherent platforms, not here. */
	if (flags == NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING)
		return -ENOTSUPP;
	if (flags)
		return -EINVAL;
	return nvsim_pin(0, 0, virtual_address, length, true, NULL, NULL,
			 page_table);
}
EXPORT_SYMBOL_NVSIM_P2P(nvidia_p2p_get_pages_persistent);

/*
 * Whether a non-persistent put_pages with p2p_token may find pin: RM's
 * RmP2PPutPages looks the table up in the client the token names
 * (CliGetThirdPartyP2PInfoFromToken), or with token 0 in the clients that
 * list the calling process, by current->tgid (RmP2PGetInfoWithoutToken):
 * its own, and those that registered its pid.
 */
static bool nvsim_put_finds(const struct nvsim_pin *pin, u64 p2p_token)
{
	const struct nvsim_ctx *ctx;

	if (pin->persistent)
		return false;	/* kept in RM's own client, not the caller's */
	ctx = pin->map->ctx;
	if (p2p_token)
		return ctx->p2p_token == p2p_token;
	return nvsim_ctx_serves(ctx, task_tgid(current));
}

/*
 * An injected failure inside RM (fail_puts_rm): with the API lock taken
 * (rmapiLockAcquire) or the GPU's (rmDeviceGpuLocksAcquire) failing, the
 * pin stays, and nv_p2p_put_pages WARNs; nvsim only says so, since a
 * test asked for it.
 */
static bool nvsim_put_fails_in_rm(u64 va, bool persistent)
{
	lockdep_assert_held(&nvsim_lock);
	if (!nvsim_param_take_fail_put_rm())
		return false;
	nvsim_p2p_count.rm_failed_puts++;
	pr_info("put_pages%s(%#llx) failed inside RM (fail_puts_rm): the pin stays%s; NVIDIA's driver warns here\n",
		persistent ? "_persistent" : "", va,
		persistent ? ", its GPU reference dropped" : "");
	return true;
}

static int nvsim_put_pages(u64 p2p_token, u64 va,
			   struct nvidia_p2p_page_table *page_table)
{
	struct nvsim_pin *pin;
	int ret = 0;

	mutex_lock(&nvsim_lock);
	nvsim_p2p_count.put_pages_requests++;
	if (nvsim_put_fails_in_rm(va, false)) {
		ret = -EIO;
		goto unlock;
	}
	pin = nvsim_find_pin(page_table);
	if (pin && nvsim_put_finds(pin, p2p_token)) {
		/* RM finds the table by its address alone. */
		WARN(pin->va != va,
		     "nvsim: put_pages(%#llx) was given the table of the pin at %#llx: a stale table, reused; released that pin\n",
		     va, pin->va);
		pin->gpu->count.put_pages_calls++;
		nvsim_pin_free(pin, false);
	} else if (!p2p_token || !nvsim_token_exists(p2p_token)) {
		/* NV_ERR_OBJECT_NOT_FOUND, which nv_p2p_put_pages makes 0. */
		if (pin)
			nvsim_p2p_count.foreign_puts++;
		else
			nvsim_p2p_count.stale_puts++;
	} else {
		/*
		 * thirdpartyp2pDelMappingInfoByKey answers NV_OK for a key
		 * it does not have, and nv_p2p_put_pages then frees the
		 * table it was given: freed already (the callback ran), or
		 * another pin's.  The driver's heap would be corrupt.
		 */
		nvsim_p2p_count.double_frees++;
		WARN(1, "nvsim: put_pages(token %#llx, %#llx) of a table that token does not hold (%s): NVIDIA's driver frees it anyway\n",
		     p2p_token, va, pin ? "another pin's" : "freed already");
	}
unlock:
	mutex_unlock(&nvsim_lock);
	return ret;
}

static int nvsim_put_pages_persistent(u64 va,
				      struct nvidia_p2p_page_table *page_table)
{
	struct nvsim_pin *pin;
	int ret = 0;

	mutex_lock(&nvsim_lock);
	nvsim_p2p_count.put_pages_requests++;
	pin = nvsim_find_pin(page_table);
	if (!pin || !pin->persistent) {
		/*
		 * nvidia_p2p_put_pages_persistent reads the table's UUID,
		 * and nv_p2p_put_pages its container's RM object, before
		 * anything looks it up: a use after free (or of a table
		 * that has no such object) in the driver.
		 */
		nvsim_p2p_count.use_after_free++;
		WARN(1, "nvsim: put_pages_persistent(%#llx) of a table that is no live persistent pin (%s): a use after free in NVIDIA's driver\n",
		     va, pin ? "a non-persistent pin's" : "freed already");
		ret = -EINVAL;
	} else if (pin->va != va) {
		/* The driver ignores the address; refusing is harsher. */
		ret = -EINVAL;
	} else {
		/*
		 * nvidia_p2p_put_pages_persistent drops the GPU reference
		 * (nvidia_dev_put_uuid) whatever RM answered: a pin whose
		 * put failed in RM stays, with no reference to drop again.
		 */
		nvsim_gpu_ref_put(pin->gpu);
		if (nvsim_put_fails_in_rm(va, true)) {
			if (!pin->abandoned)
				pin->gpu->count.abandoned_pins++;
			pin->abandoned = true;
			ret = -EIO;
		} else {
			pin->gpu->count.put_pages_calls++;
			nvsim_pin_free(pin, false);
		}
	}
	mutex_unlock(&nvsim_lock);
	return ret;
}

static int nvsim_unpin(u64 p2p_token, u64 virtual_address,
		       struct nvidia_p2p_page_table *page_table,
		       bool persistent)
{
	int ret;

	might_sleep();
	if (!page_table)
		return 0;
	nvsim_hook_event(NVSIM_EV_PUT_ENTER, virtual_address, 1);
	nvsim_hook_at(NVSIM_AT_PUT_ENTER, virtual_address);
	if (nvsim_param_take_fail_put()) {
		/*
		 * nv_kmem_cache_alloc_stack failed: -ENOMEM before any lock,
		 * so it does not wait for a running callback either.
		 */
		atomic_long_inc(&nvsim_early_failed_puts);
		ret = -ENOMEM;
	} else if (persistent) {
		/* Both take nvsim_lock: they wait for a running callback. */
		ret = nvsim_put_pages_persistent(virtual_address, page_table);
	} else {
		ret = nvsim_put_pages(p2p_token, virtual_address, page_table);
	}
	nvsim_hook_at(NVSIM_AT_PUT_EXIT, virtual_address);
	return ret;
}

int nvidia_p2p_put_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address,
			 struct nvidia_p2p_page_table *page_table)
{
	return nvsim_unpin(p2p_token, virtual_address, page_table, false);
}
EXPORT_SYMBOL_NVSIM_P2P(nvidia_p2p_put_pages);

int nvidia_p2p_put_pages_persistent(uint64_t virtual_address,
				    struct nvidia_p2p_page_table *page_table,
				    uint32_t flags)
{
	if (flags)
		return -EINVAL;
	return nvsim_unpin(0, virtual_address, page_table, true);
}
EXPORT_SYMBOL_NVSIM_P2P(nvidia_p2p_put_pages_persistent);

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	/* The table is freed by put_pages or after the callback. */
	return 0;
}
EXPORT_SYMBOL_NVSIM_P2P(nvidia_p2p_free_page_table);

int nvidia_p2p_dma_map_pages(struct pci_dev *peer,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping)
{
	struct nvsim_dma_map *dm;
	struct nvsim_pin *pin;
	u32 i;
	int ret;

	might_sleep();
	if (!peer || !page_table || !dma_mapping)
		return -EINVAL;

	dm = kzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm)
		return -ENOMEM;

	mutex_lock(&nvsim_lock);
	pin = nvsim_find_pin(page_table);
	if (!pin) {
		ret = -EINVAL;
		goto err_unlock;
	}
	dm->m.dma_addresses = kvmalloc_array(pin->pt.entries,
					     sizeof(*dm->m.dma_addresses),
					     GFP_KERNEL);
	if (!dm->m.dma_addresses) {
		ret = -ENOMEM;
		goto err_unlock;
	}
	/* No IOMMU is modelled: the bus address of each BAR page. */
	for (i = 0; i < pin->pt.entries; i++)
		dm->m.dma_addresses[i] = pin->page_structs[i].physical_address -
			pin->gpu->bar_phys + pin->gpu->bar_bus;
	dm->m.version = NVIDIA_P2P_DMA_MAPPING_VERSION;
	dm->m.page_size_type = NVIDIA_P2P_PAGE_SIZE_64KB;
	dm->m.entries = pin->pt.entries;
	dm->m.pci_dev = peer;
	list_add_tail(&dm->node, &pin->dma_maps);
	mutex_unlock(&nvsim_lock);

	*dma_mapping = &dm->m;
	return 0;

err_unlock:
	mutex_unlock(&nvsim_lock);
	kfree(dm);
	return ret;
}
EXPORT_SYMBOL_NVSIM_P2P(nvidia_p2p_dma_map_pages);

int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer,
			       struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping)
{
	struct nvsim_dma_map *dm;
	struct nvsim_pin *pin;

	might_sleep();
	if (!peer || !page_table || !dma_mapping)
		return -EINVAL;

	mutex_lock(&nvsim_lock);
	pin = nvsim_find_pin(page_table);
	if (pin) {
		list_for_each_entry(dm, &pin->dma_maps, node) {
			if (&dm->m == dma_mapping) {
				list_del(&dm->node);
				kvfree(dm->m.dma_addresses);
				kfree(dm);
				break;
			}
		}
	}
	mutex_unlock(&nvsim_lock);
	/* Already torn down (callback ran) is not an error. */
	return 0;
}
EXPORT_SYMBOL_NVSIM_P2P(nvidia_p2p_dma_unmap_pages);

int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return 0;
}
EXPORT_SYMBOL_NVSIM_P2P(nvidia_p2p_free_dma_mapping);
