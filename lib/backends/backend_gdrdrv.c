// SPDX-License-Identifier: MIT
/*
 * The gdrdrv backend: ioctls and mmap on /dev/gdrdrv, in GDRCopy 2.x's
 * kernel ABI (include/uapi/gdrdrv_ioctl.h), so that it works with gdrmap's
 * module and with NVIDIA's gdrdrv 2.0 to 2.6.  Newer ioctls are used only
 * when the module's version has them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/internal.h"
#include "base/log.h"
#include "uapi/gdrdrv_ioctl.h"

struct gdrdrv {
	int fd;
	uint32_t version;	/* the module's (major << 16) | minor */
};

static struct gdrdrv *drv(struct gdr *g)
{
	return g->bpriv;
}

static int has(struct gdr *g, uint32_t since)
{
	return drv(g)->version >= since;
}

/* ioctl, returning 0 or a positive errno. */
static int drv_ioctl(struct gdr *g, unsigned long cmd, void *arg)
{
	return ioctl(drv(g)->fd, cmd, arg) ? errno : 0;
}

static int gdrdrv_listed_in_proc(void)
{
	FILE *f = fopen("/proc/devices", "r");
	char line[128];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " gdrdrv\n") != NULL;
	fclose(f);
	return found;
}

static void explain_open_failure(int err, char *why, size_t len)
{
	struct stat st;

	switch (err) {
	case ENOENT:
		if (gdrdrv_listed_in_proc())
			snprintf(why, len,
				 "gdrdrv is loaded but " GDRDRV_DEVICE_PATH " is missing: create it (gdrmap's module makes it through udev/devtmpfs; with NVIDIA's, mknod " GDRDRV_DEVICE_PATH " c <major from /proc/devices> 0)");
		else
			snprintf(why, len,
				 GDRDRV_DEVICE_PATH " does not exist: the gdrdrv kernel module is not loaded (modprobe gdrdrv)");
		break;
	case EACCES:
	case EPERM:
		if (!stat(GDRDRV_DEVICE_PATH, &st))
			snprintf(why, len,
				 "no permission to open " GDRDRV_DEVICE_PATH " (mode %03o, uid %u, gid %u): add this user to the device's group, or set the module's mode/group (udev rule)",
				 st.st_mode & 0777, st.st_uid, st.st_gid);
		else
			snprintf(why, len, "no permission to open " GDRDRV_DEVICE_PATH);
		break;
	case ENXIO:
	case ENODEV:
		snprintf(why, len,
			 GDRDRV_DEVICE_PATH " exists but no driver answers on it: load gdrdrv (modprobe gdrdrv), or remove the stale node");
		break;
	default:
		snprintf(why, len, "cannot open " GDRDRV_DEVICE_PATH ": %s",
			 strerror(err));
	}
}

static int gdrdrv_open(struct gdr *g, char *why, size_t why_len)
{
	struct gdrdrv_get_version_params ver = { 0 };
	struct gdrdrv *d;
	int err;

	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(why, why_len, "out of memory");
		return ENOMEM;
	}
	d->fd = open(GDRDRV_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (d->fd < 0) {
		err = errno;
		explain_open_failure(err, why, why_len);
		free(d);
		return err;
	}
	g->bpriv = d;
	err = drv_ioctl(g, GDRDRV_IOC_GET_VERSION, &ver);
	if (err) {
		snprintf(why, why_len,
			 GDRDRV_DEVICE_PATH " does not answer GET_VERSION (%s): is it really gdrdrv?",
			 strerror(err));
		goto fail;
	}
	if (ver.gdrdrv_version < MINIMUM_GDRDRV_VERSION ||
	    ver.minimum_gdr_api_version > GDR_API_VERSION) {
		snprintf(why, why_len,
			 "gdrdrv %u.%u is not compatible with this library (API %d.%d; the module needs API %u.%u or newer): install matching versions",
			 ver.gdrdrv_version >> 16, ver.gdrdrv_version & 0xffff,
			 GDR_API_MAJOR_VERSION, GDR_API_MINOR_VERSION,
			 ver.minimum_gdr_api_version >> 16,
			 ver.minimum_gdr_api_version & 0xffff);
		err = EPROTO;
		goto fail;
	}
	d->version = ver.gdrdrv_version;
	return 0;

fail:
	close(d->fd);
	free(d);
	g->bpriv = NULL;
	return err;
}

static void gdrdrv_close(struct gdr *g)
{
	close(drv(g)->fd);
	free(drv(g));
	g->bpriv = NULL;
}

