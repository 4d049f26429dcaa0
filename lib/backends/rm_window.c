// SPDX-License-Identifier: MIT
/*
 * The window of an rm pin (rm_window.h): which RM objects lie behind it,
 * which stretch of the window each covers, and their CPU mapping.
 *
 * The allocations holding asked-for bytes are exported (export_asked),
 * but where an object an earlier pin found holds them and a witness of
 * it still lives (from_known, rm_known.h); every other page of the
 * window (other buffers and free space of an object CUDA suballocates)
 * is mapped from the object around it, whose size RM gives, as
 * nvidia_p2p_get_pages would pin it for gdrdrv.  A window page no object
 * covers narrows the window at its ends; inside the range
 * the caller asked for, the pin is refused (GDR_PIN_UNMAPPABLE).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "base/log.h"
#include "rm_client.h"
#include "rm_known.h"
#include "rm_os.h"
#include "rm_window.h"

/* cudaMalloc's smallest alignment: where a sub-page allocation can start. */
#define ALLOC_ALIGN 256

/* One RM object behind a pin: libcuda's handle, our duplicate, where its
 * byte 0 sits in the GPU's address space, and how big RM made it.
 * cuMemCreate memory is mapped piece by piece (a handle may be mapped in
 * part, or nowhere next to the piece exported): only what CUDA exported
 * of such an object is known to lie at its addresses (mapped_only). */
struct rm_obj {
	uint32_t src;
	uint32_t dup;
	uint64_t va_base;
	uint64_t size;
	int size_known;		/* RM told size */
	int mapped_only;
};

/* One stretch of the window: [va, +len) in object obj. */
struct rm_seg {
	uint64_t va;
	uint64_t len;
	uint32_t obj;
};

struct rm_pin {
	struct rm_gpu *gpu;
	uint32_t client;		/* libcuda's */
	uint32_t nobj, nseg;
	struct rm_obj obj[8];		/* the first few, inline */
	struct rm_obj *objs;		/* obj, or malloc'ed when more */
	uint32_t obj_room;
	struct rm_seg *seg;
	uint32_t seg_room;
	/* While mapped: the reservation, and the RM cookie of each of the
	 * first nmapped stretches. */
	char *cpu;
	size_t cpu_len;
	uint32_t nmapped;
	uint64_t *cookie;
};

static size_t host_page;
static pthread_once_t page_once = PTHREAD_ONCE_INIT;

static void read_page_size(void)
{
	long pg = sysconf(_SC_PAGESIZE);

	host_page = pg > 0 ? (size_t)pg : 4096;
}

static uint64_t page_down(uint64_t v)
{
	return v & ~(uint64_t)(host_page - 1);
}

static uint64_t page_up(uint64_t v)
{
	return (v + host_page - 1) & ~(uint64_t)(host_page - 1);
}

void rm_window_free(struct rm_pin *p)
{
	uint32_t i;

	for (i = 0; i < p->nobj; i++)
		if (p->objs[i].dup)
			gdr_rm_free(p->gpu, p->objs[i].dup);
	if (p->objs != p->obj)
		free(p->objs);
	free(p->seg);
	free(p->cookie);
	free(p);
}

/* The object (src at va_base), added if new; its index or -1. */
static int pin_obj(struct rm_pin *p, uint32_t src, uint64_t va_base)
{
	uint32_t i;

	for (i = 0; i < p->nobj; i++)
		if (p->objs[i].src == src && p->objs[i].va_base == va_base)
			return (int)i;
	if (p->nobj == p->obj_room) {
		uint32_t room = p->obj_room * 2;
		struct rm_obj *o = malloc(room * sizeof(*o));

		if (!o)
			return -1;
		memcpy(o, p->objs, p->nobj * sizeof(*o));
		if (p->objs != p->obj)
			free(p->objs);
		p->objs = o;
		p->obj_room = room;
	}
	p->objs[p->nobj].src = src;
	p->objs[p->nobj].dup = 0;
	p->objs[p->nobj].va_base = va_base;
	p->objs[p->nobj].size = 0;
	p->objs[p->nobj].size_known = 0;
	p->objs[p->nobj].mapped_only = 0;
	return (int)p->nobj++;
}

