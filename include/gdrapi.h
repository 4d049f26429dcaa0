/* SPDX-License-Identifier: MIT */
/*
 * gdrapi.h - CPU mappings of GPU memory (gdrmap's implementation of the
 * GDRCopy 2.x API).
 *
 * This header is source compatible with GDRCopy 2.6's gdrapi.h: every
 * function, type, enum value and macro has the same name, value and layout,
 * so a program written for GDRCopy compiles against it unchanged and runs
 * against libgdrapi.so.2 from gdrmap.  Names starting with gdrmap_ or
 * GDRMAP_ are gdrmap extensions and are marked as such.
 *
 * The life of a mapping:
 *
 *   gdr_t g = gdr_open();
 *   gdr_pin_buffer(g, dptr, size, 0, 0, &mh);   pin GPU memory
 *   gdr_map(g, mh, &base, size);                map it into this process
 *   gdr_get_info(g, mh, &info);                 base corresponds to info.va
 *   char *p = (char *)base + (dptr - info.va);  CPU pointer to dptr
 *   gdr_copy_to_mapping(mh, p, src, n);         write through the mapping
 *   gdr_copy_from_mapping(mh, dst, p, n);       read through the mapping
 *   gdr_unmap(g, mh, base, size);
 *   gdr_unpin_buffer(g, mh);
 *   gdr_close(g);
 *
 * Error convention: functions returning int give 0 on success or a
 * positive errno value (EINVAL, ENOMEM, ...) on failure, never -1 and never
 * a negative value.  gdr_open returns NULL on failure.  Nothing is printed
 * unless logging is enabled (see Environment below); with logging on, each
 * failure is explained on stderr together with what to do about it.
 *
 * Thread safety: every function may be called from any thread, concurrently
 * with any other, on the same or different gdr_t and handles.  Calls that
 * change a handle's state (pin, unpin, map, unmap, close) are serialised
 * per gdr_t.  gdr_copy_to_mapping and gdr_copy_from_mapping take no lock;
 * it is the caller's job not to unmap or unpin a handle while a copy on it
 * is running in another thread (doing so may fault, as any use of unmapped
 * memory does).  A handle that was unpinned, or one that never existed, is
 * detected and refused with EINVAL rather than crashing, as far as the
 * library can tell it apart from a live one.
 *
 * Environment:
 *   GDRCOPY_ENABLE_LOGGING  set to any value: print messages on stderr.
 *   GDRCOPY_LOG_LEVEL       1 debug, 2 info, 3 warnings, 4 errors (default).
 *   GDRCOPY_USE_DMABUF_MMAP "1": skip gdrdrv and use the dma-buf backend.
  *   GDRMAP_BACKEND          gdrmap extension: gdrdrv, dmabuf, rm or vulkan
 *                           forces that backend (gdr_open fails if it is
 *                           not usable, and logs why).
 *   GDRMAP_COPY_ONLY        gdrmap extension: "0" refuses to pin GPU memory
 *                           the module-free backend cannot map, instead of
 *                           pinning it copy-only (gdr_map gives a pointer
 *                           with no access, gdr_get_info mapping type NONE,
 *                           and gdr_copy_to/from_mapping move the bytes by
 *                           DMA; see gdrapi(3)).
 *   GDRMAP_COPY             gdrmap extension: force the copy routine set
 *                           used on write-combined mappings (generic,
 *                           sse41, avx2, avx512, movdir64b, neon) instead
 *                           of the one chosen from CPU features; a name
 *                           that is unknown or unsupported here is ignored.
 */
#ifndef __GDRAPI_H__
#define __GDRAPI_H__

#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>

#define MAJOR_VERSION_SHIFT	16
#define MINOR_VERSION_MASK	(((uint32_t)1 << MAJOR_VERSION_SHIFT) - 1)

#define GDR_API_MAJOR_VERSION	2
#define GDR_API_MINOR_VERSION	6
#define GDR_API_VERSION \
	((GDR_API_MAJOR_VERSION << MAJOR_VERSION_SHIFT) | GDR_API_MINOR_VERSION)

