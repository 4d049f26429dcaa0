/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * nvsim: gdrmap's simulated GPU - internal declarations.
 *
 * Locking: one global mutex, nvsim_lock, protects every object below (the
 * GPU table, each GPU's page allocator and counters, contexts, handles,
 * mappings, memory objects and pins).  It plays the role of NVIDIA's RM
 * API lock: free callbacks run with it held, so a put_pages racing with a
 * callback waits for it.  Reference counts are plain integers changed
 * under the lock.
 */
#ifndef _NVSIM_H
#define _NVSIM_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "nv-p2p.h"
#include "nvsim_ioctl.h"

#define NVSIM_PAGE_BYTES	((u64)NVSIM_PAGE_SIZE)
/* Bytes moved per step of read/write/copy; one page, bounded by a page. */
#define NVSIM_CHUNK		NVSIM_PAGE_BYTES
/* The BAR of an ivshmem-plain device that is a GPU's memory. */
#define NVSIM_BAR		2
/* Processes one address space may register (RM allows 256). */
#define NVSIM_MAX_CLIENTS	16

struct file;
struct pci_dev;
struct pid;
struct mm_struct;
struct proc_dir_entry;

static inline bool nvsim_aligned(u64 x)
{
	return !(x & (NVSIM_PAGE_BYTES - 1));
}

/* Bytes from va to the end of its 64 KiB page. */
static inline u64 nvsim_page_left(u64 va)
{
	return NVSIM_PAGE_BYTES - (va & (NVSIM_PAGE_BYTES - 1));
}

/*
 * What happened on one GPU; /proc/driver/nvsim/gpuN shows them, and the
 * files above it their sums over every GPU.
 */
struct nvsim_counters {
	unsigned long outstanding_pins;
	unsigned long persistent_pins;
	unsigned long pinned_pages;
	unsigned long callbacks_fired;
	unsigned long allocations;
	unsigned long get_pages_calls;
	unsigned long put_pages_calls;
	unsigned long dmabufs;
	/*
	 * The GPU's usage count that persistent pins hold (the driver's
	 * nvidia_dev_get_uuid), and the persistent pins whose put failed
	 * inside RM after dropping it: only a reset frees those.
	 */
	unsigned long gpu_refs;
	unsigned long abandoned_pins;
	unsigned long resets;
};

/* One simulated GPU: BAR2 of an ivshmem-plain device. */
struct nvsim_dev {
	struct kref kref;
	struct pci_dev *pdev;
	unsigned int index;	/* CUDA ordinal: slot in nvsim_gpus[] */
	phys_addr_t bar_phys;	/* CPU physical address of BAR2 */
	u64 bar_bus;		/* bus address of BAR2 (for dma_map_pages) */
	u64 bar_size;		/* bytes used: npages * 64 KiB */
	void __iomem *bar;	/* kernel WC mapping of BAR2 */
	unsigned long npages;
	unsigned long used;	/* pages allocated */
	unsigned long *bitmap;	/* 1 = page allocated */
	u8 uuid[NVIDIA_P2P_GPU_UUID_LEN];
	struct nvsim_counters count;
	struct proc_dir_entry *proc;	/* /proc/driver/nvsim/gpuN */
};

/* A memory object: a set of BAR pages (cuMemCreate, cuMemAlloc). */
struct nvsim_mem {
	unsigned long refs;	/* handles + mappings + persistent pins */
	struct nvsim_dev *gpu;	/* holds a device reference */
	u64 size;
	unsigned long npages;
	u32 user_flags;
	u32 *pages;		/* BAR page index of each page */
};

/* A per-fd reference to a memory object. */
struct nvsim_handle {
	struct nvsim_mem *mem;
	unsigned long refs;	/* cuMemRelease calls to come */
};

/*
 * An open /dev/nvsim: one process's device address space, shared by every
 * GPU (unified addressing); each memory object names its own GPU.
 */
struct nvsim_ctx {
	struct list_head node;		/* nvsim_ctxs */
	struct mm_struct *mm;		/* mmgrab'ed; identifies the process */
	struct pid *tgid;		/* the opener's thread group (a ref) */
	u64 p2p_token;
	u32 va_space;
	struct list_head maps;		/* struct nvsim_mapping, by address */
	struct xarray handles;		/* u32 -> struct nvsim_handle */
	/*
	 * Other processes' address spaces registered with this one
	 * (NVSIM_IOC_REGISTER_PID): their token-0 get_pages and put_pages
	 * find this one's memory and pins, until they are released.
	 */
	struct nvsim_ctx *clients[NVSIM_MAX_CLIENTS];
};