static int pin_seg(struct rm_pin *p, uint64_t va, uint64_t len, int obj)
{
	if (p->nseg == p->seg_room) {
		uint32_t room = p->seg_room ? p->seg_room * 2 : 8;
		struct rm_seg *s = realloc(p->seg, room * sizeof(*s));

		if (!s)
			return ENOMEM;
		p->seg = s;
		p->seg_room = room;
	}
	p->seg[p->nseg].va = va;
	p->seg[p->nseg].len = len;
	p->seg[p->nseg].obj = (uint32_t)obj;
	p->nseg++;
	return 0;
}

/* The page of the window holding va: which stretch covers it, or -1. */
static int seg_at(const struct rm_pin *p, uint64_t va)
{
	uint32_t i;

	for (i = 0; i < p->nseg; i++)
		if (va >= p->seg[i].va && va < p->seg[i].va + p->seg[i].len)
			return (int)i;
	return -1;
}

/*
 * Export [a, e) in scope s and record its stretches and objects (of
 * cuMemCreate memory if vmm).  0, GDR_PIN_UNMAPPABLE (CUDA does not
 * export it; why says so) or an errno with why.
 */
static int export_range(struct rm_pin *p, const struct gdr_cuda_scope *s,
			uint64_t a, uint64_t e, int vmm, char *why,
			size_t why_len)
{
	struct rm_export ex = { 0 };
	uint64_t va = a;
	uint32_t i;
	int err, o;

	err = gdr_rm_os()->export(s, a, e - a, &ex, why, why_len);
	if (err)
		goto out;
	if (p->nobj && ex.client != p->client) {
		snprintf(why, why_len, "two exports of one window came from different RM clients (0x%x, 0x%x): memory of two CUDA contexts in one window",
			 p->client, ex.client);
		err = GDR_PIN_UNMAPPABLE;
		goto out;
	}
	p->client = ex.client;
	for (i = 0; i < ex.count; i++) {
		o = pin_obj(p, ex.obj[i].handle, va - ex.obj[i].offset);
		if (o < 0 || pin_seg(p, va, ex.obj[i].size, o)) {
			snprintf(why, why_len, "out of memory");
			err = ENOMEM;
			goto out;
		}
		p->objs[o].mapped_only |= vmm;
		va += ex.obj[i].size;
	}
out:
	rm_export_free(&ex);
	return err;
}

/* Duplicate each object not yet duplicated and learn its size: RM's
 * answer, or else at least what the exports have covered so far. */
static int dup_objects(struct rm_pin *p, char *why, size_t why_len)
{
	uint32_t i, j;
	int err;

	for (i = 0; i < p->nobj; i++) {
		struct rm_obj *o = &p->objs[i];

		if (!o->dup) {
			err = gdr_rm_dup(p->gpu, p->client, o->src, &o->dup,
					 why, why_len);
			/* RM's share policy keeps this memory from the
			 * library's client (a MIG instance it cannot
			 * join): memory this backend cannot map, which
			 * the core serves copy-only. */
			if (err == EPERM)
				return GDR_PIN_UNMAPPABLE;
			if (err)
				return err;
			o->size_known = !gdr_rm_object_size(o->dup, &o->size) &&
					o->size;
		}
		if (!o->size_known) {
			o->size = 0;
			for (j = 0; j < p->nseg; j++)
				if (p->seg[j].obj == i &&
				    p->seg[j].va + p->seg[j].len - o->va_base >
				    o->size)
					o->size = p->seg[j].va +
						  p->seg[j].len - o->va_base;
		}
	}
	return 0;
}

/* Cover page pg from an object around it (of cudaMalloc memory, whose
 * object lies whole at its addresses); whether one did. */
static int fill_page(struct rm_pin *p, uint64_t pg)
{
	uint32_t i;

	for (i = 0; i < p->nobj; i++)
		if (!p->objs[i].mapped_only && pg >= p->objs[i].va_base &&
		    pg + host_page <= p->objs[i].va_base + p->objs[i].size)
			return !pin_seg(p, pg, host_page, (int)i);
	return 0;
}

/* The allocation CUDA knows holding va, or else the first that starts
 * after va and before stop: sub-page allocations need not start on a
 * page. */
