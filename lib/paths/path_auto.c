// SPDX-License-Identifier: MIT
/*
 * gdrmap_copy_*: each copy by the fastest path for its size (gdrapi.h).
 *
 * Which path is fastest depends on the GPU, the link, the CPU, the
 * mapping type and the host buffer, so it is measured where it runs,
 * never written down: the first copies of each size class (a power of
 * two) on each device, mapping type, direction and kind of host buffer
 * take turns on every path that can serve them, GDR_TRIALS timed copies
 * each after one untimed; the path with the lowest first quartile serves
 * the class from then on (two paths whose quartiles are within a quarter
 * of each other are both measured on, to GDR_TRIALS_MAX copies, before
 * one is chosen).  A path whose two timed copies were both more than
 * GDR_SLOWER times slower than the best seen is dropped (a 64 MiB read
 * through the mapping costs 80 ms on an H200).  A choice not won by far
 * is watched: one copy in GDR_WATCH_EVERY a thread makes is timed (every
 * one from WATCH_ALL_FROM), and a choice grown slower than its rival was
 * is measured again (gdr_choose_watch); some of those timed copies go by
 * the rival instead, and a rival found faster beside the choice takes
 * its place (gdr_choose_watch_rival).  A choice made in a close contest
 * is confirmed soon: its next GDR_CONFIRM_END copies are each timed, the
 * first GDR_CONFIRM_AFTER by the choice, the rest by the choice and the
 * rival in turn (watched_path).
 * A class's first measuring wakes the helper threads before each
 * threaded copy it times (gdr_threads_warm): the choice is made for a
 * burst of copies, as a caller making many finds them.  A class measured
 * again does not: the watch saw its choice slower than that, and where
 * the caller's copies are sparse, helpers asleep between them are what
 * the caller pays, so threads are timed as its copies find them.
 *
 * The host buffer's kind is asked of CUDA (one query) only from
 * KIND_FROM up: below, DMA goes through the queue's pinned bounce buffer
 * whatever the kind and nothing is staged, so the kind cannot change the
 * winner, and those classes are measured once for all kinds.  From
 * pinned memory DMA goes straight to the user's buffer; from pageable
 * memory the staged path (dma_stage.c) competes with CUDA's own staging.
 *
 * Two shortcuts keep the measuring off the small copies: a class that
 * the mapping served at least GDR_MARGIN times faster than every other path
 * makes every smaller size a mapping copy, decided with one compare and
 * no clock read (the copy engine costs microseconds at any size); and a
 * class that DMA won by that margin makes every larger size DMA, unless
 * larger sizes have a path the class had not (the staged path, from
 * pageable memory).  A class
 * below KIND_FROM that the mapping won by less goes to the mapping as
 * soon as copy_via has found the region (its map_classes), but for the
 * one copy in GDR_WATCH_EVERY that the watch times: the way through the
 * choice costs about 0.1 us, a tenth of a 16 KiB write through the
 * mapping.
 *
 * What each path needs to serve a copy, and the copy by it, are in
 * path_run.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "base/log.h"
#include "copy_only_pins.h"
#include "dma.h"
#include "dma_stage.h"
#include "isa/copy.h"
#include "now_ns.h"
#include "path_choose.h"
#include "path_run.h"
#include "threads.h"

/* From this size on, copies are measured per kind of host buffer. */
#define KIND_FROM	(64UL << 10)
/*
 * From this size every copy of a watched class is timed: its two clock
 * reads are a fraction of a percent of a copy that takes 16 us even at
 * 64 GB/s, and such copies come too few for one in GDR_WATCH_EVERY to see
 * a choice go wrong (on an H200, a Python loop of 64 MiB writes kept the
 * staged path at 3.4 ms where threads took 2.1).
 */
#define WATCH_ALL_FROM	(1UL << 20)

/* The tests' hooks (path_choose.h). */
uint64_t (*gdr_copy_auto_cost)(int path, size_t n, int to_gpu,
			       uint64_t measured);