static void explain_pin_failure(struct gdr *g, struct gdr_region *r, int err)
{
	switch (err) {
	case ENOTSUPP_KERNEL:
		gdr_err("gdrdrv: the NVIDIA driver cannot pin [0x%llx, +%llu)%s (errno 524, ENOTSUPP)",
			(unsigned long long)r->pin_addr,
			(unsigned long long)r->pin_size,
			r->pin_flags & GDR_PIN_FLAG_FORCE_PCIE ?
			" with GDR_PIN_FLAG_FORCE_PCIE: that flag works only on coherent platforms; pin without it" :
			": the memory type is not supported for GPUDirect RDMA");
		break;
	case ENOMEM:
		gdr_err("gdrdrv: out of BAR1 space or handles pinning %llu bytes: unpin unused buffers",
			(unsigned long long)r->pin_size);
		break;
	default:
		gdr_err("gdrdrv: pinning [0x%llx, +%llu) failed: %s (is it memory from cuMemAlloc or cuMemCreate, still allocated, in this process?)",
			(unsigned long long)r->pin_addr,
			(unsigned long long)r->pin_size, strerror(err));
	}
	(void)g;
}

static int gdrdrv_pin(struct gdr *g, struct gdr_region *r, uint64_t p2p_token,
		      uint32_t va_space)
{
	int err;

	if (has(g, GDRDRV_VERSION_WITH_PIN_BUFFER_V2)) {
		struct gdrdrv_pin_buffer_v2_params p = {
			.addr = r->pin_addr,
			.size = r->pin_size,
			.flags = r->pin_flags,
		};

		/* 2.5+ modules pin persistently and refuse the deprecated
		 * tokens, so they are not passed on. */
		if (p2p_token || va_space)
			gdr_dbg("p2p_token and va_space are ignored with gdrdrv 2.5+");
		err = drv_ioctl(g, GDRDRV_IOC_PIN_BUFFER_V2, &p);
		r->bhandle = p.handle;
	} else {
		struct gdrdrv_pin_buffer_params p = {
			.addr = r->pin_addr,
			.size = r->pin_size,
			.p2p_token = p2p_token,
			.va_space = va_space,
		};

		if (r->pin_flags) {
			gdr_err("GDR_PIN_FLAG_FORCE_PCIE needs gdrdrv 2.5 or newer; this one is %u.%u",
				drv(g)->version >> 16, drv(g)->version & 0xffff);
			return EINVAL;
		}
		err = drv_ioctl(g, GDRDRV_IOC_PIN_BUFFER, &p);
		r->bhandle = p.handle;
	}
	if (err)
		explain_pin_failure(g, r, err);
	return err;
}

static int gdrdrv_unpin(struct gdr *g, struct gdr_region *r)
{
	struct gdrdrv_unpin_buffer_params p = { .handle = r->bhandle };
	int err = drv_ioctl(g, GDRDRV_IOC_UNPIN_BUFFER, &p);

	if (err)
		gdr_err("gdrdrv refused to unpin handle %llu: %s",
			(unsigned long long)r->bhandle, strerror(err));
	return err;
}

static int gdrdrv_get_callback_flag(struct gdr *g, struct gdr_region *r,
				    int *flag)
{
	struct gdrdrv_get_cb_flag_params p = { .handle = r->bhandle };
	int err = drv_ioctl(g, GDRDRV_IOC_GET_CB_FLAG, &p);

	if (err)
		gdr_err("GET_CB_FLAG failed: %s", strerror(err));
	else
		*flag = p.flag;
	return err;
}

/* The fields GET_INFO and GET_INFO_V2 share. */
static void fill_info(struct gdr_pin_info *info, uint64_t va,
		      uint64_t mapped_size, uint32_t page_size,
		      uint64_t tm_cycles, uint32_t tsc_khz)
{
	info->va = va;
	info->mapped_size = mapped_size;
	info->page_size = page_size;
	info->tm_cycles = tm_cycles;
	info->cycles_per_ms = tsc_khz;
}

static int gdrdrv_get_info_v1(struct gdr *g, struct gdr_region *r,
			      struct gdr_pin_info *info)
{
	struct gdrdrv_get_info_params p = { .handle = r->bhandle };
	int err = drv_ioctl(g, GDRDRV_IOC_GET_INFO, &p);

	if (err) {
		gdr_err("GET_INFO failed: %s", strerror(err));
		return err;
	}
	fill_info(info, p.va, p.mapped_size, p.page_size, p.tm_cycles,
		  p.tsc_khz);
	/* Before 2.4 a mapping was either WC or cached. */
	info->mapping_type = !p.mapped ? GDR_MAPPING_TYPE_NONE :
			     p.wc_mapping ? GDR_MAPPING_TYPE_WC :
			     GDR_MAPPING_TYPE_CACHING;
	return 0;
}

static int gdrdrv_get_info(struct gdr *g, struct gdr_region *r,
			   struct gdr_pin_info *info)
{
	struct gdrdrv_get_info_v2_params p = { .handle = r->bhandle };
	int err;

