// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: the pins (simulated GPU, not real hardware), each a page table
 * that nvidia_p2p_get_pages[_persistent] handed out (nvsim_p2p.c makes
 * them and decides who may release them): the list of those not yet
 * released, their release, and the free callbacks that freeing memory
 * runs.  Released tables are reused, newest first, as NVIDIA's come from
 * the slab allocator, so a stale table is met in tests, not only in
 * theory.
 */
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "nvsim.h"

/* Every pin not yet released, persistent or not; nvsim_lock. */
static LIST_HEAD(nvsim_pins);

/*
 * Freed pins (page tables), newest first, for the next pins to reuse;
 * nvsim_lock.
 */
#define NVSIM_PIN_CACHE	16
static struct nvsim_pin *nvsim_pin_cache[NVSIM_PIN_CACHE];
static unsigned int nvsim_pin_cached;

/*
 * A zeroed pin, the newest freed one if any: *recycled tells whether it
 * is a table that a callback freed, which a client may still hold.
 */
struct nvsim_pin *nvsim_pin_new(bool *recycled)
{
	struct nvsim_pin *pin;

	lockdep_assert_held(&nvsim_lock);
	*recycled = false;
	if (!nvsim_pin_cached) {
		pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	} else {
		pin = nvsim_pin_cache[--nvsim_pin_cached];
		*recycled = pin->freed_by_callback;
		memset(pin, 0, sizeof(*pin));
	}
	if (pin) {
		INIT_LIST_HEAD(&pin->dma_maps);
		INIT_LIST_HEAD(&pin->map_node);
	}
	return pin;
}

/*
 * Files a pin made whole (its table, GPU, and map or mem): a
 * non-persistent pin on its mapping, whose freeing fires its callback; a
 * persistent one holding its memory.  Counted on its GPU.
 */
void nvsim_pin_add(struct nvsim_pin *pin)
{
	struct nvsim_counters *c = &pin->gpu->count;

	lockdep_assert_held(&nvsim_lock);
	if (pin->persistent) {
		pin->mem->refs++;
		c->persistent_pins++;
	} else {
		list_add_tail(&pin->map_node, &pin->map->pins);
	}
	list_add_tail(&pin->node, &nvsim_pins);
	c->outstanding_pins++;
	c->pinned_pages += pin->pt.entries;
	c->get_pages_calls++;
}

/* The live pin whose page table is pt, or NULL. */
struct nvsim_pin *nvsim_find_pin(struct nvidia_p2p_page_table *pt)
{
	struct nvsim_pin *pin;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry(pin, &nvsim_pins, node)
		if (&pin->pt == pt)
			return pin;
	return NULL;
}

static void nvsim_pin_recycle(struct nvsim_pin *pin, bool by_callback)
{
	lockdep_assert_held(&nvsim_lock);
	if (nvsim_pin_cached == NVSIM_PIN_CACHE) {
		kfree(nvsim_pin_cache[0]);
		memmove(nvsim_pin_cache, nvsim_pin_cache + 1,
			sizeof(nvsim_pin_cache) - sizeof(nvsim_pin_cache[0]));
		nvsim_pin_cached--;
	}
	/* What a reader of a stale table finds: no pages. */
	memset(&pin->pt, 0, sizeof(pin->pt));
	pin->freed_by_callback = by_callback;
	nvsim_pin_cache[nvsim_pin_cached++] = pin;
}

/* The live pin that get_pages number serial made, or NULL. */
struct nvsim_pin *nvsim_find_pin_serial(u64 serial)
{
	struct nvsim_pin *pin;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry(pin, &nvsim_pins, node)
		if (pin->serial == serial)
			return pin;
	return NULL;
}

/* Releases pin (by_callback: its memory was freed), undoing the add. */
void nvsim_pin_free(struct nvsim_pin *pin, bool by_callback)
{
	struct nvsim_dma_map *dm, *tmp;
	struct nvsim_counters *c;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry_safe(dm, tmp, &pin->dma_maps, node) {
		list_del(&dm->node);
		kvfree(dm->m.dma_addresses);
		kfree(dm);
	}
	list_del(&pin->node);
	/* Counted first: the mem's last reference may take the GPU along. */
	c = &pin->gpu->count;
	c->outstanding_pins--;
	c->pinned_pages -= pin->pt.entries;
	if (pin->persistent) {
		c->persistent_pins--;
		if (pin->abandoned)
			c->abandoned_pins--;
		nvsim_mem_put(pin->mem);
	} else {
		list_del(&pin->map_node);
	}
	kvfree(pin->pt.pages);
	kvfree(pin->page_structs);
	nvsim_pin_recycle(pin, by_callback);
}

/* Memory behind map is going away: invalidate its non-persistent pins. */
void nvsim_fire_callbacks(struct nvsim_mapping *map)
{
	struct nvsim_pin *pin, *tmp;
	u64 va;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry_safe(pin, tmp, &map->pins, map_node) {
		va = pin->va;
		nvsim_hook_at(NVSIM_AT_CALLBACK, va);
		pin->free_callback(pin->data);
		pin->gpu->count.callbacks_fired++;
		nvsim_hook_at(NVSIM_AT_CALLBACK_DONE, va);
		nvsim_pin_free(pin, true);
		nvsim_hook_event(NVSIM_EV_CALLBACK, va, 1);
	}
	nvsim_hook_event(NVSIM_EV_FREE, map->va, map->size);
}

/*
 * A reset of gpu: RM's state for it is made anew, and with it go the
 * persistent pins whose put failed inside RM (nothing else can free them).
 */
void nvsim_free_abandoned_pins(struct nvsim_dev *gpu)
{
	struct nvsim_pin *pin, *tmp;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry_safe(pin, tmp, &nvsim_pins, node)
		if (pin->gpu == gpu && pin->abandoned)
			nvsim_pin_free(pin, false);
}

/* Module exit: pins a client never released (all persistent). */
void nvsim_free_leftover_pins(void)
{
	struct nvsim_pin *pin, *tmp;

	lockdep_assert_held(&nvsim_lock);
	list_for_each_entry_safe(pin, tmp, &nvsim_pins, node)
		nvsim_pin_free(pin, false);
	while (nvsim_pin_cached)
		kfree(nvsim_pin_cache[--nvsim_pin_cached]);
}