static int alloc_from(const struct gdr_cuda_scope *s, uint64_t va,
		      uint64_t stop, CUdeviceptr *base, size_t *size)
{
	uint64_t q;

	if (s->call->MemGetAddressRange(base, size, va) == CUDA_SUCCESS)
		return 1;
	for (q = (va + ALLOC_ALIGN) & ~(uint64_t)(ALLOC_ALIGN - 1); q < stop;
	     q += ALLOC_ALIGN)
		if (s->call->MemGetAddressRange(base, size, q) ==
		    CUDA_SUCCESS)
			return 1;
	return 0;
}

/* CUDA does not export a range (why says so); unlike a refused dup,
 * which makes the pin copy-only, another page may still name the
 * object. */
#define NOT_EXPORTED (-1)

/* The pin's object holding all of allocation what, of cudaMalloc
 * memory, sized by RM, is remembered with the allocation as its witness,
 * and after an export (found) with its neighbours too (rm_known.h). */
static void remember(struct rm_pin *p, const struct gdr_cuda_ptr *what,
		     int found)
{
	struct rm_known k;
	uint32_t i;

	for (i = 0; i < p->nobj && what->buffer_id; i++) {
		const struct rm_obj *o = &p->objs[i];

		if (o->mapped_only || !o->size_known ||
		    what->start < o->va_base ||
		    what->start + what->size > o->va_base + o->size)
			continue;
		k = (struct rm_known){ .client = p->client, .src = o->src,
				       .va_base = o->va_base, .size = o->size,
				       .witness = { what->start },
				       .witness_id = { what->buffer_id } };
		rm_known_add(p->gpu, &k, found ? what->size : 0);
		return;
	}
}

/* Export [lo, hi) of allocation what and duplicate and size what it
 * names, and remember cudaMalloc memory's object: 0, NOT_EXPORTED,
 * GDR_PIN_UNMAPPABLE or an errno. */
static int export_dup(struct rm_pin *p, const struct gdr_cuda_scope *s,
		      uint64_t lo, uint64_t hi, const struct gdr_cuda_ptr *what,
		      char *why, size_t why_len)
{
	/* cuMemCreate memory belongs to no context. */
	int vmm = what->dev >= 0 && !what->ctx;
	int err = export_range(p, s, lo, hi, vmm, why, why_len);

	if (err)
		return err == GDR_PIN_UNMAPPABLE ? NOT_EXPORTED : err;
	err = dup_objects(p, why, why_len);
	if (!err && !vmm)
		remember(p, what, 1);
	return err;
}

/* Cover page pg, which holds asked-for byte q, from an object an earlier
 * pin found, with no export (rm_known_take says when one is trusted);
 * whether it did.  q's allocation, which the caller keeps while it pins,
 * lay in the object when it was trusted: it becomes a witness too. */
static int from_known(struct rm_pin *p, uint64_t pg, uint64_t q)
{
	struct gdr_cuda_ptr what;
	struct rm_known k;
	uint32_t dup;
	int o;

	if (!rm_known_take(p->gpu, pg, pg + host_page, p->nobj, p->client,
			   &k, &dup))
		return 0;
	o = pin_obj(p, k.src, k.va_base);
	if (o < 0 || p->objs[o].dup) {
		gdr_rm_free(p->gpu, dup);
		return 0;
	}
	p->client = k.client;
	p->objs[o].dup = dup;
	p->objs[o].size = k.size;
	p->objs[o].size_known = 1;
	gdr_cuda_pointer(q, &what);
	remember(p, &what, 0);
	return fill_page(p, pg);
}

/*
 * Cover page pg, which holds bytes of allocation [base, +size), inside
 * the window [w, we).  The allocation's whole pages are exported first:
 * they hold nothing of anyone else's.  Only where that leaves pg
 * uncovered (a buffer with no whole page of its own, or no object size
 * from RM) is pg exported with the allocation's pages around it, and
 * with whatever of other buffers shares them.
 */
