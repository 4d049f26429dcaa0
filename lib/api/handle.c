// SPDX-License-Identifier: MIT
/*
 * The process-wide handle table.
 *
 * A handle is (generation << 32) | (slot + 1).  Slots live in chunks that
 * are allocated on demand and never freed, so looking a handle up is a few
 * loads with no lock (the copy functions do it on every call) and a stale
 * or made-up handle is refused instead of being dereferenced.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "base/log.h"

#define NO_SLOT		UINT32_MAX

_Atomic(struct gdr_region *) gdr_region_chunks[REGION_MAX_CHUNKS];
static uint32_t nr_chunks;		/* under table_lock */
static uint32_t free_head = NO_SLOT;	/* under table_lock */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/* Add a chunk of free slots; table_lock held. */
static int grow(void)
{
	struct gdr_region *chunk;
	uint32_t i, base;

	if (nr_chunks == REGION_MAX_CHUNKS)
		return ENOMEM;
	/* Line-aligned, as struct gdr_region asks (internal.h). */
	chunk = aligned_alloc(_Alignof(struct gdr_region),
			      REGION_CHUNK_SLOTS * sizeof(*chunk));
	if (!chunk)
		return ENOMEM;
	memset(chunk, 0, REGION_CHUNK_SLOTS * sizeof(*chunk));
	base = nr_chunks * REGION_CHUNK_SLOTS;
	for (i = 0; i < REGION_CHUNK_SLOTS; i++) {
		chunk[i].index = base + i;
		/* Generations start at 1 so no handle is ever 0 << 32. */
		atomic_init(&chunk[i].state, 1ULL << 32);
		chunk[i].next_free = i + 1 < REGION_CHUNK_SLOTS ? base + i + 1 :
							   free_head;
	}
	free_head = base;
	atomic_store_explicit(&gdr_region_chunks[nr_chunks], chunk, memory_order_release);
	nr_chunks++;
	return 0;
}

gdr_mh_t gdr_region_handle(const struct gdr_region *r)
{
	uint64_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
	gdr_mh_t mh = { .h = (unsigned long)(((uint64_t)REGION_GEN(s) << 32) |
					     ((uint64_t)r->index + 1)) };
	return mh;
}

struct gdr_region *gdr_region_alloc(struct gdr *owner, gdr_mh_t *mh)
{
	struct gdr_region *r = NULL;
	uint64_t s;

	pthread_mutex_lock(&table_lock);
	if (free_head == NO_SLOT && grow()) {
		pthread_mutex_unlock(&table_lock);
		gdr_err("out of memory for handles (%u in use): unpin some",
			nr_chunks * REGION_CHUNK_SLOTS);
		return NULL;
	}
	r = gdr_region_slot(free_head);
	free_head = r->next_free;
	pthread_mutex_unlock(&table_lock);

	r->prev = r->next = NULL;
	r->addr = r->size = r->pin_addr = r->pin_size = 0;
	r->pin_flags = 0;
	r->map_type = GDR_MAPPING_TYPE_NONE;
	r->bhandle = 0;
	r->bpriv = NULL;
	r->buffer_id = 0;
	r->ops = NULL;
	gdr_tunes_forget(r);
	atomic_store_explicit(&r->dma_id, 0, memory_order_relaxed);
	atomic_store_explicit(&r->map_va, 0, memory_order_relaxed);
	atomic_store_explicit(&r->map_len, 0, memory_order_relaxed);
	atomic_store_explicit(&r->copy, NULL, memory_order_relaxed);
	atomic_store_explicit(&r->owner, owner, memory_order_relaxed);
	s = atomic_load_explicit(&r->state, memory_order_relaxed);
	atomic_store_explicit(&r->state, (s & ~0xffffffffULL) | REGION_LIVE,
			      memory_order_release);
	*mh = gdr_region_handle(r);
	return r;
}

void gdr_region_free(struct gdr_region *r)
{
	uint64_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
	uint64_t gen = REGION_GEN(s) + 1;

	if (gen > UINT32_MAX)
		gen = 1;
	/* A new generation: every copy of the old handle is now refused. */
	atomic_store_explicit(&r->state, gen << 32, memory_order_release);
	atomic_store_explicit(&r->owner, NULL, memory_order_relaxed);

	pthread_mutex_lock(&table_lock);
	r->next_free = free_head;
	free_head = r->index;
	pthread_mutex_unlock(&table_lock);
}

/* Whether mh is a handle the parent had pinned when this process forked. */
int gdr_region_inherited(gdr_mh_t mh)
{
	struct gdr_region *r;
	uint64_t s;

	if ((uint32_t)mh.h == 0)
		return 0;
	r = gdr_region_slot((uint32_t)mh.h - 1);
	if (!r)
		return 0;
	s = atomic_load_explicit(&r->state, memory_order_acquire);
	return (s & REGION_INHERITED) &&
	       REGION_GEN(s) == (uint32_t)(mh.h >> 32);
}

/* Across fork the table is held still, so the child's copy is whole. */
void gdr_handles_fork_prepare(void)
{
	pthread_mutex_lock(&table_lock);
}

void gdr_handles_fork_parent(void)
{
	pthread_mutex_unlock(&table_lock);
}

/*
 * In the child, alone: every live handle becomes an inherited one, which
 * lookups refuse (it is not LIVE) and copies never trust (not MAPPED).
 * Its slot is never reused here, so the handle keeps being recognised.
 */
void gdr_handles_fork_child(void)
{
	uint32_t i;
	uint64_t s;

	for (i = 0; i < nr_chunks * REGION_CHUNK_SLOTS; i++) {
		struct gdr_region *r = gdr_region_slot(i);

		s = atomic_load_explicit(&r->state, memory_order_relaxed);
		if (s & REGION_LIVE)
			atomic_store_explicit(&r->state,
					      (s & ~0xffffffffULL) |
					      REGION_INHERITED,
					      memory_order_release);
	}
	pthread_mutex_unlock(&table_lock);
}

struct gdr_region *gdr_region_get(struct gdr *g, gdr_mh_t mh,
				  const char *caller)
{
	struct gdr_region *r;
	uint64_t s;

	r = gdr_region_peek(mh, &s);
	if (!r && gdr_region_inherited(mh)) {
		gdr_err("%s: handle 0x%lx was pinned by the parent process: " GDR_FORK_HINT,
			caller, mh.h);
		return NULL;
	}
	if (!r) {
		gdr_err("%s: handle 0x%lx is not a pinned buffer (never pinned, or already unpinned)",
			caller, mh.h);
		return NULL;
	}
	if (atomic_load_explicit(&r->owner, memory_order_relaxed) != g) {
		gdr_err("%s: handle 0x%lx was pinned through another gdr_t: use the gdr_t that pinned it",
			caller, mh.h);
		return NULL;
	}
	return r;
}
