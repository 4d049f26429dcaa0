/* SPDX-License-Identifier: MIT */
/*
 * The copy paths of gdrmap_copy_* (gdrapi.h) as the measuring commands
 * use them: one call by a named path, the path the library takes now for
 * a size, letting its choice settle before it is timed, and checking
 * what each path moved, byte by byte, against cuMemcpy.
 */
#ifndef GDRMAP_TOOLS_PATHS_H
#define GDRMAP_TOOLS_PATHS_H

#include <stdbool.h>
#include <stddef.h>

#include "session.h"

/* Weak like session.h's: GDRCopy's libgdrapi.so.2 has none of them. */
#pragma weak gdrmap_copy_to_mapping
#pragma weak gdrmap_copy_from_mapping
#pragma weak gdrmap_copy_to_mapping_via
#pragma weak gdrmap_copy_from_mapping_via
#pragma weak gdrmap_copy_path
#pragma weak gdrmap_copy_path_host

/* GDRMAP_COPY_PATH_* are 0 (auto) to 4 (staged). */
#define NPATHS		5
/* Not a path: what gdrmap_copy_path could not say, or was not asked. */
#define PATH_UNKNOWN	(-1)
/* path_copy / path_verify: the path cannot serve this handle. */
#define PATH_NA		(-2)

/* "auto", "mapping", "threads", "dma", "staged"; "-" for anything
 * else. */
const char *path_name(int path);
/* What gdrmap_copy_path said: "measuring" for AUTO, "-" when unknown. */
const char *path_chosen_name(int path);

/* The library has gdrmap_copy_* and the _via and _path calls. */
bool paths_available(void);

/*
 * One copy of n bytes by path (GDRMAP_COPY_PATH_AUTO: gdrmap_copy_*;
 * else its _via call): 0, PATH_NA (EOPNOTSUPP: nothing copied) or the
 * call's error.
 */
int path_copy(gdr_mh_t mh, bool write, int path, void *map, void *host,
	      size_t n);

/* The path gdrmap_copy_* takes now for n bytes from or to host (its
 * kind: gdrmap_copy_path_host; gdrmap_copy_path, the pageable kind's,
 * in a library without it), or PATH_UNKNOWN. */
int path_chosen(gdr_mh_t mh, bool write, const void *host, size_t n);

/*
 * Call gdrmap_copy_* on n bytes until its choice for their size and
 * host's kind is made (path_chosen no longer says AUTO), at most a
 * bounded number of calls: the copies that measure the paths are then not
 * in the timing.  0 or the call's error.
 */
int path_settle(gdr_mh_t mh, bool write, void *map, void *host, size_t n);

/*
 * The path gdrmap_copy_* has chosen for n bytes from or to host, after
 * the timed calls: the library's watch may have begun measuring the class
 * again during them, so it is settled again first (untimed copies).
 * PATH_UNKNOWN where settling failed; AUTO where it did not end.
 */
int path_settled(gdr_mh_t mh, bool write, void *map, void *host, size_t n);

/*
 * Start the library's read helpers (the threads path) with this thread
 * allowed every CPU of the session's list, then pin it back to its one
 * CPU.  The library starts them at the first threaded read, one fewer
 * than the CPUs the reading thread may use (at most 3), bound to those
 * CPUs; a thread pinned to one CPU after start lends them instead every
 * other CPU the process had, whichever NUMA node they are on.  Started
 * here they run on the list's CPUs (the GPU's local ones unless -C says
 * otherwise), as copybw's threads do.  len: bytes mapped at off.
 */
void paths_start_helpers(struct session *s, struct gpubuf *b, size_t off,
			 size_t len);

/* The bytes of host memory path_verify needs for n bytes. */
#define PATH_VERIFY_HOST(n)	(2 * 4096 + (size_t)(n) + 64)

/*
 * Move n random bytes at off by path in one direction and check every
 * byte against cuMemcpy, after poisoning the destination with bytes that
 * differ from the source at every position; the 64 bytes on each side of
 * the range must be left as they were.  The copy goes from or to host
 * (PATH_VERIFY_HOST(n) bytes of the kind the timed copies use, so that
 * the path checked is the one timed), or pageable memory of its own where
 * host is NULL.  0, PATH_NA, EXIT_WRONG (err says where) or EXIT_CANNOT.
 */
int path_verify(struct session *s, struct gpubuf *b, size_t off, size_t n,
		bool write, int path, void *host, char *err, size_t errlen);

#endif /* GDRMAP_TOOLS_PATHS_H */