static int export_alloc(struct rm_pin *p, const struct gdr_cuda_scope *s,
			uint64_t pg, CUdeviceptr base, size_t size,
			uint64_t w, uint64_t we, char *why, size_t why_len)
{
	uint64_t lo = page_up(base), hi = page_down(base + size), end;
	struct gdr_cuda_ptr what;
	int err;

	gdr_cuda_pointer(base, &what);
	lo = lo > w ? lo : w;
	hi = hi < we ? hi : we;
	while (lo < hi && seg_at(p, lo) >= 0)
		lo += host_page;
	if (lo < hi) {
		err = export_dup(p, s, lo, hi, &what, why, why_len);
		if (err || seg_at(p, pg) >= 0 || fill_page(p, pg))
			return err;
	}
	/* From pg's first uncovered neighbour of the allocation to the next
	 * covered page. */
	lo = page_down(base) > w ? page_down(base) : w;
	while (lo < pg && seg_at(p, lo) >= 0)
		lo += host_page;
	end = page_up(base + size);
	end = end < we ? end : we;
	for (hi = pg + host_page; hi < end && seg_at(p, hi) < 0;)
		hi += host_page;
	return export_dup(p, s, lo, hi, &what, why, why_len);
}

/*
 * Cover the asked-for bytes [a, e) of the window [w, we): each page not
 * yet covered by a stretch, nor by an object already known (fill_page),
 * from the allocation that holds it (export_alloc).  The objects an
 * export names are duplicated and sized at once, so that a window of
 * suballocated buffers costs one export.  Only what the caller asked for
 * is exported, and of it first what holds nothing else: the rest of the
 * window, and the ends of a buffer's pages, may hold other threads'
 * buffers, which they may free while the export runs, and libcuda's
 * export of a range holding an allocation being freed dereferences NULL
 * (H200, driver 580.159.04: test_gpu_rm_threads crashed 3 times in 16
 * runs when the whole window was exported; bench/probes/
 * export_race_probe.c crashes so within seconds exporting a window, and
 * in one run of three exporting a page shared with 512-byte buffers).
 * An object an earlier pin found covers a page with no export at all
 * (from_known).  The window's other pages are covered from the objects
 * found here, or the window narrows.
 */
static int export_asked(struct rm_pin *p, const struct gdr_cuda_scope *s,
			uint64_t a, uint64_t e, uint64_t w, uint64_t we,
			char *why, size_t why_len)
{
	CUdeviceptr base;
	size_t size;
	uint64_t q, pg, stop;
	int err;

	for (q = a; q < e; q = pg + host_page) {
		pg = page_down(q);
		stop = pg + host_page < e ? pg + host_page : e;
		if (seg_at(p, pg) >= 0 || fill_page(p, pg) ||
		    from_known(p, pg, q) ||
		    !alloc_from(s, q, stop, &base, &size))
			continue;
		err = export_alloc(p, s, pg, base, size, w, we, why, why_len);
		if (err == NOT_EXPORTED)
			gdr_dbg("%s", why);
		else if (err)
			return err;
	}
	return 0;
}

/* Stretches are page-granular and never cross an uncovered page, so
 * each lies wholly inside or outside [lo, hi). */
static void drop_segs_outside(struct rm_pin *p, uint64_t lo, uint64_t hi)
{
	uint32_t i, n = 0;

	for (i = 0; i < p->nseg; i++)
		if (p->seg[i].va >= lo && p->seg[i].va < hi)
			p->seg[n++] = p->seg[i];
	p->nseg = n;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct rm_seg *x = a, *y = b;

	return x->va < y->va ? -1 : x->va > y->va;
}

/* Sort the stretches and join neighbours of one object. */
static void merge_segs(struct rm_pin *p)
{
	uint32_t i, n = 0;

	qsort(p->seg, p->nseg, sizeof(*p->seg), cmp_seg);
	for (i = 0; i < p->nseg; i++) {
		struct rm_seg *last = n ? &p->seg[n - 1] : NULL;

		if (last && last->obj == p->seg[i].obj &&
		    last->va + last->len == p->seg[i].va)
			last->len += p->seg[i].len;
		else
			p->seg[n++] = p->seg[i];
	}
	p->nseg = n;
}