	if (!has(g, GDRDRV_VERSION_WITH_GET_INFO_V2))
		return gdrdrv_get_info_v1(g, r, info);
	err = drv_ioctl(g, GDRDRV_IOC_GET_INFO_V2, &p);
	if (err) {
		gdr_err("GET_INFO_V2 failed: %s", strerror(err));
		return err;
	}
	fill_info(info, p.va, p.mapped_size, p.page_size, p.tm_cycles,
		  p.tsc_khz);
	info->mapping_type = p.mapping_type < GDR_MAPPING_TYPE_MAX ?
			     (gdr_mapping_type_t)p.mapping_type :
			     GDR_MAPPING_TYPE_NONE;
	return 0;
}

static int gdrdrv_map(struct gdr *g, struct gdr_region *r, size_t len,
		      gdr_mapping_type_t want, void **va,
		      gdr_mapping_type_t *got)
{
	struct gdr_pin_info info = { 0 };
	void *p;
	int err;

	if (r->bhandle > ((uint64_t)INT64_MAX >> g->host_page_shift)) {
		gdr_err("gdrdrv handle %llu cannot be expressed as an mmap offset",
			(unsigned long long)r->bhandle);
		return EINVAL;
	}
	if (has(g, GDRDRV_VERSION_WITH_REQ_MAPPING_TYPE)) {
		struct gdrdrv_req_mapping_type_params req = {
			.handle = r->bhandle,
			.mapping_type = want,
		};

		err = drv_ioctl(g, GDRDRV_IOC_REQ_MAPPING_TYPE, &req);
		if (err) {
			gdr_err("gdrdrv cannot give a %s mapping on this platform (%s): map with GDR_MAP_FLAG_DEFAULT",
				gdr_mapping_type_name(want), strerror(err));
			return err;
		}
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, drv(g)->fd,
		 (off_t)(r->bhandle << g->host_page_shift));
	if (p == MAP_FAILED) {
		int flag = 0;

		err = errno;
		gdrdrv_get_callback_flag(g, r, &flag);
		if (flag)
			gdr_err("cannot map: the GPU memory under this pin was freed (invalidated); unpin it");
		else
			gdr_err("mmap of %zu bytes of gdrdrv handle %llu failed: %s",
				len, (unsigned long long)r->bhandle,
				strerror(err));
		return err;
	}
	err = gdrdrv_get_info(g, r, &info);
	if (err) {
		munmap(p, len);
		return err;
	}
	*va = p;
	*got = info.mapping_type;
	return 0;
}

static int gdrdrv_unmap(struct gdr *g, struct gdr_region *r, void *va,
			size_t len)
{
	(void)g, (void)r;
	if (munmap(va, len)) {
		gdr_err("munmap(%p, %zu) failed: %s", va, len, strerror(errno));
		return errno;
	}
	return 0;
}

static int gdrdrv_driver_version(struct gdr *g, int *major, int *minor)
{
	struct gdrdrv_get_version_params p = { 0 };
	int err = drv_ioctl(g, GDRDRV_IOC_GET_VERSION, &p);

	if (err) {
		gdr_err("GET_VERSION failed: %s", strerror(err));
		return err;
	}
	*major = p.gdrdrv_version >> GDRDRV_VERSION_SHIFT;
	*minor = p.gdrdrv_version & 0xffff;
	return 0;
}

static int gdrdrv_get_attribute(struct gdr *g, gdr_attr_t attr, int *v)
{
	struct gdrdrv_get_attr_params p = { .attr = attr };
	int err;

	if (attr == GDR_ATTR_USING_DMA_BUF_MMAP ||
	    !has(g, GDRDRV_VERSION_WITH_GET_ATTR))
		return 0;
	err = drv_ioctl(g, GDRDRV_IOC_GET_ATTR, &p);
	if (err) {
		gdr_err("GET_ATTR %d failed: %s", (int)attr, strerror(err));
		return err;
	}
	*v = (int)p.val;
	return 0;
}

const struct gdr_backend gdr_backend_gdrdrv = {
	.name = "gdrdrv",
	.id = GDRMAP_BACKEND_GDRDRV,
	.open = gdrdrv_open,
	.close = gdrdrv_close,
	.pin = gdrdrv_pin,
	.unpin = gdrdrv_unpin,
	.get_callback_flag = gdrdrv_get_callback_flag,
	.get_info = gdrdrv_get_info,
	.get_info_v1 = gdrdrv_get_info_v1,
	.map = gdrdrv_map,
	.unmap = gdrdrv_unmap,
	.driver_version = gdrdrv_driver_version,
	.get_attribute = gdrdrv_get_attribute,
};