/* [va, va + size) of a process maps [offset, offset + size) of a mem. */
struct nvsim_mapping {
	struct list_head node;		/* ctx->maps */
	struct nvsim_ctx *ctx;
	struct nvsim_mem *mem;		/* holds a mem reference */
	u64 va;
	u64 size;
	u64 offset;
	u64 buffer_id;
	struct list_head pins;		/* non-persistent struct nvsim_pin */
};

/* A page table handed out by nvidia_p2p_get_pages[_persistent]. */
struct nvsim_pin {
	struct nvidia_p2p_page_table pt;	/* what the caller sees */
	struct list_head node;			/* nvsim_pins */
	struct list_head map_node;		/* map->pins (non-persistent) */
	bool persistent;
	u64 va;
	struct nvsim_mapping *map;			/* non-persistent */
	struct nvsim_mem *mem;			/* persistent: holds a ref */
	struct nvsim_dev *gpu;			/* lives as long as the pin */
	void (*free_callback)(void *data);
	void *data;
	struct list_head dma_maps;		/* struct nvsim_dma_map */
	struct nvidia_p2p_page *page_structs;
	u8 uuid[NVIDIA_P2P_GPU_UUID_LEN];
	bool freed_by_callback;			/* while cached for reuse */
	/* Persistent: its put failed in RM, its GPU reference dropped. */
	bool abandoned;
	u64 serial;				/* which get_pages made it */
};

struct nvsim_dma_map {
	struct nvidia_p2p_dma_mapping m;
	struct list_head node;			/* pin->dma_maps */
};

/* nvsim_params.c: the module parameters, as they are at each call */
bool nvsim_param_scatter(void);
bool nvsim_param_poison(void);
bool nvsim_param_dmabuf(void);
bool nvsim_param_dmabuf_mmap(void);
unsigned long nvsim_param_max_pages(void);
bool nvsim_param_take_fail_put(void);
bool nvsim_param_take_fail_put_rm(void);
bool nvsim_param_take_fail_get_late(void);

/* nvsim_gpu.c: the GPUs and nvsim_lock */
extern struct mutex nvsim_lock;

struct nvsim_snapshot {
	struct nvsim_counters c;
	unsigned long used_pages;
	unsigned long total_pages;
};

struct nvsim_dev *nvsim_gpu_add(struct pci_dev *pdev);
void nvsim_gpu_remove(struct nvsim_dev *gpu);
void nvsim_dev_get(struct nvsim_dev *gpu);
void nvsim_dev_put(struct nvsim_dev *gpu);
struct nvsim_dev *nvsim_gpu_by_index(u32 index);
unsigned int nvsim_gpu_count(void);
void nvsim_snapshot_locked(const struct nvsim_dev *gpu,
			   struct nvsim_snapshot *s);
void nvsim_snapshot(const struct nvsim_dev *gpu, struct nvsim_snapshot *s);

/* nvsim_proc.c: /proc/driver/nvsim */
void nvsim_proc_init(void);
void nvsim_proc_exit(void);
void nvsim_proc_gpu_add(struct nvsim_dev *gpu);
void nvsim_proc_gpu_remove(struct nvsim_dev *gpu);

/* nvsim_mem.c: memory objects and the BAR pages they hold */
struct nvsim_mem *nvsim_mem_create(struct nvsim_dev *gpu, u64 size,
				   u32 user_flags);
void nvsim_mem_put(struct nvsim_mem *mem);

/* nvsim_ctx.c: address spaces (an open /dev/nvsim), handles, mappings */
struct nvsim_ctx *nvsim_ctx_create(void);
void nvsim_ctx_destroy(struct nvsim_ctx *ctx);
int nvsim_handle_add(struct nvsim_ctx *ctx, struct nvsim_mem *mem, u32 *id);
int nvsim_handle_release(struct nvsim_ctx *ctx, u32 id);
struct nvsim_mem *nvsim_handle_mem(struct nvsim_ctx *ctx, u32 id);
bool nvsim_range_ok(u64 va, u64 size);
bool nvsim_overlaps(struct mm_struct *mm, u64 va, u64 size);
int nvsim_map_add(struct nvsim_ctx *ctx, struct nvsim_mem *mem,
		  u64 va, u64 size, u64 offset, u64 *buffer_id);
