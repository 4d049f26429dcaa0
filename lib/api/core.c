// SPDX-License-Identifier: MIT
/*
 * The API: argument checks, handle bookkeeping and locking, on top of the
 * backend table chosen in gdr_open (backend_select.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/internal.h"
#include "base/log.h"
#include "isa/copy.h"
#include "paths/copy_only_pins.h"

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) & ~(to - 1);
}

struct gdr *gdr_open_backend(const struct gdr_backend *b, char *why,
			     size_t why_len, int *err)
{
	struct gdr *g = calloc(1, sizeof(*g));
	long page = sysconf(_SC_PAGESIZE);

	if (!g) {
		snprintf(why, why_len, "out of memory");
		*err = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&g->lock, NULL);
	gdr_fork_init();
	g->fork_gen = atomic_load(&gdr_fork_gen);
	gdr_backend_complete(&g->ops, b);
	g->host_page_size = page > 0 ? (size_t)page : 4096;
	g->host_page_shift = __builtin_ctzl(g->host_page_size);
	why[0] = '\0';
	*err = g->ops.open(g, why, why_len);
	if (*err) {
		pthread_mutex_destroy(&g->lock);
		free(g);
		return NULL;
	}
	gdr_dbg("using the %s backend", b->name);
	return g;
}

/* Unmap r; g->lock held.  The copy functions stop trusting the mapping
 * (REGION_MAPPED cleared) before it goes away. */
static int region_unmap(struct gdr *g, struct gdr_region *r)
{
	void *va = (void *)atomic_load_explicit(&r->map_va,
						memory_order_relaxed);
	size_t len = atomic_load_explicit(&r->map_len, memory_order_relaxed);

	atomic_fetch_and_explicit(&r->state, ~REGION_MAPPED,
				  memory_order_release);
	r->map_type = GDR_MAPPING_TYPE_NONE;
	return r->ops->unmap(g, r, va, len);
}

/* Unlink and forget r; g->lock held. */
static void region_release(struct gdr *g, struct gdr_region *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		g->regions = r->next;
	if (r->next)
		r->next->prev = r->prev;
	gdr_region_free(r);
}

GDR_API int gdr_close(gdr_t g)
{
	int ret = 0, err;

	if (!g) {
		gdr_err("g is NULL: pass the gdr_t returned by gdr_open");
		return EINVAL;
	}
	/*
	 * The parent's, in a fork child: its lock may be held for good and
	 * its pins are the parent's, so nothing is released; and the close
	 * succeeds, as GDRCopy's does there: a child that closes what it
	 * inherited before it execs or exits is not in error.
	 */
	if (g->fork_gen != atomic_load_explicit(&gdr_fork_gen,
						memory_order_relaxed)) {
		gdr_dbg("this gdr_t was opened by the parent process: nothing released in the child");
		return 0;
	}
	pthread_mutex_lock(&g->lock);
	while (g->regions) {
		struct gdr_region *r = g->regions;
		uint64_t s = atomic_load_explicit(&r->state,
						  memory_order_relaxed);

		if (s & REGION_MAPPED) {
			err = region_unmap(g, r);
			ret = ret ? ret : err;
		}
		err = r->ops->unpin(g, r);
		ret = ret ? ret : err;
		region_release(g, r);
	}
	g->ops.close(g);
	pthread_mutex_unlock(&g->lock);
	pthread_mutex_destroy(&g->lock);
	free(g);
	return ret;
}

