/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * nvsim: the simulated GPU of gdrmap - user <-> kernel interface of
 * /dev/nvsim.  Shared by the module (sim/nvsim) and the libcuda shim
 * (sim/libcuda).  Fixed-width types only; every struct is a multiple of
 * 8 bytes with explicit padding, so the layout is the same everywhere.
 *
 * Model:
 *   - each simulated GPU is one QEMU ivshmem-plain device; its memory is
 *     that device's BAR2, cut into 64 KiB pages.  GPUs are numbered from
 *     0 in the order nvsim found them (PCI order) and named by that
 *     "device" index in the ioctls below;
 *   - a "memory object" (mem) is a set of pages of one GPU (cuMemCreate /
 *     cuMemAlloc); an fd refers to it by a handle (u32, never 0);
 *   - a "mapping" puts a mem (or a part of it) at a device virtual address
 *     in the caller's process.  The caller reserves that address range in
 *     its own address space first (mmap PROT_NONE), so device addresses
 *     are unique process addresses, as unified addressing guarantees: one
 *     fd and one address space serve every GPU, and an address tells
 *     which GPU's memory it is.  nvidia_p2p_get_pages(va) resolves va
 *     through the mappings of the calling process (current->mm).
 *   - Every address and size given to MAP/ALLOC/CREATE is a multiple of
 *     NVSIM_PAGE_SIZE.
 *
 * Read/write of device memory: pread(2)/pwrite(2) on the fd, with
 * offset = device virtual address; the range must lie inside one mapping
 * of the calling process, otherwise -EFAULT.
 *
 * All ioctls return 0 or -1 with errno.  Reserved fields must be 0
 * (-EINVAL otherwise).  The fd is usable only from the process that
 * opened it (-EACCES otherwise, e.g. after fork).
 */
#ifndef _NVSIM_IOCTL_H
#define _NVSIM_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define NVSIM_DEVICE_PATH	"/dev/nvsim"
#define NVSIM_ABI_VERSION	2
#define NVSIM_MAX_DEVICES	16	/* simulated GPUs at most */
#define NVSIM_PAGE_SHIFT	16
#define NVSIM_PAGE_SIZE		(1ULL << NVSIM_PAGE_SHIFT)	/* 64 KiB */

#define NVSIM_IOC_MAGIC		0xE5

/*
 * NVSIM_IOC_INFO: one simulated GPU, and how many there are.  -ENODEV
 * when device names none.
 */
struct nvsim_info {
	__u32 device;		/* in: 0 .. device_count - 1 */
	__u32 device_count;	/* out: simulated GPUs */
	__u32 abi_version;	/* out: NVSIM_ABI_VERSION */
	__u32 page_size;	/* out: NVSIM_PAGE_SIZE */
	__u64 bar_phys;		/* out: physical address of BAR2 */
	__u64 bar_size;		/* out: bytes of device memory */
	__u64 free_bytes;	/* out: bytes not held by any mem */
	__u8 uuid[16];		/* out: the GPU UUID (same as the page tables') */
	__u32 pci_domain;	/* out */
	__u8 pci_bus;		/* out */
	__u8 pci_device;	/* out: slot */
	__u8 pci_function;	/* out */
	__u8 reserved0;
	__u64 caps;		/* out: NVSIM_CAP_* */
	__u64 reserved[2];
};

/* nvsim_info.caps: what the simulated driver offers (module parameters). */
#define NVSIM_CAP_DMABUF	(1ULL << 0)	/* EXPORT_DMABUF works (dmabuf=1) */
#define NVSIM_CAP_DMABUF_MMAP	(1ULL << 1)	/* and its fds can be mmap'ed */

/*
 * NVSIM_IOC_MEM_CREATE: new memory object of size bytes on GPU device
 * (cuMemCreate).  Returns a handle holding one reference.  user_flags is
 * opaque to the kernel: stored and returned by QUERY/MEM_RETAIN (the shim
 * keeps the allocation properties there).  -ENOMEM when that GPU's BAR is
 * full, -ENODEV for an unknown device.
 */
