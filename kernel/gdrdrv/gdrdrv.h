/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * gdrdrv: CPU mappings of pinned GPU memory through the PCIe BAR, with the
 * character-device ABI of GDRCopy 2.x.  Shared declarations of the module.
 *
 * Objects and locks
 * -----------------
 * struct gdrdrv_file (one per open fd) owns an xarray of regions indexed by
 * handle, a handle counter, and the address_space that the fd's mappings
 * hang off (filp->f_mapping), so one region's mappings can be zapped with
 * unmap_mapping_range() over its handle's offset range.  It is reference
 * counted: by the open file (until release) and by every NVIDIA pin made
 * through it that is not yet released, which stays charged to it and
 * listed in /proc under its opener until then (registry.c), also past
 * the last close.
 *
 * struct gdrdrv_region (one per pin) is reference counted.  References are
 * held by: the fd's xarray (until unpin or close), the fd's list of pins
 * whose put_pages failed (until close), the NVIDIA pin (until it is
 * released: put_pages or the free callback, see pin.c) and every VMA
 * mapping it.  An NVIDIA pin also holds a reference on the module, since
 * NVIDIA may call back into it.
 *
 * Lock order:   mmap_lock -> gdrdrv_file.lock -> gdrdrv_region.lock
 *               gdrdrv_pin_gate -> gdrdrv_region.lock
 *               gdrdrv_pin_gate -> NVIDIA's locks -> gdrdrv_region.lock
 * The fault handler runs under mmap_lock (read) and takes only
 * gdrdrv_region.lock; unpin and the callback zap the mappings with it held.
 * The NVIDIA free callback runs with NVIDIA's own locks held and takes only
 * gdrdrv_region.lock.  NVIDIA get/put_pages are called with neither the fd
 * nor a region lock held, so no cycle through NVIDIA's locks exists.  No
 * user memory is touched with either lock held (no cycle through mmap_lock
 * either).  The lock of the gdrdrv_files xarray (registry.c) nests inside
 * nothing and around nothing that sleeps: it guards the registry of files
 * for /proc, which a reader walks one file at a time.
 */
#ifndef _GDRDRV_H
#define _GDRDRV_H

/* First: it says which kernel headers there are. */
#include "compat.h"

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/rwsem.h>
#include <linux/seq_file.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include "gdrdrv_ioctl.h"
#include "nv-p2p.h"

#define GDRDRV_NAME		"gdrdrv"
/* MODULE_VERSION and /proc say this; keep it equal to GDRDRV_VERSION. */
#define GDRDRV_VERSION_STRING	"2.6"

/* /dev/gdrdrv's mode unless dev_mode says otherwise, as GDRCopy's scripts. */
#define GDRDRV_DEFAULT_DEV_MODE	0666

#define GDRDRV_GPU_PAGE_SHIFT	16
#define GDRDRV_GPU_PAGE_SIZE	BIT_ULL(GDRDRV_GPU_PAGE_SHIFT)

/*
 * Handles are host page numbers in the fd's mmap offset space and stay
 * below 2^32, because NVIDIA's libgdrapi keeps them in a uint32_t.  They
 * only grow, so one fd pins at most 2^32 host pages over its life (16 TiB
 * with 4 KiB pages), whatever it unpinned meanwhile.
 */
#define GDRDRV_HANDLE_LIMIT	BIT_ULL(32)

#ifdef GDRDRV_NV_PROPRIETARY
#define GDRDRV_NV_FLAVOR	"proprietary"
#else
#define GDRDRV_NV_FLAVOR	"opensource"
#endif

/* What the NVIDIA header we were built against offers. */
#ifdef NVIDIA_P2P_CAP_GET_PAGES_PERSISTENT_API
#define GDRDRV_HAVE_PERSISTENT	1
#else
#define GDRDRV_HAVE_PERSISTENT	0
#endif
#ifdef NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING
#define GDRDRV_HAVE_FORCE_BAR1	1
#else
#define GDRDRV_HAVE_FORCE_BAR1	0
#endif

/* Module parameters (main.c). */
extern int gdrdrv_dbg_enabled;
extern int gdrdrv_info_enabled;
/* use_persistent_mapping, and the NVIDIA header has the persistent API. */
extern bool gdrdrv_persistent;
/* Bytes one open file may hold pinned; 0: no limit. */
extern unsigned long long gdrdrv_max_pinned_per_file;
/* PIN_BUFFER's p2p_token/va_space are honoured (callback mode). */
extern bool gdrdrv_allow_p2p_tokens;

/* NVIDIA pins not yet released, for /proc and the unload check (pin.c). */
extern atomic_t gdrdrv_pin_count;