static int pin(gdr_t g, unsigned long addr, size_t size, uint64_t p2p_token,
	       uint32_t va_space, uint32_t flags, gdr_mh_t *handle,
	       const char *caller)
{
	struct gdr_region *r;
	uint64_t end;
	gdr_mh_t mh;
	int err, explained = 0;

	if (!g || !handle) {
		gdr_err("%s: %s is NULL", caller, g ? "handle" : "g");
		return EINVAL;
	}
	if (gdr_opened_before_fork(g, caller))
		return EINVAL;
	if (!addr || !size || addr + size < addr ||
	    addr + size > UINT64_MAX - GPU_PAGE_SIZE) {
		gdr_err("%s: [0x%lx, +%zu) is not a valid range: pass a GPU address and a non-zero size",
			caller, addr, size);
		return EINVAL;
	}
	if (flags & ~(uint32_t)GDR_PIN_FLAG_FORCE_PCIE) {
		gdr_err("%s: unknown flags 0x%x: only GDR_PIN_FLAG_FORCE_PCIE is defined",
			caller, flags);
		return EINVAL;
	}
	end = round_up(addr + size, GPU_PAGE_SIZE);

	pthread_mutex_lock(&g->lock);
	r = gdr_region_alloc(g, &mh);
	if (!r) {
		pthread_mutex_unlock(&g->lock);
		return ENOMEM;
	}
	r->addr = addr;
	r->size = size;
	r->pin_addr = addr & GPU_PAGE_MASK;
	r->pin_size = end - r->pin_addr;
	r->pin_flags = flags;
	r->ops = &g->ops;
	err = g->ops.pin(g, r, p2p_token, va_space);
	if (err == GDR_PIN_UNMAPPABLE) {
		/* Explained there, whatever the outcome. */
		err = gdr_copy_only_pin(g, r, caller);
		explained = 1;
	}
	if (err) {
		char why[256];

		gdr_region_free(r);
		pthread_mutex_unlock(&g->lock);
		if (!explained &&
		    gdr_cuda_explain_pin(addr, size, why, sizeof(why)))
			gdr_err("%s: %s", caller, why);
		return err;
	}
	r->next = g->regions;
	if (r->next)
		r->next->prev = r;
	g->regions = r;
	pthread_mutex_unlock(&g->lock);
	*handle = mh;
	gdr_dbg("%s: pinned [0x%lx, +%zu) with the %s backend%s", caller, addr,
		size, g->ops.name, r->ops != &g->ops ? ", copy-only" : "");
	return 0;
}

GDR_API int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size,
			   uint64_t p2p_token, uint32_t va_space,
			   gdr_mh_t *handle)
{
	return pin(g, addr, size, p2p_token, va_space, GDR_PIN_FLAG_DEFAULT,
		   handle, __func__);
}

GDR_API int gdr_pin_buffer_v2(gdr_t g, unsigned long addr, size_t size,
			      uint32_t flags, gdr_mh_t *handle)
{
	return pin(g, addr, size, 0, 0, flags, handle, __func__);
}

/* Look up mh for g, with g->lock taken; NULL (lock not held) if invalid. */
static struct gdr_region *lock_region(gdr_t g, gdr_mh_t mh,
				      const char *caller)
{
	struct gdr_region *r;

	if (!g) {
		gdr_err("%s: g is NULL", caller);
		return NULL;
	}
	if (gdr_opened_before_fork(g, caller))
		return NULL;
	pthread_mutex_lock(&g->lock);
	r = gdr_region_get(g, mh, caller);
	if (!r)
		pthread_mutex_unlock(&g->lock);
	return r;
}

GDR_API int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle)
{
	struct gdr_region *r = lock_region(g, handle, __func__);
	int err;

	if (!r)
		return EINVAL;
	if (atomic_load_explicit(&r->state, memory_order_relaxed) &
	    REGION_MAPPED) {
		gdr_err("handle 0x%lx is still mapped at %p: call gdr_unmap first",
			handle.h, (void *)atomic_load(&r->map_va));
		pthread_mutex_unlock(&g->lock);
		return EBUSY;
	}
	/* As GDRCopy does, the handle is gone even if the backend failed:
	 * keeping it would leave the caller nothing to retry with. */
	err = r->ops->unpin(g, r);
	region_release(g, r);
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDR_API int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag)
{
	struct gdr_region *r;
	int err;

	if (!flag) {
		gdr_err("flag is NULL");
		return EINVAL;
	}
	r = lock_region(g, handle, __func__);
	if (!r)
		return EINVAL;
	*flag = 0;
	err = r->ops->get_callback_flag(g, r, flag);
	pthread_mutex_unlock(&g->lock);
	return err;
}

