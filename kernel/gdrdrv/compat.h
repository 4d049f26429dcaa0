/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Differences between the kernels gdrdrv builds for (4.18 to the newest),
 * and the stand-ins for GPL-only kernel exports that the proprietary
 * flavour may not use.  Every such choice of the module is made here.
 *
 * Kernel APIs are chosen by what compiles, not by version number:
 * distribution kernels backport APIs without changing it.  conftest.h is
 * written at build time by kernel/conftest.sh from the tests in conftest/
 * (one file per API, named after its GDRDRV_HAVE_ macro); the table in
 * README.md says which kernels have what.
 */
#ifndef _GDRDRV_COMPAT_H
#define _GDRDRV_COMPAT_H

#include "conftest.h"

#ifndef GDRDRV_HAVE_XARRAY
#error "gdrdrv needs the XArray (<linux/xarray.h>: Linux 4.20, or a kernel that backports it)"
#endif

#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#ifdef GDRDRV_HAVE_LINUX_MATH_H
#include <linux/math.h>
#endif

/* Before 5.5: no PCI_STD_NUM_BARS. */
#ifndef PCI_STD_NUM_BARS
#define PCI_STD_NUM_BARS	6
#endif

#ifdef GDRDRV_HAVE_CLASS_CREATE_NAME_ONLY
#define gdrdrv_class_create(name)	class_create(name)
#else
#define gdrdrv_class_create(name)	class_create(THIS_MODULE, name)
#endif

#ifdef GDRDRV_HAVE_DEVNODE_CONST_DEV
#define GDRDRV_DEVNODE_CONST	const
#else
#define GDRDRV_DEVNODE_CONST
#endif

/*
 * Sets and clears VMA flags in ->mmap.  The kernel links the new VMA into
 * the mm only after ->mmap returns, so nobody else can see it yet and it
 * needs no VMA lock: vm_flags_init() is the kernel's helper for exactly
 * that.  (vm_flags_set() would take the per-VMA lock, on kernels after
 * 6.12 through __vma_start_write(), a GPL-only export that the proprietary
 * flavour may not use.)  Before 6.3, vm_flags was writable.
 */
static inline void gdrdrv_vm_flags_mod(struct vm_area_struct *vma,
				       vm_flags_t set, vm_flags_t clear)
{
#ifdef GDRDRV_HAVE_VM_FLAGS_INIT
	vm_flags_init(vma, (vma->vm_flags | set) & ~clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/* Before 4.20, vm_insert_pfn_prot() returned an errno. */
static inline vm_fault_t gdrdrv_insert_pfn_prot(struct vm_area_struct *vma,
						unsigned long addr,
						unsigned long pfn, pgprot_t prot)
{
#ifdef GDRDRV_HAVE_VMF_INSERT_PFN_PROT
	return vmf_insert_pfn_prot(vma, addr, pfn, prot);
#else
	int err = vm_insert_pfn_prot(vma, addr, pfn, prot);

	if (err == -ENOMEM)
		return VM_FAULT_OOM;
	if (err && err != -EBUSY)
		return VM_FAULT_SIGBUS;
	return VM_FAULT_NOPAGE;
#endif
}

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
 * The pid namespace of the procfs instance that a /proc file was opened
 * in: the one whose numbers the file shows, as /proc/locks does, whoever
 * reads it.
 */
#include <linux/fs.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>

static inline struct pid_namespace *gdrdrv_proc_pid_ns(const struct file *file)
{
#ifdef GDRDRV_HAVE_PROC_PID_NS_SB
	return proc_pid_ns(file_inode(file)->i_sb);
#else
	return proc_pid_ns(file_inode(file));
#endif
}

/*
 * The fd's owner: a reference on the opener's thread-group pid.  put_pid()
 * is GPL-only, so the proprietary flavour keeps the number, as GDRCopy
 * does (a recycled pid could then match), the initial pid namespace's.
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

/* The owner's pid in pid namespace ns; 0: not in it. */
static inline pid_t gdrdrv_owner_nr_seen(const struct gdrdrv_owner *owner,
					 struct pid_namespace *ns)
{
	return pid_nr_ns(owner->tgid, ns);
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

/*
 * The owner's pid in pid namespace ns.  pid_nr_ns() is GPL-only: the
 * number is the initial pid namespace's, so only that namespace shows it.
 */
static inline pid_t gdrdrv_owner_nr_seen(const struct gdrdrv_owner *owner,
					 struct pid_namespace *ns)
{
	return ns->level == 0 ? owner->tgid : 0;
}
#endif

#endif /* _GDRDRV_COMPAT_H */
