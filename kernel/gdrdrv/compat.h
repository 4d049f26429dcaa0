/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Differences between the kernel versions gdrdrv builds for (6.1 .. 6.12
 * and later), and the stand-ins for GPL-only kernel exports that the
 * proprietary flavour may not use.  Every such test of the module lives
 * here.
 */
#ifndef _GDRDRV_COMPAT_H
#define _GDRDRV_COMPAT_H

#include <linux/device.h>
#include <linux/mm.h>
#include <linux/version.h>

/* 6.4 dropped the owner argument of class_create(). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define gdrdrv_class_create(name)	class_create(name)
#else
#define gdrdrv_class_create(name)	class_create(THIS_MODULE, name)
#endif

/* 6.2 made the device of class.devnode() const. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define GDRDRV_DEVNODE_CONST	const
#else
#define GDRDRV_DEVNODE_CONST
#endif

/* 6.3 made vma->vm_flags read-only behind accessors. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
static inline void gdrdrv_vm_flags_set(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}

static inline void gdrdrv_vm_flags_clear(struct vm_area_struct *vma,
					 vm_flags_t flags)
{
	vm_flags_clear(vma, flags);
}
#else
static inline void gdrdrv_vm_flags_set(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void gdrdrv_vm_flags_clear(struct vm_area_struct *vma,
					 vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/*
 * Device memory is never mapped encrypted; pgprot_decrypted() on x86 goes
 * through cc_mkdec(), a GPL-only export.  A module linked to the
 * proprietary nvidia.ko inherits its taint and may not use GPL-only
 * symbols, so it clears the SME bit itself (sme_me_mask is a plain export).
 */
#if defined(GDRDRV_NV_PROPRIETARY) && defined(CONFIG_X86)
#include <linux/mem_encrypt.h>
static inline pgprot_t gdrdrv_pgprot_decrypted(pgprot_t prot)
{
	return __pgprot(__sme_clr(pgprot_val(prot)));
}
#else
#define gdrdrv_pgprot_decrypted	pgprot_decrypted
#endif

/*
 * pgprot_writecombine() is a GPL-only export on x86: the proprietary
 * flavour sets the WC cache mode itself (cachemode2protval() is a plain
 * export and honours PAT being off).
 */
#if defined(GDRDRV_NV_PROPRIETARY) && defined(CONFIG_X86)
static inline pgprot_t gdrdrv_pgprot_writecombine(pgprot_t prot)
{
	return __pgprot((pgprot_val(prot) & ~_PAGE_CACHE_MASK) |
			cachemode2protval(_PAGE_CACHE_MODE_WC));
}
#else
#define gdrdrv_pgprot_writecombine	pgprot_writecombine
#endif

/*
 * The fd's owner: a reference on the opener's thread-group pid.  put_pid()
 * is GPL-only, so the proprietary flavour keeps the number, as GDRCopy
 * does (a recycled pid could then match).
 */
#ifndef GDRDRV_NV_PROPRIETARY
#include <linux/pid.h>
#include <linux/sched.h>

struct gdrdrv_owner {
	struct pid *tgid;
};

static inline void gdrdrv_owner_get(struct gdrdrv_owner *owner)
{
	owner->tgid = get_pid(task_tgid(current));
}

static inline void gdrdrv_owner_put(struct gdrdrv_owner *owner)
{
	put_pid(owner->tgid);
}

static inline bool gdrdrv_owner_is_current(const struct gdrdrv_owner *owner)
{
	return task_tgid(current) == owner->tgid;
}
#else
#include <linux/sched.h>

struct gdrdrv_owner {
	pid_t tgid;
};

static inline void gdrdrv_owner_get(struct gdrdrv_owner *owner)
{
	owner->tgid = current->tgid;
}

static inline void gdrdrv_owner_put(struct gdrdrv_owner *owner)
{
}

static inline bool gdrdrv_owner_is_current(const struct gdrdrv_owner *owner)
{
	return current->tgid == owner->tgid;
}
#endif

#endif /* _GDRDRV_COMPAT_H */
