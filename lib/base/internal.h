/* SPDX-License-Identifier: MIT */
/* The library's internal state: instances, pinned regions, handles. */
#ifndef GDRMAP_INTERNAL_H
#define GDRMAP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"
#include "backend.h"

/* Marks the definitions of the public API (everything else is hidden). */
#define GDR_API __attribute__((visibility("default")))

struct gdr_copy_impl;
struct gdr_tune;

/* gdrmap_copy_*'s kinds of host buffer (path_auto.c): any (the sizes where
 * the kind makes no difference), pageable, pinned by CUDA. */
#define GDR_HOST_KINDS	3

/*
 * A mapping type's name, as gdr_get_mapping_type_string() gives it, or
 * "an unknown type".  For the library's own messages: unlike that call it
 * leaves the thread's last error alone.
 */
static inline const char *gdr_mapping_type_name(gdr_mapping_type_t type)
{
	switch (type) {
	case GDR_MAPPING_TYPE_NONE:
		return "None";
	case GDR_MAPPING_TYPE_WC:
		return "Write Combining";
	case GDR_MAPPING_TYPE_CACHING:
		return "Caching";
	case GDR_MAPPING_TYPE_DEVICE:
		return "Device";
	default:
		return "an unknown type";
	}
}

struct gdr {
	/* Serialises every change of this instance's regions and every
	 * backend call. */
	pthread_mutex_t lock;
	struct gdr_backend ops;		/* completed: no empty slot */
	struct gdr_region *regions;	/* live regions, under lock */
	size_t host_page_size;
	int host_page_shift;
	void *bpriv;			/* the backend's own state */
	unsigned int fork_gen;		/* gdr_fork_gen when opened */
};

/* region->state: generation in the high 32 bits, flags below. */
#define REGION_LIVE	(1ULL << 0)
#define REGION_MAPPED	(1ULL << 1)
/* Live in the parent when this process forked: never usable here. */
#define REGION_INHERITED (1ULL << 2)
/* Pinned copy-only (copy_only_pins.h): the copy functions move its bytes by
 * DMA; set before REGION_MAPPED, with r->ops. */
#define REGION_COPY_ONLY (1ULL << 3)
#define REGION_GEN(s)	((uint32_t)((s) >> 32))

/*
 * One pinned range.  Regions live in a process-wide table and are reused,
 * never freed, so that a stale handle can be recognised (its generation
 * no longer matches) instead of being a dangling pointer.
 *
 * state, owner, map_va, map_len, copy, small_below and map_classes are
 * read without a lock by the copy functions: map_va, map_len and copy are
 * written before state gains REGION_MAPPED (release) and are only trusted
 * after state was read with acquire.  Everything else belongs to the
 * owner and is under its lock.
 */
struct gdr_region {
	/* The fields every copy reads, up to map_classes, fill the first
	 * cache line: a region starts on one (handle.c's chunks are
	 * aligned), so a copy's lookup never reads two. */
	_Alignas(64) _Atomic uint64_t state;
	_Atomic(struct gdr *) owner;
	_Atomic uintptr_t map_va;
	_Atomic size_t map_len;
	_Atomic(const struct gdr_copy_impl *) copy;
	/* gdrmap_copy_*: sizes below this, [to_mapping], are mapping copies
	 * (the measurements' map_below, kept here beside copy so that the
	 * small copies read one line of the region; 0: ask path_auto.c). */
	_Atomic size_t small_below[2];
	/* And the size classes below 64 KiB (bit c: 2^c to 2^(c+1) - 1
	 * bytes) whose choice is the mapping, with a rival watched: copied
	 * as soon as copy_via has found the region, but for the copies the
	 * watch times (path_auto.c). */
	_Atomic uint32_t map_classes[2];

	uint32_t index;			/* slot in the table, fixed */
	uint32_t next_free;		/* free list, under the table lock */
	struct gdr_region *prev, *next;	/* in owner->regions */

	uint64_t addr, size;		/* as the caller asked */
	uint64_t pin_addr, pin_size;	/* the 64 KiB window pinned */
	uint32_t pin_flags;
	gdr_mapping_type_t map_type;

	uint64_t bhandle;		/* the backend's handle */
	void *bpriv;			/* the backend's per-pin state */
	/* Module-free: CUDA's buffer ID at addr when pinned (0: none). */
	unsigned long long buffer_id;
	/* What serves this pin: &owner->ops, or the copy-only table. */
	const struct gdr_backend *ops;
	/* gdrmap_copy_*: the measurements for this mapping, [to_mapping]
	 * [host buffer kind] (NULL until the first such copy), and the buffer ID that DMA
	 * checks the memory against (0: not yet looked up, ~0: none). */
	_Atomic(struct gdr_tune *) tune[2][GDR_HOST_KINDS];
	_Atomic unsigned long long dma_id;
};
_Static_assert(offsetof(struct gdr_region, map_classes) +
	       sizeof(((struct gdr_region *)0)->map_classes) <= 64,
	       "the fields the copies read outgrew the region's first line");