struct rm_pin *rm_window_pin(const struct gdr_cuda_scope *s,
			     struct rm_gpu *gpu, uint64_t addr, uint64_t size,
			     uint64_t *win, uint64_t *win_len, int *err,
			     char *why)
{
	uint64_t w, e, ua, ue, lo, hi, pg;
	struct rm_pin *p;

	pthread_once(&page_once, read_page_size);
	w = page_down(*win);
	e = page_up(*win + *win_len);
	ua = page_down(addr);
	ue = page_up(addr + size);
	lo = ua;
	hi = ue;
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(why, RM_WHY_LEN, "out of memory");
		*err = ENOMEM;
		return NULL;
	}
	p->gpu = gpu;
	p->objs = p->obj;
	p->obj_room = sizeof(p->obj) / sizeof(p->obj[0]);
	why[0] = '\0';
	*err = export_asked(p, s, addr, addr + size, w, e, why, RM_WHY_LEN);
	if (!*err && !p->nobj) {
		/* why holds the last export's refusal, if one was tried. */
		char last[RM_WHY_LEN / 2];

		snprintf(last, sizeof(last), "%s", why);
		snprintf(why, RM_WHY_LEN, "CUDA exports no memory in [0x%llx, +%llu)%s%s",
			 (unsigned long long)w, (unsigned long long)(e - w),
			 last[0] ? ": " : "", last);
		*err = GDR_PIN_UNMAPPABLE;
	}
	for (pg = w; !*err && pg < e; pg += host_page)
		if (seg_at(p, pg) < 0 && !fill_page(p, pg) &&
		    pg >= ua && pg < ue) {
			snprintf(why, RM_WHY_LEN, "the page at 0x%llx of [0x%llx, +%llu) is in no memory object CUDA exports",
				 (unsigned long long)pg,
				 (unsigned long long)addr,
				 (unsigned long long)size);
			*err = GDR_PIN_UNMAPPABLE;
		}
	if (*err) {
		if (*err == GDR_PIN_UNMAPPABLE)
			*err = gdr_pin_unmappable("%s", why);
		else
			gdr_err("%s", why);
		rm_window_free(p);
		return NULL;
	}
	/* The widest run of covered pages around the asked-for range; what
	 * lies beyond a gap is not part of the window. */
	while (lo > w && seg_at(p, lo - host_page) >= 0)
		lo -= host_page;
	while (hi < e && seg_at(p, hi) >= 0)
		hi += host_page;
	drop_segs_outside(p, lo, hi);
	merge_segs(p);
	*win = lo;
	*win_len = hi - lo;
	return p;
}

int rm_window_map(struct rm_pin *p, uint64_t win, size_t len, void **va,
		  char *why, size_t why_len)
{
	const struct gdr_rm_os *os = gdr_rm_os();
	uint32_t i;
	int err = 0;
	char *cpu;

	p->cookie = calloc(p->nseg ? p->nseg : 1, sizeof(*p->cookie));
	if (!p->cookie) {
		snprintf(why, why_len, "out of memory");
		return ENOMEM;
	}
	/* One range, then each stretch over its part of it. */
	cpu = os->mmap(NULL, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (cpu == MAP_FAILED) {
		err = errno;
		snprintf(why, why_len, "reserving %zu bytes of address space failed: %s",
			 len, strerror(err));
		goto free;
	}
	for (i = 0; i < p->nseg && !err; i++) {
		const struct rm_seg *sg = &p->seg[i];
		const struct rm_obj *o = &p->objs[sg->obj];
		uint64_t off = sg->va - win, l = sg->len;

		if (off >= len)
			break;
		if (l > len - off)
			l = len - off;
		err = gdr_rm_map(p->gpu, o->dup, sg->va - o->va_base, l,
				 cpu + off, &p->cookie[i], why, why_len);
		if (!err)
			p->nmapped = i + 1;
	}
	if (err) {
		os->munmap(cpu, len);
		for (i = 0; i < p->nmapped; i++)
			gdr_rm_unmap(p->gpu, p->objs[p->seg[i].obj].dup,
				     p->cookie[i]);
		goto free;
	}
	p->cpu = cpu;
	p->cpu_len = len;
	*va = cpu;
	return 0;
free:
	p->nmapped = 0;
	free(p->cookie);
	p->cookie = NULL;
	return err;
}

void rm_window_unmap(struct rm_pin *p)
{
	uint32_t i;

	/* The CPU's mapping first: RM's record of it goes after. */
	gdr_rm_os()->munmap(p->cpu, p->cpu_len);
	for (i = 0; i < p->nmapped; i++)
		gdr_rm_unmap(p->gpu, p->objs[p->seg[i].obj].dup, p->cookie[i]);
	p->nmapped = 0;
	free(p->cookie);
	p->cookie = NULL;
	p->cpu = NULL;
	p->cpu_len = 0;
}
