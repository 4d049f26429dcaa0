/* SPDX-License-Identifier: MIT */
/*
 * A backend is one table of functions that pins, maps and describes GPU
 * memory in its own way (the gdrdrv module, CUDA dma-bufs, Vulkan).  The
 * core calls every slot without testing for NULL: gdr_backend_complete()
 * fills the slots a backend leaves empty with defaults that either derive
 * the answer from other slots or refuse with a clear "not supported".
 *
 * Every function returns 0 or a positive errno, and logs the reason of a
 * failure (with gdr_err) before returning it.  The core holds g->lock
 * around every call but open.
 */
#ifndef GDRMAP_BACKEND_H
#define GDRMAP_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"

struct gdr;
struct gdr_region;

/* What a backend knows about a pin: the gdr_info_v2 fields. */
struct gdr_pin_info {
	uint64_t va;
	uint64_t mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;
	uint32_t cycles_per_ms;
	gdr_mapping_type_t mapping_type;
};

struct gdr_backend {
	const char *name;
	gdrmap_backend_t id;
	/*
	 * It cannot map cuMemAlloc/cudaMalloc memory (it pins it copy-only),
	 * so gdr_open, the GDRCopy API, leaves it out unless the environment
	 * asks for it, as GDRCopy's library steps aside where it cannot map
	 * every allocation; gdrmap_open takes it (backend_select.c).
	 */
	bool partial;

	/*
	 * Connect g to this backend.  On failure return a positive errno and
	 * write into why (why_len bytes) what is missing and how to fix it;
	 * the caller decides whether that is worth printing.
	 */
	int (*open)(struct gdr *g, char *why, size_t why_len);
	void (*close)(struct gdr *g);

	/*
	 * Pin r->pin_addr .. + r->pin_size (GPU_PAGE_SIZE aligned) with the
	 * GDR_PIN_FLAG_* in r->pin_flags; keep what is needed in r->bhandle
	 * and r->bpriv.  A backend with a finer granularity may narrow the
	 * window, keeping [r->addr, r->addr + r->size) inside it.  A
	 * module-free backend returns gdr_pin_unmappable(...) for memory it
	 * cannot map but that may be GPU memory: the core then pins it
	 * copy-only (copy_only_pins.h).
	 */
	int (*pin)(struct gdr *g, struct gdr_region *r, uint64_t p2p_token,
		   uint32_t va_space);
	int (*unpin)(struct gdr *g, struct gdr_region *r);
	int (*get_callback_flag)(struct gdr *g, struct gdr_region *r,
				 int *flag);
	/* Default: the window, 64 KiB pages, and r->map_type. */
	int (*get_info)(struct gdr *g, struct gdr_region *r,
			struct gdr_pin_info *info);
	/* For GDRCopy's exported v1 gdr_get_info symbol. */
	int (*get_info_v1)(struct gdr *g, struct gdr_region *r,
			   struct gdr_pin_info *info);

	/*
	 * Map the first len bytes of the pinned window (len is a multiple of
	 * the host page size).  want is the type asked for, NONE for the
	 * backend's choice; *got is the type obtained.
	 */
	int (*map)(struct gdr *g, struct gdr_region *r, size_t len,
		   gdr_mapping_type_t want, void **va, gdr_mapping_type_t *got);
	int (*unmap)(struct gdr *g, struct gdr_region *r, void *va,
		     size_t len);

	int (*driver_version)(struct gdr *g, int *major, int *minor);
	/* attr is one of GDR_ATTR_USE_PERSISTENT_MAPPING ..
	 * GDR_ATTR_USING_DMA_BUF_MMAP; *v is already 0. */
	int (*get_attribute)(struct gdr *g, gdr_attr_t attr, int *v);
};

/*
 * Not an errno: a backend's pin cannot map this memory (the message says
 * why), which the core serves copy-only if it is GPU memory.  Returned by
 * gdr_pin_unmappable, which keeps the message for the calling thread.
 */
#define GDR_PIN_UNMAPPABLE 0x10000

/* Linux's internal "not supported" errno (no libc names it), which
 * nvidia_p2p returns to gdrdrv and the driver's dma-buf mmap returns. */
#define ENOTSUPP_KERNEL 524
__attribute__((format(printf, 1, 2)))
int gdr_pin_unmappable(const char *fmt, ...);

/*
 * The module-free backends' get_callback_flag (buffer_id.c): 1 once CUDA's
 * buffer ID at the pinned address differs from the one recorded at pin
 * time by gdr_buffer_id_record (freed, reallocated, remapped).
 */
void gdr_buffer_id_record(struct gdr_region *r);
int gdr_buffer_id_callback_flag(struct gdr *g, struct gdr_region *r,
				int *flag);

/*
 * The module-free backends' rule for GDR_PIN_FLAG_FORCE_PCIE, one for
 * all: on a GPU without a coherent link to the CPU every mapping is PCIe
 * already, and NVIDIA's driver refuses the flag there (so gdrdrv, and
 * GDRCopy's dma-buf path, refuse it): refused with EOPNOTSUPP, saying
 * why.  0 where a coherent link exists (the backend decides) or the flag
 * was not asked for.
 */
int gdr_force_pcie_refused(const struct gdr_region *r, int dev);

/* get_info for a backend that pins whole host pages (dmabuf, rm): the
 * window, host pages, r->map_type. */
int gdr_get_info_host_pages(struct gdr *g, struct gdr_region *r,
			     struct gdr_pin_info *info);

/* Copy src into dst with every empty slot filled with its default. */
void gdr_backend_complete(struct gdr_backend *dst,
			  const struct gdr_backend *src);

/*
 * The backends, in the order gdr_open tries them (backend_select.c): each
 * X(its GDRMAP_ATTR_BACKEND value, its name), which is the name
 * GDRMAP_BACKEND takes and that of its struct, gdr_backend_<name>.  The
 * gdrmap command names and probes the backends by this list too.
 */
#define GDR_BACKENDS(X)					\
	X(GDRMAP_BACKEND_GDRDRV, gdrdrv)		\
	X(GDRMAP_BACKEND_DMABUF, dmabuf)		\
	X(GDRMAP_BACKEND_RM, rm)			\
	X(GDRMAP_BACKEND_VULKAN, vulkan)

#define GDR_BACKEND_DECLARE_(id, name) \
	extern const struct gdr_backend gdr_backend_##name;
GDR_BACKENDS(GDR_BACKEND_DECLARE_)
#define GDR_BACKEND_COUNT_(id, name) +1
#define GDR_NR_BACKENDS (0 GDR_BACKENDS(GDR_BACKEND_COUNT_))

/* The name of a GDRMAP_ATTR_BACKEND value, or NULL. */
static inline const char *gdr_backend_name(int id)
{
#define GDR_BACKEND_NAME_(i, name) if (id == (i)) return #name;
	GDR_BACKENDS(GDR_BACKEND_NAME_)
	return NULL;
}

/* The GDRMAP_ATTR_BACKEND value of the i-th backend gdr_open tries. */
static inline int gdr_backend_at(int i)
{
#define GDR_BACKEND_ID_(id, name) id,
	static const int ids[] = { GDR_BACKENDS(GDR_BACKEND_ID_) };

	return ids[i];
}

#endif /* GDRMAP_BACKEND_H */
