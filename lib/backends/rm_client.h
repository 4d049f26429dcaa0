/* SPDX-License-Identifier: MIT */
/*
 * The library's own RM client (rm_client.c): one per process, on a
 * /dev/nvidiactl file of its own, with a device and a subdevice object per
 * GPU made the first time a pin needs that GPU.  Memory objects of
 * libcuda's client are duplicated into it and mapped for the CPU from
 * it.  Every call returns 0 or an errno and, on failure, writes what went
 * wrong and what to do into why.
 */
#ifndef GDRMAP_RM_CLIENT_H
#define GDRMAP_RM_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct rm_gpu;

/* The client, made once per process (again in a fork child). */
int gdr_rm_client(char *why, size_t why_len);

/* The GPU at PCI domain:bus:device, ready for dups and maps. */
int gdr_rm_gpu(uint32_t domain, uint32_t bus, uint32_t device,
	       struct rm_gpu **gpu, char *why, size_t why_len);

/* Duplicate object src of client src_client under gpu's device. */
int gdr_rm_dup(struct rm_gpu *gpu, uint32_t src_client, uint32_t src,
	       uint32_t *dup, char *why, size_t why_len);
void gdr_rm_free(struct rm_gpu *gpu, uint32_t handle);

/* The size of a memory object of the client, as RM allocated it. */
int gdr_rm_object_size(uint32_t handle, uint64_t *size);

/*
 * Map [offset, +len) of memory object handle for the CPU at at (a host-
 * page aligned address the caller reserved; replaced, MAP_FIXED).  What
 * gdr_rm_unmap needs back goes into *cookie.
 */
int gdr_rm_map(struct rm_gpu *gpu, uint32_t handle, uint64_t offset,
	       uint64_t len, void *at, uint64_t *cookie, char *why,
	       size_t why_len);
/* Tell RM that the mapping made with cookie is gone (after munmap). */
void gdr_rm_unmap(struct rm_gpu *gpu, uint32_t handle, uint64_t cookie);

/* "NV_ERR_X (0xNN)" for an RM status. */
const char *gdr_rm_status(uint32_t status, char *buf, size_t len);

#endif /* GDRMAP_RM_CLIENT_H */