/* Ask the backend about a pin (v1: through its v1 query) into *info. */
static int query_info(gdr_t g, gdr_mh_t handle, int v1, gdr_info_v2_t *info,
		      const char *caller)
{
	struct gdr_pin_info pi = { 0 };
	struct gdr_region *r;
	int err;

	if (!info) {
		gdr_err("%s: info is NULL", caller);
		return EINVAL;
	}
	r = lock_region(g, handle, caller);
	if (!r)
		return EINVAL;
	err = v1 ? r->ops->get_info_v1(g, r, &pi) : r->ops->get_info(g, r, &pi);
	pthread_mutex_unlock(&g->lock);
	if (err)
		return err;
	memset(info, 0, sizeof(*info));
	info->va = pi.va;
	info->mapped_size = pi.mapped_size;
	info->page_size = pi.page_size;
	info->tm_cycles = pi.tm_cycles;
	info->cycles_per_ms = pi.cycles_per_ms;
	info->mapped = pi.mapping_type != GDR_MAPPING_TYPE_NONE;
	info->wc_mapping = pi.mapping_type == GDR_MAPPING_TYPE_WC;
	info->mapping_type = pi.mapping_type;
	return 0;
}

GDR_API int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info)
{
	return query_info(g, handle, 0, info, __func__);
}

/*
 * GDRCopy exports a function named gdr_get_info that fills the 40-byte v1
 * struct (the header maps the name to gdr_get_info_v2); NCCL and NVSHMEM
 * look it up with dlsym.  v1 is v2 without its last field.
 */
_Static_assert(sizeof(struct gdr_info_v1) ==
	       offsetof(gdr_info_v2_t, mapping_type),
	       "gdr_info v1 is the head of gdr_info_v2");
#undef gdr_get_info
GDR_API int gdr_get_info(gdr_t g, gdr_mh_t handle, struct gdr_info_v1 *info);
GDR_API int gdr_get_info(gdr_t g, gdr_mh_t handle, struct gdr_info_v1 *info)
{
	gdr_info_v2_t full;
	int err;

	if (!info) {
		gdr_err("info is NULL");
		return EINVAL;
	}
	err = query_info(g, handle, 1, &full, __func__);
	if (!err)
		memcpy(info, &full, sizeof(*info));
	return err;
}

GDR_API int gdr_get_mapping_type_string(gdr_mapping_type_t type,
					const char **pstr)
{
	if (!pstr || (unsigned int)type >= GDR_MAPPING_TYPE_MAX) {
		gdr_err("%s", pstr ? "unknown mapping type" : "pstr is NULL");
		return EINVAL;
	}
	*pstr = gdr_mapping_type_name(type);
	return 0;
}

