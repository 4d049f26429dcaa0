// SPDX-License-Identifier: MIT
/*
 * Defaults for the slots a backend leaves empty, so that the core never
 * tests a slot for NULL (the rdma-core habit).  A default either derives
 * its answer from the backend's other slots or refuses clearly.
 */
#include <errno.h>
#include <stdio.h>

#include "base/internal.h"
#include "base/log.h"

static int refuse(struct gdr *g, const char *what)
{
	gdr_err("%s is not supported by the %s backend", what, g->ops.name);
	return EOPNOTSUPP;
}

static int default_open(struct gdr *g, char *why, size_t why_len)
{
	snprintf(why, why_len, "the %s backend is not available in this build",
		 g->ops.name);
	return ENOTSUP;
}

static void default_close(struct gdr *g)
{
	(void)g;
}

static int default_pin(struct gdr *g, struct gdr_region *r,
		       uint64_t p2p_token, uint32_t va_space)
{
	(void)r, (void)p2p_token, (void)va_space;
	return refuse(g, "pinning");
}

static int default_unpin(struct gdr *g, struct gdr_region *r)
{
	(void)r;
	return refuse(g, "unpinning");
}

/* Without invalidation callbacks, the flag is never raised. */
static int default_get_callback_flag(struct gdr *g, struct gdr_region *r,
				     int *flag)
{
	(void)g, (void)r;
	*flag = 0;
	return 0;
}

/* The pinned window as the core widened it, and the mapping it made. */
static int default_get_info(struct gdr *g, struct gdr_region *r,
			    struct gdr_pin_info *info)
{
	(void)g;
	info->va = r->pin_addr;
	info->mapped_size = r->pin_size;
	info->page_size = GPU_PAGE_SIZE;
	info->mapping_type = r->map_type;
	return 0;
}

int gdr_get_info_host_pages(struct gdr *g, struct gdr_region *r,
			     struct gdr_pin_info *info)
{
	info->va = r->pin_addr;
	info->mapped_size = r->pin_size;
	info->page_size = (uint32_t)g->host_page_size;
	info->mapping_type = r->map_type;
	return 0;
}

static int default_get_info_v1(struct gdr *g, struct gdr_region *r,
			       struct gdr_pin_info *info)
{
	return g->ops.get_info(g, r, info);
}

static int default_map(struct gdr *g, struct gdr_region *r, size_t len,
		       gdr_mapping_type_t want, void **va,
		       gdr_mapping_type_t *got)
{
	(void)r, (void)len, (void)want, (void)va, (void)got;
	return refuse(g, "mapping");
}

static int default_unmap(struct gdr *g, struct gdr_region *r, void *va,
			 size_t len)
{
	(void)r, (void)va, (void)len;
	return refuse(g, "unmapping");
}

/* A backend without a kernel module reports the API version it gives,
 * so that callers checking for "driver >= 2.5" (NCCL) accept it. */
static int default_driver_version(struct gdr *g, int *major, int *minor)
{
	(void)g;
	*major = GDR_API_MAJOR_VERSION;
	*minor = GDR_API_MINOR_VERSION;
	return 0;
}

static int default_get_attribute(struct gdr *g, gdr_attr_t attr, int *v)
{
	(void)g, (void)attr, (void)v;
	return 0;
}

void gdr_backend_complete(struct gdr_backend *dst,
			  const struct gdr_backend *src)
{
	*dst = *src;
#define FILL(slot) do { if (!dst->slot) dst->slot = default_##slot; } while (0)
	FILL(open);
	FILL(close);
	FILL(pin);
	FILL(unpin);
	FILL(get_callback_flag);
	FILL(get_info);
	FILL(get_info_v1);
	FILL(map);
	FILL(unmap);
	FILL(driver_version);
	FILL(get_attribute);
#undef FILL
}
