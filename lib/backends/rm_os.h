/* SPDX-License-Identifier: MIT */
/*
 * Everything the rm backend asks of the system, in one small table: the
 * device files and ioctls of nvidia.ko, mmap, and libcuda's export of an
 * address range.  The library uses the real one (rm_os.c); host tests
 * install a fake RM that answers as nvidia.ko's source says it does
 * (tests/unit/fake_rm.c), so that every rule of the backend runs without
 * a GPU.
 */
#ifndef GDRMAP_RM_OS_H
#define GDRMAP_RM_OS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/cuda_api.h"

/* One RM memory object behind a stretch of an exported range. */
struct rm_export_obj {
	uint32_t handle;	/* in the exporting (libcuda's) client */
	uint64_t offset;	/* where the stretch starts in the object */
	uint64_t size;		/* its length */
};

/* What libcuda told nvidia.ko when it exported [va, +len): the objects,
 * in address order, whose stretches add up to len. */
struct rm_export {
	uint32_t client;
	uint32_t count;
	uint32_t room;
	struct rm_export_obj *obj;	/* malloc'ed; rm_export_free() */
};

void rm_export_free(struct rm_export *e);
/* Append one object; ENOMEM or 0. */
int rm_export_add(struct rm_export *e, uint32_t handle, uint64_t offset,
		  uint64_t size);

struct gdr_rm_os {
	int (*open)(const char *path, int flags);
	int (*close)(int fd);
	int (*ioctl)(int fd, unsigned long req, void *arg);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
		      off_t off);
	int (*munmap)(void *addr, size_t len);
	/*
	 * Export [va, +len) (host-page aligned, inside one CUDA allocation)
	 * in scope s, and say what libcuda asked nvidia.ko for.  0, or an
	 * errno with why filled; GDR_PIN_UNMAPPABLE where CUDA refuses to
	 * export the range (not memory it exports this way).
	 */
	int (*export)(const struct gdr_cuda_scope *s, uint64_t va,
		      uint64_t len, struct rm_export *out, char *why,
		      size_t why_len);
	/* Whether export can work in this process at all; why if not. */
	int (*export_ready)(char *why, size_t why_len);
};

/* The table in use: the real one unless a test installed another. */
const struct gdr_rm_os *gdr_rm_os(void);
/* Tests: use os instead, before the first use of the rm backend. */
void gdr_rm_use_os(const struct gdr_rm_os *os);

/* The real export (rm_capture.c). */
int gdr_rm_capture_export(const struct gdr_cuda_scope *s, uint64_t va,
			  uint64_t len, struct rm_export *out, char *why,
			  size_t why_len);
int gdr_rm_capture_ready(char *why, size_t why_len);

/*
 * The mechanism under gdr_rm_capture_export, for any loaded library lib
 * (a dlopen handle): while call(ctx) runs on this thread, the export
 * ioctls that lib itself issues on this thread are recorded into out;
 * nothing else changes for any thread.  0, or an errno with why filled.
 */
int rm_capture_run(void *lib, int (*call)(void *ctx), void *ctx,
		   struct rm_export *out, char *why, size_t why_len);

#endif /* GDRMAP_RM_OS_H */