int nvsim_unmap_range(struct nvsim_ctx *ctx, u64 va, u64 size);
struct nvsim_mapping *nvsim_find_map(struct nvsim_ctx *ctx, u64 va, u64 len);
void __iomem *nvsim_map_io(struct nvsim_mapping *map, u64 va);
struct nvsim_mapping *nvsim_lookup(u64 p2p_token, u32 va_space, u64 va,
				   u64 len);
bool nvsim_token_exists(u64 p2p_token);
bool nvsim_ctx_serves(const struct nvsim_ctx *ctx, const struct pid *tgid);
int nvsim_register_client(struct nvsim_ctx *ctx, pid_t nr);

/* nvsim_pins.c: the page tables handed out, their release and callbacks */
struct nvsim_pin *nvsim_pin_new(bool *recycled);
void nvsim_pin_add(struct nvsim_pin *pin);
struct nvsim_pin *nvsim_find_pin(struct nvidia_p2p_page_table *pt);
struct nvsim_pin *nvsim_find_pin_serial(u64 serial);
void nvsim_pin_free(struct nvsim_pin *pin, bool by_callback);
void nvsim_free_abandoned_pins(struct nvsim_dev *gpu);
void nvsim_fire_callbacks(struct nvsim_mapping *map);
void nvsim_free_leftover_pins(void);

/* nvsim_ioctl.c: the commands of /dev/nvsim */
long nvsim_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* nvsim_cdev.c: /dev/nvsim */
int nvsim_cdev_register(void);
void nvsim_cdev_unregister(void);

/* nvsim_dmabuf.c */
int nvsim_export_dmabuf(struct nvsim_ctx *ctx, struct nvsim_export_dmabuf *a);

/*
 * nvsim_p2p.c: the nvidia_p2p_* API, and its counters: of the API as a
 * whole, not of one GPU; nvsim_lock.
 */
struct nvsim_p2p_counters {
	unsigned long get_pages_requests;	/* every call, valid or not */
	unsigned long put_pages_requests;	/* every call with a table */
	unsigned long stale_puts;	/* put_pages of a table freed already */
	unsigned long recycled_tables;	/* pins on a table a callback freed */
	/* put_pages of a live table the driver would not find: no-op */
	unsigned long foreign_puts;
	/* put_pages with a token of a table not that token's: freed anyway */
	unsigned long double_frees;
	/* put_pages_persistent of a table that is no live persistent pin */
	unsigned long use_after_free;
	unsigned long rm_failed_puts;	/* puts that fail_puts_rm failed */
	unsigned long late_failed_gets;	/* gets that fail_gets_late failed */
	/* a GPU reference dropped that nobody held (nv_close_device) */
	unsigned long gpu_ref_underflows;
	/* puts that fail_puts failed, before any lock: not nvsim_lock's */
	unsigned long failed_puts;
};

void nvsim_p2p_snapshot(struct nvsim_p2p_counters *p);
int nvsim_gpu_reset(u32 index);

/* nvsim_hooks.c: forcing interleavings in tests */
enum nvsim_hook_point {
	NVSIM_AT_PUT_ENTER,
	NVSIM_AT_PUT_EXIT,
	NVSIM_AT_CALLBACK,
	NVSIM_AT_CALLBACK_DONE,
	NVSIM_AT_GET_RETURN,
};

enum nvsim_hook_event {
	NVSIM_EV_CALLBACK,
	NVSIM_EV_PIN,
	NVSIM_EV_PUT_ENTER,
	NVSIM_EV_FREE,
	NVSIM_EV_COUNT
};

struct proc_dir_entry;
void nvsim_hook_at(enum nvsim_hook_point point, u64 va);
void nvsim_hook_event(enum nvsim_hook_event ev, u64 va, u64 len);
void nvsim_hooks_proc_init(struct proc_dir_entry *dir);

#endif /* _NVSIM_H */