uint64_t (*gdr_copy_watch_cost)(int path, size_t n, int to_gpu,
				uint64_t measured);
void (*gdr_copy_chooser_seen)(size_t n, int to_gpu);

/*
 * Whether to time this copy of a decided class: one in GDR_WATCH_EVERY,
 * at random (xorshift, per thread), so that a thread whose copies cycle
 * through a few sizes has each size watched, not one every eighth.
 */
static _Thread_local uint32_t watch_state;

static uint32_t watch_draw(void)
{
	uint32_t x = watch_state ? watch_state : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	watch_state = x;
	return x;
}

static int watch_this(void)
{
	return watch_draw() % GDR_WATCH_EVERY == 0;
}

/*
 * The path a timed copy of a watched class whose choice is p goes by:
 * one in the class's rival_every (at random) by its rival, which
 * gdr_choose_watch_rival compares with p; while a close choice is
 * confirmed, none of its first GDR_CONFIRM_AFTER copies, then every
 * other one.
 */
static int watched_path(struct gdr_job *j, struct gdr_tune *t, int ci, int p)
{
	struct gdr_tune_class *c = &t->c[ci];
	int q = atomic_load_explicit(&c->rival, memory_order_relaxed);
	uint32_t every = atomic_load_explicit(&c->rival_every,
					      memory_order_relaxed);
	uint32_t k = GDR_CONFIRM_END;

	if (atomic_load_explicit(&c->confirming, memory_order_relaxed) <
	    GDR_CONFIRM_END)
		k = atomic_fetch_add_explicit(&c->confirming, 1,
					      memory_order_relaxed);
	if (k < GDR_CONFIRM_AFTER)
		return p;
	/* A rival that lost by far (every 0) is timed no more. */
	if (k < GDR_CONFIRM_END && every)
		every = (k - GDR_CONFIRM_AFTER) & 1;
	if (!q || !every || (k >= GDR_CONFIRM_END && watch_draw() % every) ||
	    !gdr_job_possible(j, t, q, j->n))
		return p;
	return q;
}

static struct gdr_tune *tunes;
static pthread_mutex_t tunes_lock = PTHREAD_MUTEX_INITIALIZER;

static int size_class(size_t n)
{
	int c = 63 - __builtin_clzll((unsigned long long)n);

	return c < GDR_NCLASS ? c : GDR_NCLASS - 1;
}

/* GDRMAP_COPY_PATH: a path name, or 0 (unset, "auto" or not a name). */
static int forced_path(void)
{
	const char *v = getenv("GDRMAP_COPY_PATH");
	int p;

	if (!v || !*v)
		return 0;
	for (p = 0; p < GDR_NPATH; p++)
		if (!strcmp(v, gdr_copy_path_names[p]))
			return p;
	gdr_err("GDRMAP_COPY_PATH=%s is not a path: use mapping, threads, dma, staged or auto (measuring the paths instead)",
		 v);
	return 0;
}

static struct gdr_tune *tune_find(int dev, gdr_mapping_type_t type,
				  int to_gpu, int kind)
{
	struct gdr_tune *t;

	pthread_mutex_lock(&tunes_lock);
	for (t = tunes; t; t = t->next)
		if (t->dev == dev && t->type == type && t->to_gpu == to_gpu &&
		    t->kind == kind)
			break;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (t) {
			t->dev = dev;
			t->type = type;
			t->to_gpu = to_gpu;
			t->kind = kind;
			t->forced = forced_path();
			t->dma_from = SIZE_MAX;
			pthread_mutex_init(&t->lock, NULL);
			t->next = tunes;
			tunes = t;
		}
	}
	pthread_mutex_unlock(&tunes_lock);
	return t;
}