struct nvsim_mem_create {
	__u64 size;		/* in: multiple of NVSIM_PAGE_SIZE, > 0 */
	__u32 user_flags;	/* in */
	__u32 handle;		/* out */
	__u32 device;		/* in */
	__u32 reserved;
};

/*
 * NVSIM_IOC_MEM_RELEASE: drop one reference of a handle (cuMemRelease).
 * The memory lives on while mapped or persistently pinned.
 */
struct nvsim_mem_release {
	__u32 handle;		/* in */
	__u32 reserved;
};

/*
 * NVSIM_IOC_MEM_RETAIN: the handle of the mem mapped at va, with one more
 * reference (cuMemRetainAllocationHandle).  The same handle value is
 * returned while the fd holds a reference on that mem.  -ENOENT when va
 * is not mapped.
 */
struct nvsim_mem_retain {
	__u64 va;		/* in: any address inside a mapping */
	__u32 handle;		/* out */
	__u32 user_flags;	/* out */
	__u64 size;		/* out: size of the whole mem */
};

/*
 * NVSIM_IOC_MEM_INFO: size, user_flags and GPU of a handle's mem
 * (cuMemGetAllocationPropertiesFromHandle).  -ENOENT: unknown handle.
 */
struct nvsim_mem_info {
	__u32 handle;		/* in */
	__u32 user_flags;	/* out */
	__u64 size;		/* out */
	__u32 device;		/* out */
	__u32 reserved;
};

/*
 * NVSIM_IOC_MAP: map [offset, offset + size) of the mem of handle at va
 * (cuMemMap).  -EEXIST if it overlaps another mapping of this process,
 * -EINVAL for a range outside the mem or bad alignment, -ENOENT for an
 * unknown handle.  buffer_id: unique per mapping over the module's life.
 */
struct nvsim_map {
	__u64 va;		/* in */
	__u64 size;		/* in */
	__u64 offset;		/* in */
	__u32 handle;		/* in */
	__u32 reserved;
	__u64 buffer_id;	/* out */
};

/*
 * NVSIM_IOC_UNMAP: remove every mapping inside [va, va + size) (cuMemUnmap,
 * cuMemFree).  Each mapping must lie wholly inside the range (-EINVAL
 * otherwise, and nothing is changed); -ENOENT if there is none.  The free
 * callbacks of non-persistent pins on the removed mappings run, from this
 * task, before the ioctl returns; persistent pins keep their pages.
 */
struct nvsim_unmap {
	__u64 va;		/* in */
	__u64 size;		/* in */
};

/*
 * NVSIM_IOC_ALLOC: MEM_CREATE + MAP + MEM_RELEASE in one call
 * (cuMemAlloc): the mapping at va is then the only holder of the memory,
 * so UNMAP (or closing the fd) frees it.
 */
struct nvsim_alloc {
	__u64 va;		/* in */
	__u64 size;		/* in */
	__u32 user_flags;	/* in */
	__u32 device;		/* in: the GPU */
	__u64 buffer_id;	/* out */
};

/*
 * NVSIM_IOC_QUERY: the mapping that contains va (cuMemGetAddressRange,
 * cuPointerGetAttribute).  -ENOENT when va is not mapped in this process.
 */
struct nvsim_query {
	__u64 va;		/* in */
	__u64 base;		/* out: start of the mapping */
	__u64 size;		/* out: size of the mapping */
	__u64 offset;		/* out: offset of the mapping in its mem */
	__u64 mem_size;		/* out */
	__u64 buffer_id;	/* out */
	__u64 p2p_token;	/* out: for nvidia_p2p_get_pages (never 0) */
	__u32 va_space;		/* out: for nvidia_p2p_get_pages (never 0) */
	__u32 user_flags;	/* out */
	__u32 device;		/* out: the GPU whose memory it is */
	__u32 reserved0;
	__u64 reserved;
};

/*
 * NVSIM_IOC_MEMSET: fill count elements of elem_size (1, 2 or 4) bytes at
 * va with value (cuMemsetD8/16/32).  va must be elem_size aligned.
 */