#define MINIMUM_GDRDRV_MAJOR_VERSION	2
#define MINIMUM_GDRDRV_MINOR_VERSION	0
#define MINIMUM_GDRDRV_VERSION \
	((MINIMUM_GDRDRV_MAJOR_VERSION << MAJOR_VERSION_SHIFT) | \
	 MINIMUM_GDRDRV_MINOR_VERSION)

/* GPU memory is pinned and mapped in units of 64 KiB. */
#define GPU_PAGE_SHIFT	16
#define GPU_PAGE_SIZE	(1UL << GPU_PAGE_SHIFT)
#define GPU_PAGE_OFFSET	(GPU_PAGE_SIZE - 1)
#define GPU_PAGE_MASK	(~GPU_PAGE_OFFSET)

/* gdrmap extension: the version of gdrmap itself (not of the API). */
#define GDRMAP_VERSION_MAJOR	0
#define GDRMAP_VERSION_MINOR	2

#ifdef __cplusplus
extern "C" {
#endif

/* A library instance: one connection to a backend (gdrdrv, dmabuf, ...). */
struct gdr;
typedef struct gdr *gdr_t;

/*
 * A pinned GPU range.  Passed by value; `h` is opaque.  Handles are valid
 * in every thread of the process but only with the gdr_t that made them.
 */
typedef struct gdr_mh_s {
	unsigned long h;
} gdr_mh_t;

typedef enum gdr_pin_flags {
	GDR_PIN_FLAG_DEFAULT = 0,
	/* Ask for the mapping to go over PCIe even where a coherent link
	 * (C2C) exists.  Needs gdrdrv 2.5+ in persistent mode. */
	GDR_PIN_FLAG_FORCE_PCIE = 1
} gdr_pin_flags_t;

typedef enum gdr_mapping_type {
	GDR_MAPPING_TYPE_NONE = 0,	/* not mapped */
	GDR_MAPPING_TYPE_WC = 1,	/* write-combined (x86 PCIe GPUs) */
	GDR_MAPPING_TYPE_CACHING = 2,	/* cached, coherent (e.g. Grace) */
	GDR_MAPPING_TYPE_DEVICE = 3,	/* device memory, uncached, arm64 */
	GDR_MAPPING_TYPE_MAX		/* not a type; one past the last */
} gdr_mapping_type_t;

typedef enum gdr_map_flags {
	GDR_MAP_FLAG_DEFAULT = 0,	/* let the backend choose */
	GDR_MAP_FLAG_REQ_WC_MAPPING = 1,
	GDR_MAP_FLAG_REQ_CACHE_MAPPING = 2,
	GDR_MAP_FLAG_REQ_DEVICE_MAPPING = 3
} gdr_map_flags_t;

typedef enum gdr_attr {
	/* 1 if gdrdrv pins with nvidia_p2p_get_pages_persistent. */
	GDR_ATTR_USE_PERSISTENT_MAPPING = 1,
	/* 1 if GDR_PIN_FLAG_FORCE_PCIE can be used. */
	GDR_ATTR_SUPPORT_PIN_FLAG_FORCE_PCIE = 2,
	/* 1 if this gdr_t maps through dma-buf rather than gdrdrv. */
	GDR_ATTR_USING_DMA_BUF_MMAP = 3,
	GDR_ATTR_MAX,			/* not an attribute */

	/* gdrmap extension: which backend this gdr_t uses, as a
	 * gdrmap_backend_t value. */
	GDRMAP_ATTR_BACKEND = 0x10001
} gdr_attr_t;

/* gdrmap extension: the backends, as GDRMAP_ATTR_BACKEND reports them. */
typedef enum gdrmap_backend {
	GDRMAP_BACKEND_GDRDRV = 1,	/* the gdrdrv kernel module */
	GDRMAP_BACKEND_DMABUF = 2,	/* CUDA dma-buf + mmap, no module */
	GDRMAP_BACKEND_VULKAN = 3,	/* CUDA VMM + Vulkan import, no module */
	GDRMAP_BACKEND_RM = 4		/* nvidia.ko's RM interface, no module */
} gdrmap_backend_t;

/*
 * What is known about a pinned range.  va and mapped_size describe the
 * pinned window, which starts at the pinned address rounded down to
 * GPU_PAGE_SIZE and ends at its end rounded up; a pointer returned by
 * gdr_map points at va.  tm_cycles and cycles_per_ms are kept for
 * compatibility and carry no useful information.
 */
typedef struct gdr_info_v2 {
	uint64_t va;
	uint64_t mapped_size;
	uint32_t page_size;
	uint64_t tm_cycles;		/* deprecated */
	uint32_t cycles_per_ms;		/* deprecated */
	unsigned mapped:1;		/* a CPU mapping exists */
	unsigned wc_mapping:1;		/* ... and it is write-combined */
	gdr_mapping_type_t mapping_type;
} gdr_info_v2_t;
typedef gdr_info_v2_t gdr_info_t;

/*
 * Open the library: choose a backend (gdrdrv when /dev/gdrdrv can be used,
 * else a module-free backend that maps every kind of CUDA memory) and
 * return an instance, or NULL if no backend is usable (errno is set;
 * gdrmap_last_error() says why).  As GDRCopy's, it steps aside where no
 * backend maps cudaMalloc memory: the vulkan backend, which maps only
 * cuMemCreate memory, is taken only with GDRMAP_BACKEND=vulkan or any
 * (gdrmap_open takes it).
 */
gdr_t gdr_open(void);

/*
 * Close an instance: unmap and unpin everything still pinned through it,
 * then release the backend.  Returns the first error met, but always
 * releases everything it can and frees g.
 */
int gdr_close(gdr_t g);

/*
 * Pin [addr, addr + size) of GPU memory so that it can be mapped.
 * gdrmap accepts any address and size inside one GPU allocation: the
 * pinned window is widened to GPU_PAGE_SIZE boundaries by the library.
 * p2p_token and va_space are deprecated; pass 0.  EINVAL for a NULL
 * handle, a zero size, an overflowing range or memory the backend cannot
 * pin (logging says why and what to do); ENODEV (module-free backends)
 * when the GPU that owns the memory cannot be used: no such CUDA device,
 * or no context of it can be made current.
 */
int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size,
		   uint64_t p2p_token, uint32_t va_space, gdr_mh_t *handle);