#define gdrdrv_dbg(fmt, ...)						\
	do {								\
		if (gdrdrv_dbg_enabled)					\
			pr_debug(fmt, ##__VA_ARGS__);			\
	} while (0)
#define gdrdrv_info(fmt, ...)						\
	do {								\
		if (gdrdrv_info_enabled || gdrdrv_dbg_enabled)		\
			pr_info(fmt, ##__VA_ARGS__);			\
	} while (0)

struct gdrdrv_file {
	struct kref ref;		/* the open file, and pins (see above) */
	struct mutex lock;		/* regions, stuck, next_handle, req_type */
	struct xarray regions;		/* handle -> struct gdrdrv_region */
	struct list_head stuck;		/* regions whose put_pages failed */
	u64 next_handle;		/* first host page of the next pin */
	struct gdrdrv_owner owner;	/* thread group that opened the fd */
	pid_t owner_nr;			/* its number, for messages */
	kuid_t owner_uid;		/* its effective uid, for /proc */
	unsigned long id;		/* index in gdrdrv_files (registry.c) */
	bool closed;			/* released; WRITE_ONCE, for /proc */
	struct address_space mapping;	/* filp->f_mapping */
	/*
	 * Size and number of the NVIDIA pins made through the file and not
	 * yet released, and how many of those have left its handle table
	 * (left to their callbacks, or kept after a failed put_pages):
	 * charged under lock, uncharged by whoever releases a pin, read by
	 * /proc without lock.
	 */
	atomic64_t pinned_bytes;
	atomic_t pins;
	atomic_t left;
};

/* A physically contiguous piece of a mapping with its own WC memtype. */
struct gdrdrv_run {
	u64 phys;
	u64 len;
};

/*
 * Where a region's NVIDIA pin stands (gdrdrv_region.state); pin.c says who
 * moves it and why.
 */
enum gdrdrv_pin_state {
	GDRDRV_PIN_GETTING,	/* get_pages not returned (or failed) */
	GDRDRV_PIN_HELD,	/* ours: may be mapped */
	GDRDRV_PIN_PUTTING,	/* unpin's put_pages is in flight */
	GDRDRV_PIN_STUCK,	/* put_pages failed; kept, to put again */
	GDRDRV_PIN_LEFT,	/* unpinned; only the callback may release it */
	GDRDRV_PIN_GONE,	/* released by put_pages or the callback */
};

struct gdrdrv_region {
	struct kref ref;
	struct gdrdrv_file *file;	/* held by the pin until released */
	struct list_head stuck;		/* in file->stuck; file->lock */

	/* Set at pin, constant afterwards. */
	u64 handle;
	u64 va;				/* pinned start, 64 KiB aligned */
	u64 size;			/* pinned size, 64 KiB multiple */
	u64 offset;			/* caller's address - va */
	u64 p2p_token;
	u32 va_space;
	u32 flags;			/* GDRDRV_PIN_BUFFER_FLAG_* */
	bool persistent;
	u64 tm_cycles;

	u32 req_type;			/* REQ_MAPPING_TYPE; file->lock */
	u32 map_type;			/* type of the live mapping; lock */
	u64 map_len;			/* its length at mmap; lock */
	atomic_t map_count;		/* VMAs; changes to/from 0 under lock */

	struct mutex lock;		/* fields below */
	enum gdrdrv_pin_state state;
	struct nvidia_p2p_page_table *pt; /* while HELD or PUTTING */
	bool cb_fired;			/* the free callback ran */
	bool left;			/* counted in file->left */
	struct gdrdrv_run *wc_runs;	/* WC memtype reserved by mmap */
	unsigned int nr_wc_runs;
};

struct gdrdrv_pin_req {
	u64 addr;
	u64 size;
	u64 p2p_token;
	u32 va_space;
	u32 flags;
};

/*
 * GDRCopy lets only the thread group that opened the fd use it: an fd
 * inherited over fork or passed over a socket gets -EACCES.  Inline: the
 * ioctl, mmap and file code all ask.
 */
static inline bool gdrdrv_file_owned_by_current(const struct gdrdrv_file *f)
{
	return gdrdrv_owner_is_current(&f->owner);
}

/* file.c */
extern const struct file_operations gdrdrv_fops;

/* registry.c */
int gdrdrv_file_register(struct gdrdrv_file *f);
void gdrdrv_file_get(struct gdrdrv_file *f);
void gdrdrv_file_put(struct gdrdrv_file *f);
int gdrdrv_files_show(struct seq_file *m);

/* ioctl.c */
long gdrdrv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

/* node.c */
int gdrdrv_node_create(unsigned int dev_mode, unsigned int dev_gid);
void gdrdrv_node_destroy(void);

/* limits.c */
void gdrdrv_limits_init(u64 max_pin_size);
int gdrdrv_check_pin_size(u64 size);
int gdrdrv_charge_pin(struct gdrdrv_file *f, u64 bytes);
void gdrdrv_uncharge_pin(struct gdrdrv_file *f, u64 bytes);

/* proc.c */
void gdrdrv_proc_init(void);
void gdrdrv_proc_exit(void);

/* pin.c */
int gdrdrv_pin(struct gdrdrv_file *f, const struct gdrdrv_pin_req *req,
	       u64 *handle);
void gdrdrv_pin_exit(void);

/* release.c (and for pin.c, which makes what it releases) */
extern struct rw_semaphore gdrdrv_pin_gate;
int gdrdrv_unpin(struct gdrdrv_file *f, u64 handle);
void gdrdrv_unpin_all(struct gdrdrv_file *f, bool may_put_own);
void gdrdrv_forget_stuck(struct gdrdrv_file *f);
void gdrdrv_free_callback(void *data);
void gdrdrv_pin_count_out(struct gdrdrv_region *r);
void gdrdrv_pin_drop(struct gdrdrv_region *r);
void gdrdrv_region_unpin(struct gdrdrv_file *f, struct gdrdrv_region *r,
			 bool own);

/* region.c */
struct gdrdrv_region *gdrdrv_region_lookup(struct gdrdrv_file *f, u64 handle);
void gdrdrv_region_get(struct gdrdrv_region *r);
void gdrdrv_region_put(struct gdrdrv_region *r);

/* mmap.c */
int gdrdrv_mmap(struct file *filp, struct vm_area_struct *vma);
void gdrdrv_platform_init(void);
int gdrdrv_check_mapping_type(struct gdrdrv_region *r, u32 type);
void gdrdrv_region_zap(struct gdrdrv_region *r);

#endif /* _GDRDRV_H */
