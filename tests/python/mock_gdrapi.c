// SPDX-License-Identifier: MIT
/*
 * libgdrapi-mock.so: the real library (core, handles, copy engine, error
 * messages) with gdr_open replaced by a backend whose "GPU memory" is host
 * memory, for the Python package's host tests (GDRMAP_LIBRARY points at
 * it).  A "device pointer" is a host address: pinning it pins nothing and
 * mapping it returns the 64 KiB window itself, so a test sees every byte a
 * copy through the mapping writes, and can poison what it reads.  The test
 * must own the whole window (the address rounded down and the end rounded
 * up to 64 KiB).
 *
 * It also has gdrmap's best-path copies (gdrmap_copy_*, gdrapi.h), as
 * stand-ins that count their calls and copy through the mapping, so that
 * tests see which copies the package makes; its "DMA" is that same copy.
 * Built with -DMOCK_GDRCOPY (libgdrapi-mock-gdrcopy.so) it has none of
 * them, as GDRCopy's libgdrapi.so.2, and a version script keeps the real
 * library's out of it.
 *
 * gdrmap_mock_* are this library's own test hooks; they are not part of
 * libgdrapi's API.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/internal.h"
#include "base/log.h"

enum mock_op {
	OP_OPEN, OP_PIN, OP_MAP, OP_UNMAP, OP_UNPIN, OP_CLOSE, OP_COPY, NR_OPS
};
static const char *const op_names[NR_OPS] = {
	"open", "pin", "map", "unmap", "unpin", "close", "copy",
};

/* The hooks (called from Python through ctypes). */
GDR_API int gdrmap_mock_fail(const char *op, int err, const char *why);
GDR_API void gdrmap_mock_live(int *opens, int *pins, int *maps);
GDR_API const char *gdrmap_mock_events(int clear);
GDR_API void gdrmap_mock_copies(int *to, int *from, int *via, int *last_path,
				int clear);
GDR_API void gdrmap_mock_set_path(int path);
GDR_API const void *gdrmap_mock_path_host(void);
GDR_API int gdrmap_mock_gdrmap_opens(void);

/* The next call of each operation fails with fail_err and fail_why. */
static int fail_err[NR_OPS];
static char fail_why[NR_OPS][256];
/* Live instances, pins and mappings; the order operations happened in. */
static int live[NR_OPS];
static char events[4096];

static void note(enum mock_op op)
{
	size_t n = strlen(events);

	if (n + 8 < sizeof(events))
		snprintf(events + n, sizeof(events) - n, "%s%s",
			 n ? "," : "", op_names[op]);
}

/* Fail this call if the test asked for it (the failure is consumed). */
static int injected(enum mock_op op, char *why, size_t why_len)
{
	int err = fail_err[op];

	if (!err)
		return 0;
	fail_err[op] = 0;
	if (why)
		snprintf(why, why_len, "%s", fail_why[op]);
	else
		gdr_err("%s", fail_why[op]);
	return err;
}

static int mock_open(struct gdr *g, char *why, size_t why_len)
{
	int err = injected(OP_OPEN, why, why_len);

	(void)g;
	if (!err) {
		live[OP_OPEN]++;
		note(OP_OPEN);
	}
	return err;
}

static void mock_close(struct gdr *g)
{
	(void)g;
	live[OP_OPEN]--;
	note(OP_CLOSE);
}

static int mock_pin(struct gdr *g, struct gdr_region *r, uint64_t token,
		    uint32_t va_space)
{
	int err = injected(OP_PIN, NULL, 0);

	(void)g, (void)r, (void)token, (void)va_space;
	if (!err) {
		live[OP_PIN]++;
		note(OP_PIN);
	}
	return err;
}

static int mock_unpin(struct gdr *g, struct gdr_region *r)
{
	int err = injected(OP_UNPIN, NULL, 0);

	(void)g, (void)r;
	live[OP_PIN]--;		/* gone even on failure, as the core says */
	note(OP_UNPIN);
	return err;
}

static int mock_map(struct gdr *g, struct gdr_region *r, size_t len,
		    gdr_mapping_type_t want, void **va,
		    gdr_mapping_type_t *got)
{
	int err = injected(OP_MAP, NULL, 0);

	(void)g, (void)len, (void)want;
	if (err)
		return err;
	live[OP_MAP]++;
	note(OP_MAP);
	*va = (void *)(uintptr_t)r->pin_addr;
	*got = GDR_MAPPING_TYPE_WC;
	return 0;
}

static int mock_unmap(struct gdr *g, struct gdr_region *r, void *va,
		      size_t len)
{
	int err = injected(OP_UNMAP, NULL, 0);

	(void)g, (void)r, (void)va, (void)len;
	if (err)
		return err;
	live[OP_MAP]--;
	note(OP_UNMAP);
	return 0;
}

static const struct gdr_backend mock_backend = {
	.name = "mock",
	.id = 99,
	.open = mock_open,
	.close = mock_close,
	.pin = mock_pin,
	.unpin = mock_unpin,
	.map = mock_map,
	.unmap = mock_unmap,
};

/* As the real gdr_open: NULL with errno set and the reason explained. */
GDR_API gdr_t gdr_open(void)
{
	char why[256];
	struct gdr *g;
	int err;

	g = gdr_open_backend(&mock_backend, why, sizeof(why), &err);
	if (!g) {
		gdr_err("no backend is usable here:\n  mock: %s", why);
		errno = err;
	}
	return g;
}