/* As gdr_pin_buffer, with GDR_PIN_FLAG_* flags (EINVAL for unknown ones). */
int gdr_pin_buffer_v2(gdr_t g, unsigned long addr, size_t size,
		      uint32_t flags, gdr_mh_t *handle);

/*
 * Unpin and forget a handle.  A handle that is still mapped is refused
 * with EBUSY (call gdr_unmap first); an unknown or already unpinned handle
 * gives EINVAL.
 */
int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle);

/*
 * *flag becomes 1 once the GPU memory under the pin was freed and the pin
 * invalidated (only in gdrdrv's non-persistent mode); otherwise 0.
 */
int gdr_get_callback_flag(gdr_t g, gdr_mh_t handle, int *flag);

/* Fill *info for a pinned handle. */
int gdr_get_info_v2(gdr_t g, gdr_mh_t handle, gdr_info_v2_t *info);

/* Source compatibility: gdr_get_info takes a gdr_info_t (= gdr_info_v2_t). */
#define gdr_get_info gdr_get_info_v2

/*
 * Map a pinned handle into this process; *va receives a pointer to
 * info.va (the start of the pinned window, not the pinned address).
 * size must be between 1 and info.mapped_size; the mapping always covers
 * at least the whole range that was passed to gdr_pin_buffer.  A handle
 * has at most one mapping: EAGAIN if it is already mapped.
 */
int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size);

/*
 * As gdr_map, asking for a mapping type (GDR_MAP_FLAG_*).  EINVAL for an
 * unknown flag; EOPNOTSUPP (as GDRCopy's gdrdrv gives) when the backend
 * cannot give the type asked for, with nothing left mapped.
 */
int gdr_map_v2(gdr_t g, gdr_mh_t handle, void **va, size_t size, int flags);

/* Remove the mapping made by gdr_map; va must be the pointer it returned. */
int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size);