/* Forget r's gdrmap_copy_* measurements (a new pin, a new mapping type). */
static inline void gdr_tunes_forget(struct gdr_region *r)
{
	int dir, kind;

	for (dir = 0; dir < 2; dir++) {
		for (kind = 0; kind < GDR_HOST_KINDS; kind++)
			atomic_store_explicit(&r->tune[dir][kind], NULL,
					      memory_order_relaxed);
		atomic_store_explicit(&r->small_below[dir], 0,
				      memory_order_relaxed);
		atomic_store_explicit(&r->map_classes[dir], 0,
				      memory_order_relaxed);
	}
}

/*
 * Handle table (handle.c).  Slots live in chunks allocated on demand and
 * never freed; the table is visible here so that the copy functions can
 * look a handle up inline.
 */
#define REGION_CHUNK_SHIFT	8
#define REGION_CHUNK_SLOTS	(1u << REGION_CHUNK_SHIFT)
#define REGION_MAX_CHUNKS	4096u	/* 1,048,576 handles at once */
extern _Atomic(struct gdr_region *) gdr_region_chunks[REGION_MAX_CHUNKS];

struct gdr_region *gdr_region_alloc(struct gdr *owner, gdr_mh_t *mh);
void gdr_region_free(struct gdr_region *r);
int gdr_region_inherited(gdr_mh_t mh);
void gdr_handles_fork_prepare(void);
void gdr_handles_fork_parent(void);
void gdr_handles_fork_child(void);

/*
 * fork (fork.c).  A child inherits the parent's gdr_t and handles but not
 * its mappings (gdrdrv's are VM_DONTCOPY) nor its use of the device: in
 * the child every one of them is refused, with this explanation.
 */
extern _Atomic unsigned int gdr_fork_gen;	/* forks on the way here */
void gdr_fork_init(void);
int gdr_opened_before_fork(const struct gdr *g, const char *caller);
#define GDR_FORK_HINT "pins and mappings are not inherited across fork(): a child calls gdr_open and pins memory of its own (and a child of a process that started CUDA cannot use CUDA: exec, or fork before cuInit)"

static inline struct gdr_region *gdr_region_slot(uint32_t index)
{
	struct gdr_region *chunk;

	if (index >= REGION_MAX_CHUNKS * REGION_CHUNK_SLOTS)
		return NULL;
	chunk = atomic_load_explicit(
		&gdr_region_chunks[index >> REGION_CHUNK_SHIFT],
		memory_order_acquire);
	return chunk ? &chunk[index & (REGION_CHUNK_SLOTS - 1)] : NULL;
}

/* The region of a handle if it is live, else NULL; no lock taken. */
static inline struct gdr_region *gdr_region_peek(gdr_mh_t mh, uint64_t *state)
{
	uint64_t h = mh.h, s;
	struct gdr_region *r;

	if ((uint32_t)h == 0)
		return NULL;
	r = gdr_region_slot((uint32_t)h - 1);
	if (!r)
		return NULL;
	s = atomic_load_explicit(&r->state, memory_order_acquire);
	if (!(s & REGION_LIVE) || REGION_GEN(s) != (uint32_t)(h >> 32))
		return NULL;
	*state = s;
	return r;
}
/* The live region of mh owned by g; g->lock must be held. */
struct gdr_region *gdr_region_get(struct gdr *g, gdr_mh_t mh,
				  const char *caller);
gdr_mh_t gdr_region_handle(const struct gdr_region *r);

/* Room for a backend's reason not to open: the vulkan backend's lists
 * every cause it finds (diag.h). */
#define GDR_WHY_LEN 4096

/* Open an instance on one backend (core.c); used by gdr_open and tests. */
struct gdr *gdr_open_backend(const struct gdr_backend *b, char *why,
			     size_t why_len, int *err);

/* The exported v1 symbol (GDRCopy 2.0-2.3's gdr_get_info). */
struct gdr_info_v1 {
	uint64_t va;
	uint64_t mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;
	uint32_t cycles_per_ms;
	unsigned mapped:1;
	unsigned wc_mapping:1;
};

/*
 * CUDA, if the process has already loaded it (cuda_scope.c): describe why a
 * pin of [addr, +size) failed, into buf (not GPU memory, or a range that
 * reaches GPU pages its allocation does not use).  Returns 0 if it found
 * nothing to say.
 */
int gdr_cuda_explain_pin(uint64_t addr, uint64_t size, char *buf,
			 size_t len);

/*
 * The copy functions take no lock: the handle is checked inline with a few
 * atomic loads, then the routine chosen at map time runs.
 * Explaining a refusal is kept out of line.
 */
static inline struct gdr_region *gdr_copy_lookup(gdr_mh_t handle,
						 const void *map_ptr,
						 size_t size, uint64_t *state,
						 uintptr_t *base)
{
	uintptr_t p = (uintptr_t)map_ptr;
	struct gdr_region *r;
	size_t len;

	r = gdr_region_peek(handle, state);
	if (!r || !(*state & REGION_MAPPED))
		return NULL;
	*base = atomic_load_explicit(&r->map_va, memory_order_relaxed);
	len = atomic_load_explicit(&r->map_len, memory_order_relaxed);
	if (p < *base || p - *base > len || size > len - (p - *base))
		return NULL;
	return r;
}

/* Explain why a copy was refused (the handle, the range or host); EINVAL. */
int gdr_copy_refused(gdr_mh_t handle, const void *map_ptr, size_t size,
		     const void *host, const char *caller);

#endif /* GDRMAP_INTERNAL_H */