/* The kind of host buffer a copy of n bytes at host is measured for. */
static int host_kind(const void *host, size_t n)
{
	if (n < KIND_FROM)
		return GDR_HOST_ANY;
	return gdr_cuda_host_pinned(host, n) ? GDR_HOST_PINNED :
						GDR_HOST_PAGEABLE;
}

/*
 * The same for a copy by the chosen path: the thread's last answer for
 * the same buffer and size serves its next copies
 * (gdr_host_pinned_reused: a stale one picks a slower path, never a
 * wrong one).  Copies by a path named ask afresh (host_kind), so that
 * they are refused exactly when the path cannot serve: the staged path
 * refuses a buffer registered a copy ago.
 */
static int chosen_host_kind(const void *host, size_t n)
{
	if (n < KIND_FROM)
		return GDR_HOST_ANY;
	return gdr_host_pinned_reused(host, n) ? GDR_HOST_PINNED :
						  GDR_HOST_PAGEABLE;
}

/*
 * The measurements for r's mapping in one direction and for one kind of
 * host buffer, made on first use, when r's memory is also looked up: its
 * device and the buffer ID that DMA will check (module-free pins
 * recorded it when pinned).
 */
static struct gdr_tune *tune_of(struct gdr_region *r, int to_gpu, int kind)
{
	struct gdr_tune *t = atomic_load_explicit(&r->tune[to_gpu][kind],
						  memory_order_acquire);
	unsigned long long id = atomic_load_explicit(&r->dma_id,
						     memory_order_relaxed);
	struct gdr_cuda_ptr p = { .dev = -1 };

	if (t)
		return t;
	if (gdr_cuda_get(NULL, 0))
		gdr_cuda_pointer(r->addr, &p);
	if (!id) {
		id = p.buffer_id;
		if (r->buffer_id && r->buffer_id != id)
			id = 0;		/* freed since it was pinned */
		atomic_store_explicit(&r->dma_id, id ? id : GDR_NO_DMA_ID,
				      memory_order_relaxed);
	}
	t = tune_find(p.dev, r->map_type, to_gpu, kind);
	if (t)
		atomic_store_explicit(&r->tune[to_gpu][kind], t,
				      memory_order_release);
	return t;
}

/*
 * One copy by path p, timed: the clock's word, or what the test's cost
 * hook makes of it.
 */
static uint64_t timed_run(const struct gdr_job *j, int p,
			  uint64_t (*cost)(int path, size_t n, int to_gpu,
					   uint64_t measured))
{
	uint64_t ns = now_ns();

	gdr_job_run(j, p);
	ns = now_ns() - ns;
	return cost ? cost(p, j->n, j->to_gpu, ns) : ns;
}

/*
 * The path n bytes take with t now, or GDRMAP_COPY_PATH_AUTO while their
 * class is being measured: the one ladder that the copies and
 * gdrmap_copy_path both climb.  *watch: whether gdr_choose_watch would
 * use a timed copy of the answer (the class's own choice, with a rival
 * to lose to); no other copy is worth a clock read.
 */
static int decided(struct gdr_job *j, struct gdr_tune *t, size_t n,
		   int *watch)
{
	struct gdr_tune_class *c = &t->c[size_class(n)];
	int p;

	*watch = 0;
	if (t->forced)
		return gdr_job_possible(j, t, t->forced, n) ?
		       t->forced : GDRMAP_COPY_PATH_MAPPING;
	if (n < atomic_load_explicit(&t->map_below, memory_order_relaxed))
		return GDRMAP_COPY_PATH_MAPPING;
	if (n >= atomic_load_explicit(&t->dma_from, memory_order_relaxed))
		return gdr_job_dma_usable(j, t) ? GDRMAP_COPY_PATH_DMA :
						  GDRMAP_COPY_PATH_MAPPING;
	p = atomic_load_explicit(&c->path, memory_order_acquire);
	/* The memory pinned is gone: only the mapping still reaches it. */
	if ((p == GDRMAP_COPY_PATH_DMA || p == GDRMAP_COPY_PATH_STAGED) &&
	    !gdr_job_dma_usable(j, t))
		return GDRMAP_COPY_PATH_MAPPING;
	/* 2: a close choice confirmed, each copy timed. */
	if (p && atomic_load_explicit(&c->rival, memory_order_relaxed))
		*watch = atomic_load_explicit(&c->confirming,
					      memory_order_relaxed) <
			 GDR_CONFIRM_END ? 2 : 1;
	return p;
}