/*
 * Copy size bytes from host memory h_ptr to map_d_ptr, a pointer inside
 * the handle's mapping.  Any size and any alignment of either pointer; only
 * the bytes asked for are written; the writes are fenced before return.
 * EINVAL if the handle is not mapped or the range leaves its mapping.
 * size 0 does nothing and returns 0.
 *
 * Data written here is visible to GPU work that starts after the call
 * returns; GPU kernels already running may see it late or out of order
 * (see NVIDIA's GPUDirect RDMA documentation on synchronisation).
 */
int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
			size_t size);

/*
 * Copy size bytes from map_d_ptr, inside the handle's mapping, to host
 * memory h_ptr.  A read is never older than a read that returned before it
 * started, and each 64-byte line of the source is read from the device
 * once.  Same rules and errors as gdr_copy_to_mapping.
 */
int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr, const void *map_d_ptr,
			  size_t size);

/* The API version this library implements (2, 6). */
void gdr_runtime_get_version(int *major, int *minor);

/*
 * The version of the kernel module behind g.  With a backend that uses no
 * module, gdrmap reports the API version it emulates (2, 6) instead of
 * failing.
 */
int gdr_driver_get_version(gdr_t g, int *major, int *minor);

/* Read a library-wide attribute; *v is set to 0 first.  EINVAL if unknown. */
int gdr_get_attribute(gdr_t g, gdr_attr_t attr, int *v);

/* *pstr = "None", "Write Combining", "Caching" or "Device"; else EINVAL. */
int gdr_get_mapping_type_string(gdr_mapping_type_t type, const char **pstr);

/*
 * gdrmap extensions: GPU memory that every backend can pin, including the
 * module-free ones (which cannot pin legacy cuMemAlloc memory).  For users
 * who own their allocations: flags, doorbells, staging buffers.
 *
 * gdrmap_mem_alloc allocates at least size bytes on CUDA device `device`
 * (an ordinal, as cuDeviceGet takes) with cuMemCreate, the POSIX file
 * descriptor handle type (where the device supports it; without it only
 * gdrdrv can pin the memory) and GPUDirect RDMA enabled where the GPU
 * allows it, maps it readable and writable for that device, and stores its GPU
 * address in *dptr.  The size is rounded up to the allocation granularity
 * (2 MiB on current GPUs).  It loads CUDA if the process has not.
 *
 * gdrmap_mem_free frees it; dptr must be an address gdrmap_mem_alloc
 * returned.  Pins of it keep working until unpinned (the vulkan backend
 * keeps the memory alive), but CUDA no longer sees the memory.
 *
 * Both return 0 or a positive errno: EINVAL for bad arguments and for any
 * CUDA failure other than running out of memory (gdrmap_last_error() has
 * CUDA's error), ENOMEM when the GPU is out of memory, ENODEV when CUDA or
 * the device is missing.
 */
int gdrmap_mem_alloc(int device, size_t size, unsigned long *dptr);
int gdrmap_mem_free(unsigned long dptr);

/*
 * gdrmap extensions: copies that take the fastest path for their size.
 * Same arguments, rules and errors as gdr_copy_to/from_mapping (which
 * stay CPU copies, as in GDRCopy), but each copy is served by whichever of
 * these is fastest on this machine for its size, direction and kind of
 * host buffer:
 *
 *   GDRMAP_COPY_PATH_MAPPING  the CPU through the mapping (gdr_copy_*);
 *   GDRMAP_COPY_PATH_THREADS  the CPU through the mapping, split across
 *                             the caller and helper threads (a core reads
 *                             the mapping at about 1 GB/s);
 *   GDRMAP_COPY_PATH_DMA      the GPU's copy engine, on a private
 *                             non-blocking stream of the memory's own
 *                             context (never ordered behind the
 *                             application's work), waited for: straight
 *                             from and to host memory CUDA has pinned;
 *   GDRMAP_COPY_PATH_STAGED   pageable host memory of large copies: the
 *                             copy engine from and to pinned staging
 *                             buffers that the caller and the helper
 *                             threads fill and empty, overlapped.
 *
 * The choice is measured, not configured: the first few copies of each
 * size class (powers of two) on each device, mapping type, direction and
 * host buffer kind (pageable, or pinned by CUDA: cuMemHostAlloc,
 * cuMemHostRegister; told apart from 64 KiB up, where it matters) time
 * every path, then the fastest serves from then on; sizes that the
 * mapping serves faster than the copy engine ever could take no timing
 * at all.  A copy is complete and visible when the call returns, whatever
 * the path.  Copy-only pins always use DMA.  The DMA and staged paths are
 * used only while the memory under the pin is the one pinned (its CUDA
 * buffer ID), so a pin whose memory was freed is served through the
 * mapping.  GDRMAP_COPY_PATH=mapping|threads|dma|staged forces one path
 * where it can serve.
 */