/* g->lock held. */
static int map_region(gdr_t g, struct gdr_region *r, gdr_mh_t handle,
		      void **va, size_t size, int flags)
{
	gdr_mapping_type_t want, got = GDR_MAPPING_TYPE_NONE;
	const struct gdr_copy_impl *copy;
	size_t len, need;
	void *p = NULL;
	int err;

	if (atomic_load_explicit(&r->state, memory_order_relaxed) &
	    REGION_MAPPED) {
		gdr_err("handle 0x%lx is already mapped: a pin has one mapping, unmap it first",
			handle.h);
		return EAGAIN;
	}
	if (flags < GDR_MAP_FLAG_DEFAULT ||
	    flags > GDR_MAP_FLAG_REQ_DEVICE_MAPPING) {
		gdr_err("unknown flags %d: use a GDR_MAP_FLAG_* value", flags);
		return EINVAL;
	}
	if (!size || size > r->pin_size) {
		gdr_err("size %zu is not between 1 and the pinned size %llu",
			size, (unsigned long long)r->pin_size);
		return EINVAL;
	}
	/* GDR_MAP_FLAG_REQ_* and GDR_MAPPING_TYPE_* share their values. */
	want = (gdr_mapping_type_t)flags;
	/* Cover at least what was pinned, so that any pinned address is
	 * reachable from the pointer returned, whatever size says. */
	need = r->addr + r->size - r->pin_addr;
	len = round_up(size > need ? size : need, g->host_page_size);
	if (len > r->pin_size)
		len = r->pin_size;

	err = r->ops->map(g, r, len, want, &p, &got);
	if (err)
		return err;
	/* The copy functions see REGION_COPY_ONLY and need no routine. */
	if (atomic_load_explicit(&r->state, memory_order_relaxed) &
	    REGION_COPY_ONLY) {
		copy = NULL;
		goto mapped;
	}
	/* EOPNOTSUPP, as GDRCopy's gdrdrv: callers test it to fall back. */
	if (want != GDR_MAPPING_TYPE_NONE && got != want) {
		gdr_err("the %s backend mapped as %s, not %s as asked: map with GDR_MAP_FLAG_DEFAULT",
			g->ops.name, gdr_mapping_type_name(got),
			gdr_mapping_type_name(want));
		err = EOPNOTSUPP;
		goto unmap;
	}
	copy = gdr_copy_for_type(got);
	if (!copy) {
		gdr_err("the %s backend returned a mapping of unknown type %d",
			g->ops.name, got);
		err = EAGAIN;
		goto unmap;
	}
mapped:
	r->map_type = got;
	/* gdrmap_copy_*'s measurements are per mapping type. */
	gdr_tunes_forget(r);
	atomic_store_explicit(&r->map_va, (uintptr_t)p, memory_order_relaxed);
	atomic_store_explicit(&r->map_len, len, memory_order_relaxed);
	atomic_store_explicit(&r->copy, copy, memory_order_relaxed);
	atomic_fetch_or_explicit(&r->state, REGION_MAPPED,
				 memory_order_release);
	*va = p;
	return 0;

unmap:
	r->ops->unmap(g, r, p, len);
	return err;
}

GDR_API int gdr_map_v2(gdr_t g, gdr_mh_t handle, void **va, size_t size,
		       int flags)
{
	struct gdr_region *r;
	int err;

	if (!va) {
		gdr_err("va is NULL");
		return EINVAL;
	}
	r = lock_region(g, handle, __func__);
	if (!r)
		return EINVAL;
	err = map_region(g, r, handle, va, size, flags);
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDR_API int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size)
{
	return gdr_map_v2(g, handle, va, size, GDR_MAP_FLAG_DEFAULT);
}

GDR_API int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size)
{
	struct gdr_region *r = lock_region(g, handle, __func__);
	int err = EINVAL;

	if (!r)
		return EINVAL;
	if (!(atomic_load_explicit(&r->state, memory_order_relaxed) &
	      REGION_MAPPED))
		gdr_err("handle 0x%lx is not mapped", handle.h);
	else if ((uintptr_t)va != atomic_load(&r->map_va))
		gdr_err("%p is not the address gdr_map returned for handle 0x%lx (%p)",
			va, handle.h, (void *)atomic_load(&r->map_va));
	else if (!size)
		gdr_err("size is 0: pass the size given to gdr_map");
	else
		err = region_unmap(g, r);
	pthread_mutex_unlock(&g->lock);
	return err;
}