/*
 * Whether the copies of class ci, with the host buffer's kind unknown, go
 * to the mapping as soon as copy_via has found the region
 * (watched_map_class): they do while the mapping is the class's choice.
 */
static void note_map_class(struct gdr_job *j, int ci, int mapping)
{
	_Atomic uint32_t *m = &j->r->map_classes[j->to_gpu];
	uint32_t bit = 1u << ci, was;

	if (j->kind != GDR_HOST_ANY || ci >= 32)
		return;
	was = atomic_load_explicit(m, memory_order_relaxed);
	/* Written only when it changes: the line is the small copies'. */
	if (mapping && !(was & bit))
		atomic_fetch_or_explicit(m, bit, memory_order_relaxed);
	else if (!mapping && (was & bit))
		atomic_fetch_and_explicit(m, ~bit, memory_order_relaxed);
}

__attribute__((noinline))
static int auto_copy(struct gdr_job *j)
{
	struct gdr_tune *t = tune_of(j->r, j->to_gpu, j->kind);
	int ci = size_class(j->n), p, possible, larger, warm, watch;
	uint64_t ns;

	if (!t)
		return gdr_job_run(j, GDRMAP_COPY_PATH_MAPPING);
	/* What the small copies compare with, as far as measured now (the
	 * kinds' own tunes measure no class below KIND_FROM). */
	if (j->kind == GDR_HOST_ANY)
		atomic_store_explicit(&j->r->small_below[j->to_gpu],
				      atomic_load_explicit(&t->map_below,
							   memory_order_relaxed),
				      memory_order_relaxed);
	if (gdr_copy_chooser_seen)
		gdr_copy_chooser_seen(j->n, j->to_gpu);
	p = decided(j, t, j->n, &watch);
	note_map_class(j, ci, p == GDRMAP_COPY_PATH_MAPPING && watch < 2);
	if (p && (!watch || (watch == 1 && !j->watch_now &&
			     j->n < WATCH_ALL_FROM && !watch_this())))
		return gdr_job_run(j, p);
	if (p) {
		int q = watched_path(j, t, ci, p);

		ns = timed_run(j, q, gdr_copy_watch_cost);
		/* A busy lock: another thread records; this one is skipped. */
		if (!pthread_mutex_trylock(&t->lock)) {
			if (q == p)
				gdr_choose_watch(t, ci, p, ns);
			else
				gdr_choose_watch_rival(t, ci, p, q, ns);
			pthread_mutex_unlock(&t->lock);
		}
		return 0;
	}
	possible = gdr_job_possible_paths(j, t, j->n);
	larger = gdr_job_possible_paths(j, t, SIZE_MAX) & ~possible;
	pthread_mutex_lock(&t->lock);
	t->c[ci].larger = (uint8_t)larger;
	p = gdr_choose_next(t, ci, possible);
	warm = !t->c[ci].reopened;
	pthread_mutex_unlock(&t->lock);
	if (!p) {
		p = decided(j, t, j->n, &watch);
		return gdr_job_run(j, p ? p : GDRMAP_COPY_PATH_MAPPING);
	}
	/* Helpers are woken for a class's first measuring only (the top
	 * of this file says why). */
	if (p == GDRMAP_COPY_PATH_THREADS && warm)
		gdr_threads_warm();
	ns = timed_run(j, p, gdr_copy_auto_cost);
	pthread_mutex_lock(&t->lock);
	gdr_choose_record(t, ci, p, ns, possible);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/*
 * Whether a copy of n bytes of r is of a class the mapping serves as a
 * watched choice (below KIND_FROM), and not one the watch samples
 * (*watch_now: then auto_copy times it).
 */
static int watched_map_class(struct gdr_region *r, size_t n, int to_gpu,
			     int *watch_now)
{
	if (n >= KIND_FROM ||
	    !(atomic_load_explicit(&r->map_classes[to_gpu],
				   memory_order_relaxed) &
	      (1u << size_class(n))))
		return 0;
	*watch_now = watch_this();
	return !*watch_now;
}

static int copy_via(gdr_mh_t handle, void *map, void *host, size_t n,
		    int to_gpu, int path, const char *caller)
{
	struct gdr_job j = { .map = map, .host = host, .n = n,
			     .to_gpu = to_gpu, .caller = caller };
	struct gdr_tune *t;
	uint64_t s;

	if (!n)
		return 0;
	j.r = gdr_copy_lookup(handle, map, n, &s, &j.base);
	if (__builtin_expect(!j.r || !host, 0))
		return gdr_copy_refused(handle, map, n, host, caller);
	j.gpu = j.r->pin_addr + ((uintptr_t)map - j.base);
	if (s & REGION_COPY_ONLY) {
		if (path == GDRMAP_COPY_PATH_MAPPING ||
		    path == GDRMAP_COPY_PATH_THREADS) {
			gdr_err("%s: handle 0x%lx is pinned copy-only (no CPU mapping): only the dma path serves it",
				caller, handle.h);
			return EOPNOTSUPP;
		}
		return to_gpu ? gdr_copy_only_to_mapping(j.r, j.base, map,
							 host, n) :
				gdr_copy_only_from_mapping(j.r, j.base, host,
							   map, n);
	}
	if (path == GDRMAP_COPY_PATH_AUTO &&
	    watched_map_class(j.r, n, to_gpu, &j.watch_now))
		return gdr_job_run(&j, GDRMAP_COPY_PATH_MAPPING);
	if (__builtin_expect(path == GDRMAP_COPY_PATH_AUTO, 1)) {
		j.kind = chosen_host_kind(host, n);
		t = atomic_load_explicit(&j.r->tune[to_gpu][GDR_HOST_ANY],
					 memory_order_acquire);
		if (t) {
			size_t below = atomic_load_explicit(
				&t->map_below, memory_order_relaxed);

			/* Measured since the small copies last looked. */
			atomic_store_explicit(&j.r->small_below[to_gpu], below,
					      memory_order_relaxed);
			if (n < below)
				return gdr_job_run(&j,
						   GDRMAP_COPY_PATH_MAPPING);
		}
		return auto_copy(&j);
	}
	if (path < 0 || path >= GDR_NPATH) {
		gdr_err("%s: %d is not a GDRMAP_COPY_PATH_* value", caller,
			path);
		return EINVAL;
	}
	j.kind = host_kind(host, n);
	t = tune_of(j.r, to_gpu, j.kind);
	if (!t) {
		gdr_err("%s: out of memory", caller);
		return ENOMEM;
	}
	if (!gdr_job_possible(&j, t, path, n)) {
		gdr_err("%s: the %s path cannot serve this copy of handle 0x%lx: %s",
			caller, gdr_copy_path_names[path], handle.h,
			gdr_job_why_not(t, path, n));
		return EOPNOTSUPP;
	}
	/* gdr_job_possible asked CUDA about j.gpu for these two. */
	if (path == GDRMAP_COPY_PATH_DMA)
		return gdr_dma(j.gpu, host, n, to_gpu,
			       gdr_job_host_pinned(j.kind),
			       j.asked ? &j.at : NULL, caller);
	if (path == GDRMAP_COPY_PATH_STAGED)
		return gdr_dma_staged(j.gpu, host, n, to_gpu,
				      j.asked ? &j.at : NULL, caller);
	return gdr_job_run(&j, path);
}

/*
 * The sizes the mapping serves by far, inline: what gdr_copy_* do plus
 * one load and a compare, in the region's line they read anyway.
 * Everything else goes to copy_via.
 */
static inline const struct gdr_copy_impl *small_copy(gdr_mh_t handle,
						     const void *map,
						     size_t n, int to_gpu)
{
	struct gdr_region *r;
	uintptr_t base;
	uint64_t s;

	r = gdr_copy_lookup(handle, map, n, &s, &base);
	if (!r || (s & REGION_COPY_ONLY) ||
	    n >= atomic_load_explicit(&r->small_below[to_gpu],
				      memory_order_relaxed))
		return NULL;
	return atomic_load_explicit(&r->copy, memory_order_relaxed);
}

GDR_API int gdrmap_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr,
				   const void *h_ptr, size_t size)
{
	const struct gdr_copy_impl *c = small_copy(handle, map_d_ptr, size, 1);

	if (__builtin_expect(c && h_ptr, 1)) {
		c->to_mapping(map_d_ptr, h_ptr, size);
		return 0;
	}
	return copy_via(handle, map_d_ptr, (void *)h_ptr, size, 1,
			GDRMAP_COPY_PATH_AUTO, __func__);
}