#define GDRMAP_COPY_PATH_AUTO		0
#define GDRMAP_COPY_PATH_MAPPING	1
#define GDRMAP_COPY_PATH_THREADS	2
#define GDRMAP_COPY_PATH_DMA		3
#define GDRMAP_COPY_PATH_STAGED		4

int gdrmap_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr,
			   const void *h_ptr, size_t size);
int gdrmap_copy_from_mapping(gdr_mh_t handle, void *h_ptr,
			     const void *map_d_ptr, size_t size);

/*
 * As those, by one path named by the caller (GDRMAP_COPY_PATH_*; AUTO is
 * what gdrmap_copy_* do): for benchmarks and tests.  EOPNOTSUPP, with
 * nothing copied, when that path cannot serve this copy (THREADS or
 * STAGED in a process allowed one CPU or with GDRMAP_COPY_THREADS=0,
 * THREADS below 2 KiB, STAGED from or to host memory CUDA has pinned or
 * below 256 KiB, DMA or STAGED without CUDA, MAPPING or THREADS on a
 * copy-only pin).
 */
int gdrmap_copy_to_mapping_via(gdr_mh_t handle, void *map_d_ptr,
			       const void *h_ptr, size_t size, int path);
int gdrmap_copy_from_mapping_via(gdr_mh_t handle, void *h_ptr,
				 const void *map_d_ptr, size_t size, int path);

/*
 * The path gdrmap_copy_to_mapping (to_mapping 1) or
 * gdrmap_copy_from_mapping (0) takes now for size bytes of handle's
 * memory from or to pageable host memory: GDRMAP_COPY_PATH_MAPPING,
 * _THREADS, _DMA or _STAGED, or GDRMAP_COPY_PATH_AUTO while that size
 * class is being measured (at first use, or again after its path grew
 * slower).  EINVAL if the handle is not mapped.
 */
int gdrmap_copy_path(gdr_mh_t handle, int to_mapping, size_t size,
		     int *path);

/*
 * As gdrmap_copy_path, for copies from or to the host buffer at h_ptr
 * (its kind: pageable, or pinned by CUDA).  gdrmap 0.2.
 */
int gdrmap_copy_path_host(gdr_mh_t handle, int to_mapping, const void *h_ptr,
			  size_t size, int *path);

/*
 * gdrmap extension: the explanation of the most recent failure of a call
 * into this library made by the calling thread (what went wrong and how to
 * fix it: the text GDRCOPY_ENABLE_LOGGING would print), or "" if none has
 * failed yet.  gdr_open's explains why no backend is usable.  Read it only
 * after a call returned an error: a call that succeeds may have replaced it
 * on the way (a backend it tried and passed over).  The string belongs to
 * the thread and stays valid until the thread's next call into the library.
 */
const char *gdrmap_last_error(void);

/*
 * gdrmap extension: gdr_open for programs that know what they pin.  It
 * also takes the vulkan backend, which maps cuMemCreate memory with the
 * POSIX file descriptor handle type (gdrmap_mem_alloc's) and pins other
 * GPU memory copy-only (gdr_get_info reports mapped 0; gdr_copy_* move
 * the bytes by DMA).  GDRMAP_BACKEND still forces a backend.
 */
gdr_t gdrmap_open(void);

#ifdef __cplusplus
}
#endif

#endif /* __GDRAPI_H__ */