__attribute__((cold, noinline))
int gdr_copy_refused(gdr_mh_t handle, const void *map_ptr, size_t size,
			const void *host, const char *caller)
{
	struct gdr_region *r;
	uint64_t s;

	r = gdr_region_peek(handle, &s);
	if (!r && gdr_region_inherited(handle))
		gdr_err("%s: handle 0x%lx belongs to the parent process: " GDR_FORK_HINT,
			caller, handle.h);
	else if (!r)
		gdr_err("%s: handle 0x%lx is not a pinned buffer", caller,
			handle.h);
	else if (!(s & REGION_MAPPED))
		gdr_err("%s: handle 0x%lx is not mapped: call gdr_map first",
			caller, handle.h);
	else if (host)
		gdr_err("%s: [%p, +%zu) is not inside the mapping [%p, +%zu) of handle 0x%lx",
			caller, map_ptr, size,
			(void *)atomic_load(&r->map_va),
			atomic_load(&r->map_len), handle.h);
	else
		gdr_err("%s: the host pointer is NULL", caller);
	return EINVAL;
}

GDR_API int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr,
				const void *h_ptr, size_t size)
{
	struct gdr_region *r;
	uintptr_t base;
	uint64_t s;

	if (!size)
		return 0;
	r = gdr_copy_lookup(handle, map_d_ptr, size, &s, &base);
	if (__builtin_expect(!r || !h_ptr, 0))
		return gdr_copy_refused(handle, map_d_ptr, size, h_ptr, __func__);
	if (__builtin_expect(s & REGION_COPY_ONLY, 0))
		return gdr_copy_only_to_mapping(r, base, map_d_ptr, h_ptr,
						size);
	atomic_load_explicit(&r->copy, memory_order_relaxed)->to_mapping(
		map_d_ptr, h_ptr, size);
	return 0;
}

GDR_API int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr,
				  const void *map_d_ptr, size_t size)
{
	struct gdr_region *r;
	uintptr_t base;
	uint64_t s;

	if (!size)
		return 0;
	r = gdr_copy_lookup(handle, map_d_ptr, size, &s, &base);
	if (__builtin_expect(!r || !h_ptr, 0))
		return gdr_copy_refused(handle, map_d_ptr, size, h_ptr, __func__);
	if (__builtin_expect(s & REGION_COPY_ONLY, 0))
		return gdr_copy_only_from_mapping(r, base, h_ptr, map_d_ptr,
						  size);
	atomic_load_explicit(&r->copy, memory_order_relaxed)->from_mapping(
		h_ptr, map_d_ptr, size);
	return 0;
}

GDR_API void gdr_runtime_get_version(int *major, int *minor)
{
	if (major)
		*major = GDR_API_MAJOR_VERSION;
	if (minor)
		*minor = GDR_API_MINOR_VERSION;
}

GDR_API int gdr_driver_get_version(gdr_t g, int *major, int *minor)
{
	int err;

	if (!g || !major || !minor) {
		gdr_err("%s is NULL", !g ? "g" : !major ? "major" : "minor");
		return EINVAL;
	}
	if (gdr_opened_before_fork(g, __func__))
		return EINVAL;
	pthread_mutex_lock(&g->lock);
	err = g->ops.driver_version(g, major, minor);
	pthread_mutex_unlock(&g->lock);
	return err;
}

GDR_API int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v)
{
	int err;

	if (!g || !v) {
		gdr_err("%s is NULL", g ? "v" : "g");
		return EINVAL;
	}
	*v = 0;
	if (gdr_opened_before_fork(g, __func__))
		return EINVAL;
	if (attr == GDRMAP_ATTR_BACKEND) {
		*v = g->ops.id;
		return 0;
	}
	if (attr < GDR_ATTR_USE_PERSISTENT_MAPPING || attr >= GDR_ATTR_MAX) {
		gdr_err("unknown attribute %d", (int)attr);
		return EINVAL;
	}
	pthread_mutex_lock(&g->lock);
	err = g->ops.get_attribute(g, attr, v);
	pthread_mutex_unlock(&g->lock);
	return err;
}