GDR_API int gdrmap_copy_from_mapping(gdr_mh_t handle, void *h_ptr,
				     const void *map_d_ptr, size_t size)
{
	const struct gdr_copy_impl *c = small_copy(handle, map_d_ptr, size, 0);

	if (__builtin_expect(c && h_ptr, 1)) {
		c->from_mapping(h_ptr, map_d_ptr, size);
		return 0;
	}
	return copy_via(handle, (void *)map_d_ptr, h_ptr, size, 0,
			GDRMAP_COPY_PATH_AUTO, __func__);
}

GDR_API int gdrmap_copy_to_mapping_via(gdr_mh_t handle, void *map_d_ptr,
				       const void *h_ptr, size_t size,
				       int path)
{
	return copy_via(handle, map_d_ptr, (void *)h_ptr, size, 1, path,
			__func__);
}

GDR_API int gdrmap_copy_from_mapping_via(gdr_mh_t handle, void *h_ptr,
					 const void *map_d_ptr, size_t size,
					 int path)
{
	return copy_via(handle, (void *)map_d_ptr, h_ptr, size, 0, path,
			__func__);
}

static int copy_path(gdr_mh_t handle, int to_mapping, int kind, size_t size,
		     int *path)
{
	struct gdr_job j = { 0 };
	struct gdr_region *r;
	struct gdr_tune *t;
	uint64_t s;
	int watch;

	if (!path) {
		gdr_err("path is NULL");
		return EINVAL;
	}
	*path = GDRMAP_COPY_PATH_AUTO;
	r = gdr_region_peek(handle, &s);
	if (!r || !(s & REGION_MAPPED)) {
		gdr_err("handle 0x%lx is not a mapped pin: pin and map it first",
			handle.h);
		return EINVAL;
	}
	if (s & REGION_COPY_ONLY) {
		*path = GDRMAP_COPY_PATH_DMA;
		return 0;
	}
	t = tune_of(r, to_mapping != 0, kind);
	j.r = r;
	j.gpu = r->addr;
	*path = t && size ? decided(&j, t, size, &watch) :
			    GDRMAP_COPY_PATH_MAPPING;
	return 0;
}

GDR_API int gdrmap_copy_path(gdr_mh_t handle, int to_mapping, size_t size,
			     int *path)
{
	return copy_path(handle, to_mapping,
			 size < KIND_FROM ? GDR_HOST_ANY : GDR_HOST_PAGEABLE,
			 size, path);
}

GDR_API int gdrmap_copy_path_host(gdr_mh_t handle, int to_mapping,
				  const void *h_ptr, size_t size, int *path)
{
	return copy_path(handle, to_mapping, host_kind(h_ptr, size), size,
			 path);
}
