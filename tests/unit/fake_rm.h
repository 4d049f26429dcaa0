/* SPDX-License-Identifier: MIT */
/*
 * A fake nvidia.ko resource manager (RM) for the host tests of the rm
 * backend, served through the library's one table of system calls
 * (struct gdr_rm_os, lib/backends/rm_os.h): a test calls fake_rm_install() and
 * the library's /dev/nvidia* files, ioctls, mmaps and libcuda exports
 * all reach this fake instead of the system.
 *
 * It answers at the ioctl level, as nvidia.ko does: it decodes the real
 * argument structs of lib/backends/rm_abi.h, takes each argument's size from
 * the request number and refuses one of another size, refuses a control-file
 * escape on a GPU's file and the reverse, and follows RM's rules for
 * clients, objects, duplication and CPU mappings.  Each rule names the
 * function of NVIDIA's open-gpu-kernel-modules (580.142) that it models,
 * in fake_rm.c; where the driver's behaviour was unclear the fake takes
 * the harsher reading, and says so.
 *
 * Its memory is fake_cuda's: an RM memory object is a fake_cuda
 * allocation's memfd (libcuda's objects are fake_cuda's physical
 * allocations, fake_cuda.h), a duplicate holds its own reference to it,
 * and a mapping is an mmap of that memfd at the address the library
 * passes, so that what the library maps and what the test reads as the
 * GPU's view are the same bytes.
 *
 * Its GPUs are fake_cuda's three, listed by NV_ESC_CARD_INFO in another
 * order than CUDA's, with /dev/nvidiaN minor numbers and RM device
 * instances that differ from the CUDA ordinals and from each other: a
 * library that mixed them up would map through the wrong file.
 */
#ifndef GDRMAP_TEST_FAKE_RM_H
#define GDRMAP_TEST_FAKE_RM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fake_cuda.h"
#include "backends/rm_abi.h"
#include "backends/rm_os.h"

/* The driver version the fake answers unless fake_rm_version is set. */
#define FAKE_RM_VERSION		"580.142"

/* The table the library is given by fake_rm_install(). */
extern const struct gdr_rm_os fake_rm_os;

/* Hand fake_cuda (fake_syms) and this fake RM to the library: before the
 * first gdr_open. */
void fake_rm_install(void);

/*
 * Knobs that break things, each read at the call it breaks (0 or NULL:
 * as nvidia.ko and libcuda normally answer).
 */
/* NV_ESC_CHECK_VERSION_STR's answer. */
extern const char *fake_rm_version;
/* open("/dev/nvidiactl") fails with this errno (ENOENT: no driver or a
 * container without the device files; EACCES: not allowed). */
extern int fake_rm_ctl_errno;
/* open("/dev/nvidiaN") of a GPU fails with this errno. */
extern int fake_rm_dev_errno;
/* NV_ESC_RM_DUP_OBJECT answers this status (NV_ERR_INSUFFICIENT_
 * PERMISSIONS: memory of a MIG instance the client cannot join). */
extern uint32_t fake_rm_dup_status;
/* NV_ESC_RM_MAP_MEMORY answers this status (NV_ERR_NOT_SUPPORTED: video
 * memory under confidential computing). */
extern uint32_t fake_rm_map_status;
/* ... after this many more maps have succeeded. */
extern int fake_rm_map_skip;
/* NV0041_CTRL_CMD_GET_SURFACE_INFO answers this status. */
extern uint32_t fake_rm_size_status;
/* The size of the export argument libcuda passes (a libcuda and driver
 * of another layout); 0: sizeof(struct nv_export_dmabuf). */
extern size_t fake_rm_export_size;
/* export_ready says libcuda cannot be watched. */
extern int fake_rm_export_unready;
/* Called after each successful export, outside the fake's lock, in the
 * library's CUDA scope (a test frees the memory here). */
extern void (*fake_rm_after_export)(CUdeviceptr va, uint64_t len);

/* What the fake holds now for this process (a fork child's copy of the
 * fake also holds its parent's), and what it saw. */
struct fake_rm_stats {
	int clients;		/* the library's RM clients alive */
	int devices;		/* their NV01_DEVICE_0 objects */
	int subdevices;		/* their NV20_SUBDEVICE_0 objects */
	int dups;		/* memory objects duplicated into them */
	int rm_maps;		/* CPU mappings RM has on record */
	size_t cpu_bytes;	/* mapped through the table, not unmapped */
	int files;		/* files open through the table */
	int exports;		/* successful exports, ever */
	int dups_made;		/* successful dups, ever */
	int maps_made;		/* successful RM_MAP_MEMORY, ever */
	/* Requests nvidia.ko refuses with an errno before RM sees them (an
	 * argument of the wrong size, a control-file escape on a GPU's file,
	 * a bad registration, mmap of a file with no mapping): the library
	 * sends none. */
	int refused;
	/* Calls naming a client another process made. */
	int foreign;
};
void fake_rm_stats(struct fake_rm_stats *st);
/* Why the last request was refused (fake_rm_stats' refused), or "". */
const char *fake_rm_last_refusal(void);

/* The library's live clients: up to max handles and the processes that
 * made them; how many there are. */
int fake_rm_clients(uint32_t *handle, pid_t *pid, int max);
/* libcuda's RM client in this process, as its exports name it. */
uint32_t fake_rm_cuda_client(void);
/* The /dev/nvidiaN minor number of CUDA device dev. */
unsigned int fake_rm_minor(int dev);

#endif /* GDRMAP_TEST_FAKE_RM_H */