/*
 * gdrmap_open, which gdrmap's own programs call (gdr_open is for GDRCopy's
 * consumers): the same mock backend, the calls counted.  Built as
 * GDRCopy's library (MOCK_GDRCOPY) the version script hides it.
 */
static int gdrmap_opens;

GDR_API gdr_t gdrmap_open(void)
{
	gdrmap_opens++;
	return gdr_open();
}

GDR_API int gdrmap_mock_gdrmap_opens(void)
{
	return gdrmap_opens;
}

/* Make the next `op` ("open", "pin", "map", "unmap", "unpin") fail. */
GDR_API int gdrmap_mock_fail(const char *op, int err, const char *why)
{
	int i;

	for (i = 0; i < NR_OPS; i++) {
		if (!strcmp(op, op_names[i])) {
			fail_err[i] = err;
			snprintf(fail_why[i], sizeof(fail_why[i]), "%s", why);
			return 0;
		}
	}
	return EINVAL;
}

/* Live instances, pins and mappings. */
GDR_API void gdrmap_mock_live(int *opens, int *pins, int *maps)
{
	*opens = live[OP_OPEN];
	*pins = live[OP_PIN];
	*maps = live[OP_MAP];
}

/* "open,pin,map,unmap,unpin,...": what happened, in order; then forget. */
GDR_API const char *gdrmap_mock_events(int clear)
{
	static char copy[sizeof(events)];

	memcpy(copy, events, sizeof(copy));
	if (clear)
		events[0] = '\0';
	return copy;
}

/*
 * The best-path copies: calls counted (to, from, via; the path of the
 * last), then the plain copy, whose checks and errors they share.  The
 * next one fails if the test asked ("copy").  gdrmap_copy_path says what
 * gdrmap_mock_set_path set (GDRMAP_COPY_PATH_MAPPING at first).
 */
static int copies_to, copies_from, copies_via, last_path, mock_path = 1;

GDR_API void gdrmap_mock_copies(int *to, int *from, int *via, int *last,
				int clear)
{
	*to = copies_to;
	*from = copies_from;
	*via = copies_via;
	*last = last_path;
	if (clear)
		copies_to = copies_from = copies_via = last_path = 0;
}

GDR_API void gdrmap_mock_set_path(int path)
{
	mock_path = path;
}

/* The host pointer gdrmap_copy_path_host was last asked about. */
static const void *mock_host;

GDR_API const void *gdrmap_mock_path_host(void)
{
	return mock_host;
}

#ifndef MOCK_GDRCOPY
static int via_check(int path, int to_mapping)
{
	int err = injected(OP_COPY, NULL, 0);

	if (err)
		return err;
	if (path < GDRMAP_COPY_PATH_AUTO || path > GDRMAP_COPY_PATH_STAGED) {
		gdr_err("path %d is not a GDRMAP_COPY_PATH_*", path);
		return EINVAL;
	}
	if (path == GDRMAP_COPY_PATH_THREADS && to_mapping) {
		gdr_err("mock: the threads path only reads");
		return EOPNOTSUPP;
	}
	last_path = path == GDRMAP_COPY_PATH_AUTO ? mock_path : path;
	return 0;
}

GDR_API int gdrmap_copy_to_mapping_via(gdr_mh_t handle, void *map_d_ptr,
				       const void *h_ptr, size_t size, int path)
{
	int err = via_check(path, 1);

	copies_via++;
	return err ? err : gdr_copy_to_mapping(handle, map_d_ptr, h_ptr, size);
}

GDR_API int gdrmap_copy_from_mapping_via(gdr_mh_t handle, void *h_ptr,
					 const void *map_d_ptr, size_t size,
					 int path)
{
	int err = via_check(path, 0);

	copies_via++;
	return err ? err : gdr_copy_from_mapping(handle, h_ptr, map_d_ptr,
						 size);
}

GDR_API int gdrmap_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr,
				   const void *h_ptr, size_t size)
{
	int err = via_check(GDRMAP_COPY_PATH_AUTO, 1);

	copies_to++;
	return err ? err : gdr_copy_to_mapping(handle, map_d_ptr, h_ptr, size);
}

GDR_API int gdrmap_copy_from_mapping(gdr_mh_t handle, void *h_ptr,
				     const void *map_d_ptr, size_t size)
{
	int err = via_check(GDRMAP_COPY_PATH_AUTO, 0);

	copies_from++;
	return err ? err : gdr_copy_from_mapping(handle, h_ptr, map_d_ptr,
						 size);
}

GDR_API int gdrmap_copy_path(gdr_mh_t handle, int to_mapping, size_t size,
			     int *path)
{
	uint64_t state;
	int err = injected(OP_COPY, NULL, 0);

	(void)to_mapping, (void)size;
	if (err)
		return err;
	if (!gdr_region_peek(handle, &state) || !(state & REGION_MAPPED)) {
		gdr_err("handle 0x%lx is not mapped", handle.h);
		return EINVAL;
	}
	*path = mock_path;
	return 0;
}

/* gdrmap_copy_path_host: gdrmap_copy_path's answer, the host pointer
 * kept for gdrmap_mock_path_host. */
GDR_API int gdrmap_copy_path_host(gdr_mh_t handle, int to_mapping,
				  const void *h_ptr, size_t size, int *path)
{
	mock_host = h_ptr;
	return gdrmap_copy_path(handle, to_mapping, size, path);
}
#endif