struct nvsim_memset {
	__u64 va;		/* in */
	__u64 count;		/* in: elements */
	__u32 value;		/* in */
	__u32 elem_size;	/* in */
};

/*
 * NVSIM_IOC_COPY: device to device copy (cuMemcpy, cuMemcpyDtoD); each
 * range inside one mapping (the two may be on different GPUs, as a peer
 * copy); overlapping ranges behave as memmove.
 */
struct nvsim_copy {
	__u64 dst;		/* in */
	__u64 src;		/* in */
	__u64 size;		/* in */
};

/*
 * NVSIM_IOC_EXPORT_DMABUF: a dma-buf of [va, va + size) of one mapping of
 * this process (cuMemGetHandleForAddressRange).  va and size are multiples
 * of the host page size.  The dma-buf holds the memory (like a persistent
 * pin) until its last fd and mapping go; mmap of it maps the BAR pages
 * write-combined (MAP_SHARED only).  -EOPNOTSUPP unless nvsim was loaded
 * with dmabuf=1; with dmabuf_mmap=0 mmap fails with ENOTSUPP (524), as
 * NVIDIA drivers before 580 do.
 */
struct nvsim_export_dmabuf {
	__u64 va;		/* in */
	__u64 size;		/* in */
	__u32 flags;		/* in: 0 */
	__s32 fd;		/* out: O_RDWR | O_CLOEXEC */
};

/*
 * NVSIM_IOC_REGISTER_PID: lets process pid (in the caller's pid namespace)
 * use this fd's address space as its own for nvidia_p2p_*: its get_pages
 * and put_pages with token 0 find this fd's memory and pins, as RM's
 * NV503C_CTRL_CMD_REGISTER_PID does for an MPS client.  The process must
 * have /dev/nvsim open (its "RM client"): the registration ends when that
 * fd is released.  -ESRCH: no such process has /dev/nvsim open; -ENOSPC:
 * too many registered.  Registering again is not an error.
 */
struct nvsim_register_pid {
	__s32 pid;		/* in */
	__u32 reserved;
};

#define NVSIM_IOC_INFO		_IOWR(NVSIM_IOC_MAGIC, 1, struct nvsim_info)
#define NVSIM_IOC_MEM_CREATE	_IOWR(NVSIM_IOC_MAGIC, 2, struct nvsim_mem_create)
#define NVSIM_IOC_MEM_RELEASE	_IOW(NVSIM_IOC_MAGIC, 3, struct nvsim_mem_release)
#define NVSIM_IOC_MEM_RETAIN	_IOWR(NVSIM_IOC_MAGIC, 4, struct nvsim_mem_retain)
#define NVSIM_IOC_MAP		_IOWR(NVSIM_IOC_MAGIC, 5, struct nvsim_map)
#define NVSIM_IOC_UNMAP		_IOW(NVSIM_IOC_MAGIC, 6, struct nvsim_unmap)
#define NVSIM_IOC_ALLOC		_IOWR(NVSIM_IOC_MAGIC, 7, struct nvsim_alloc)
#define NVSIM_IOC_QUERY		_IOWR(NVSIM_IOC_MAGIC, 8, struct nvsim_query)
#define NVSIM_IOC_MEMSET	_IOW(NVSIM_IOC_MAGIC, 9, struct nvsim_memset)
#define NVSIM_IOC_COPY		_IOW(NVSIM_IOC_MAGIC, 10, struct nvsim_copy)
#define NVSIM_IOC_MEM_INFO	_IOWR(NVSIM_IOC_MAGIC, 11, struct nvsim_mem_info)
#define NVSIM_IOC_EXPORT_DMABUF	_IOWR(NVSIM_IOC_MAGIC, 12, struct nvsim_export_dmabuf)
#define NVSIM_IOC_REGISTER_PID	_IOW(NVSIM_IOC_MAGIC, 13, struct nvsim_register_pid)

#endif /* _NVSIM_IOCTL_H */
