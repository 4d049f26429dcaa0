// SPDX-License-Identifier: MIT
/*
 * doctor's backend probe: each backend forced in turn through the public
 * API, with the library's own explanation (gdrmap_last_error()), and a
 * short self-test of every backend that opens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools_cuda.h"
#include "doctor.h"
#include "session.h"
#include "stats.h"

/*
 * Why gdr_open refused, in the library's words (gdrmap_last_error(); a
 * libgdrapi without it gives only errno): the text after "not usable: ",
 * which is where gdr_open names the backend it was forced to.
 */
static void library_reason(struct backend_probe *b, int err)
{
	const char *last = gdrmap_last_error ? gdrmap_last_error() : "";
	const char *p = strstr(last, "not usable: ");

	if (p)
		snprintf(b->why, sizeof(b->why), "%s", p + strlen("not usable: "));
	else
		snprintf(b->why, sizeof(b->why), "gdr_open failed: %s",
			 strerror(err ? err : ENODEV));
}

static void advise_gdrdrv(struct backend_probe *b)
{
	if (!module_loaded("gdrdrv"))
		snprintf(b->fix, sizeof(b->fix),
			 "load the module: sudo modprobe gdrdrv (gdrmap's or NVIDIA's); where only signed modules load, use a module-free backend");
	else if (access("/dev/gdrdrv", F_OK))
		snprintf(b->fix, sizeof(b->fix),
			 "gdrdrv is loaded but /dev/gdrdrv is missing: reload the module, or mknod it with the major number from /proc/devices");
	else if (access("/dev/gdrdrv", R_OK | W_OK))
		snprintf(b->fix, sizeof(b->fix),
			 "no permission on /dev/gdrdrv: join its group (ls -l /dev/gdrdrv) or install gdrmap's udev rule");
}

static void advise_dmabuf(struct backend_probe *b, const struct tcu *cu,
			  int dev)
{
	int attr = 0;

	if (!cu) {
		snprintf(b->fix, sizeof(b->fix),
			 "needs CUDA, a GPU and a driver that lets the CPU mmap dma-bufs (GDRCopy 2.6 expects that of CUDA 13.3 drivers; none seen yet)");
		return;
	}
	cu->DeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED,
			       dev);
	if (!attr)
		snprintf(b->fix, sizeof(b->fix),
			 "the driver exports no dma-buf for this GPU (NVIDIA's open kernel modules do): use gdrdrv or rm");
	else if (cu->driver_version < 13030)
		snprintf(b->fix, sizeof(b->fix),
			 "this driver (CUDA %d.%d) refuses CPU mmap of dma-bufs; GDRCopy 2.6 expects CUDA 13.3 drivers to allow it (none seen yet): use gdrdrv or rm",
			 cu->driver_version / 1000, cu->driver_version % 1000 / 10);
}

static void advise_rm(struct backend_probe *b, const struct tcu *cu, int dev)
{
	int attr = 1;

	if (cu)
		cu->DeviceGetAttribute(&attr,
				       CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev);
	if (!attr)
		snprintf(b->fix, sizeof(b->fix),
			 "it learns which memory objects back CUDA memory from CUDA's dma-buf export, which this driver does not offer (NVIDIA's open kernel modules do): install the open flavour of the driver, or load gdrdrv");
	else
		snprintf(b->fix, sizeof(b->fix),
			 "the reason says what stops it; else load gdrdrv");
}

static void advise_vulkan(struct backend_probe *b, const struct tcu *cu,
			  int dev, const char *causes)
{
	int fd_ok = 1;

	if (causes[0]) {
		snprintf(b->fix, sizeof(b->fix),
			 "mend what stops it: each cause is a check of its own, with its fix (%s)",
			 causes);
		return;
	}
	if (cu)
		cu->DeviceGetAttribute(&fd_ok,
			CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev);
	if (!fd_ok)
		snprintf(b->fix, sizeof(b->fix),
			 "CUDA cannot export this GPU's memory as a file descriptor: the vulkan backend cannot import it; use gdrdrv");
}

#define TEST_ALLOC	(2UL << 20)
#define TEST_SIZE	(64UL << 10)

/* Pin, map and move TEST_SIZE bytes both ways, checked with cuMemcpy. */
static void self_test(struct backend_probe *b, gdr_t g, const struct tcu *cu,
		      int dev)
{
	unsigned char *ref = malloc(TEST_SIZE), *got = malloc(TEST_SIZE);
	unsigned long base = 0;
	CUdeviceptr cubase = 0;
	const char *type = "?", *kind = "gdrmap_mem_alloc";
	gdr_info_t info;
	gdr_mh_t mh;
	void *map = NULL;
	char *p;
	size_t i;
	int err;

	b->tested = true;
	if (!ref || !got) {
		snprintf(b->test, sizeof(b->test), "out of memory");
		goto out;
	}
	if (!gdrmap_mem_alloc || gdrmap_mem_alloc(dev, TEST_ALLOC, &base)) {
		/* gdrdrv also pins cuMemAlloc memory (and the simulated
		 * GPU's CUDA has no fd-exportable VMM memory). */
		base = 0;
		if (!strcmp(b->name, "vulkan") ||
		    cu->MemAlloc(&cubase, TEST_ALLOC) != CUDA_SUCCESS) {
			snprintf(b->test, sizeof(b->test),
				 "no GPU memory to test with: gdrmap_mem_alloc%s failed",
				 strcmp(b->name, "vulkan") ? " and cuMemAlloc" : "");
			goto out;
		}
		base = (unsigned long)cubase;
		kind = "cuMemAlloc";
	}
	err = gdr_pin_buffer(g, base, TEST_SIZE, 0, 0, &mh);
	if (err) {
		snprintf(b->test, sizeof(b->test), "gdr_pin_buffer: %s",
			 strerror(err));
		goto out;
	}
	err = gdr_map(g, mh, &map, TEST_SIZE);
	if (!err)
		err = gdr_get_info(g, mh, &info);
	if (err) {
		snprintf(b->test, sizeof(b->test), "gdr_map: %s", strerror(err));
		goto unpin;
	}
	gdr_get_mapping_type_string(info.mapping_type, &type);
	p = (char *)map + (base - info.va);
	for (i = 0; i < TEST_SIZE; i++)
		ref[i] = (unsigned char)(i * 131 + 7);
	gdr_copy_to_mapping(mh, p, ref, TEST_SIZE);
	if (cu->MemcpyDtoH(got, base, TEST_SIZE) != CUDA_SUCCESS ||
	    memcmp(ref, got, TEST_SIZE)) {
		snprintf(b->test, sizeof(b->test),
			 "bytes written through the mapping are not what cuMemcpyDtoH reads");
		goto unmap;
	}
	for (i = 0; i < TEST_SIZE; i++)
		ref[i] = (unsigned char)(i * 37 + 1);
	if (cu->MemcpyHtoD(base, ref, TEST_SIZE) != CUDA_SUCCESS ||
	    cu->CtxSynchronize() != CUDA_SUCCESS) {
		snprintf(b->test, sizeof(b->test), "cuMemcpyHtoD failed");
		goto unmap;
	}
	gdr_copy_from_mapping(mh, got, p, TEST_SIZE);
	if (memcmp(ref, got, TEST_SIZE)) {
		snprintf(b->test, sizeof(b->test),
			 "bytes read through the mapping are not what cuMemcpyHtoD wrote");
		goto unmap;
	}
	b->test_ok = true;
	snprintf(b->test, sizeof(b->test),
		 "pinned %s memory, mapped it (%s), moved 64 KiB both ways, checked with cuMemcpy",
		 kind, type);
unmap:
	gdr_unmap(g, mh, map, TEST_SIZE);
unpin:
	gdr_unpin_buffer(g, mh);
out:
	if (cubase)
		cu->MemFree(cubase);
	else if (base && gdrmap_mem_free)
		gdrmap_mem_free(base);
	free(ref);
	free(got);
}

/*
 * How the backend pins cuMemAlloc memory (what UCX and MPI hand it):
 * mapped, copy-only (then 64 KiB moved both ways, checked, and an 8-byte
 * write timed), or refused with the library's reason.
 */
static void legacy_test(struct backend_probe *b, gdr_t g, const struct tcu *cu)
{
	unsigned char ref[4096], got[4096];
	double t[101];
	struct stats st;
	CUdeviceptr p = 0;
	gdr_info_t info;
	gdr_mh_t mh;
	void *map = NULL;
	size_t i;
	int k;

	if (cu->MemAlloc(&p, TEST_ALLOC) != CUDA_SUCCESS)
		return;
	if (gdr_pin_buffer(g, p, sizeof(ref), 0, 0, &mh)) {
		b->legacy = LEGACY_REFUSED;
		snprintf(b->legacy_why, sizeof(b->legacy_why), "%s",
			 gdrmap_last_error ? gdrmap_last_error() : "refused");
		goto free;
	}
	if (gdr_map(g, mh, &map, sizeof(ref)) || gdr_get_info(g, mh, &info))
		goto unpin;
	b->legacy = info.mapping_type == GDR_MAPPING_TYPE_NONE ?
		    LEGACY_COPY_ONLY : LEGACY_MAPPED;
	if (b->legacy == LEGACY_COPY_ONLY) {
		for (i = 0; i < sizeof(ref); i++)
			ref[i] = (unsigned char)(i * 29 + 3);
		gdr_copy_to_mapping(mh, map, ref, sizeof(ref));
		if (cu->MemcpyDtoH(got, p, sizeof(got)) != CUDA_SUCCESS ||
		    memcmp(ref, got, sizeof(got)) ||
		    gdr_copy_from_mapping(mh, got, map, sizeof(got)) ||
		    memcmp(ref, got, sizeof(got))) {
			b->legacy = LEGACY_REFUSED;
			snprintf(b->legacy_why, sizeof(b->legacy_why),
				 "pinned copy-only, but its copies moved the wrong bytes");
		}
		for (k = 0; k < 101; k++) {
			double t0 = now_ns();

			gdr_copy_to_mapping(mh, map, ref, 8);
			t[k] = now_ns() - t0;
		}
		stats_compute(&st, t, 101);
		b->legacy_us = st.p50 / 1000;
	}
	gdr_unmap(g, mh, map, sizeof(ref));
unpin:
	gdr_unpin_buffer(g, mh);
free:
	cu->MemFree(p);
}

/*
 * The self-test on each GPU in turn, each in its own context; the first
 * failure is the result, else what the first GPU's test did.
 */
static void self_test_gpus(struct backend_probe *b, gdr_t g,
			   const struct tcu *cu, const int *devs, int ndevs)
{
	char first[sizeof(b->test)], list[128] = "", why[256];
	size_t used = 0;
	int i;

	for (i = 0; i < ndevs; i++) {
		b->test_ok = false;
		if (tcu_use_device(cu, devs[i], NULL, why, sizeof(why))) {
			b->tested = true;
			snprintf(b->test, sizeof(b->test), "%s", why);
			return;
		}
		self_test(b, g, cu, devs[i]);
		if (!b->test_ok) {
			snprintf(first, sizeof(first), "%s", b->test);
			snprintf(b->test, sizeof(b->test), "GPU %d: %.280s",
				 devs[i], first);
			return;
		}
		if (!i)
			snprintf(first, sizeof(first), "%s", b->test);
		if (used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used,
						 "%s%d", i ? ", " : "", devs[i]);
	}
	if (ndevs)
		snprintf(b->test, sizeof(b->test), "GPU%s %s: %.180s",
			 ndevs > 1 ? "s" : "", list, first);
	if (ndevs && !tcu_use_device(cu, devs[0], NULL, why, sizeof(why)))
		legacy_test(b, g, cu);
}

/*
 * What a program run here gets from gdr_open: the probes below force each
 * backend, which hides a variable that forces one (or names none), so
 * this comes first.
 */
static void probe_default(struct default_open *d)
{
	static const char *const vars[] = { "GDRMAP_BACKEND",
					    "GDRCOPY_USE_DMABUF_MMAP" };
	const char *last, *v;
	size_t i, used = 0;
	int b = 0;
	gdr_t g;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		v = getenv(vars[i]);
		if (v && *v && used < sizeof(d->env))
			used += (size_t)snprintf(d->env + used,
						 sizeof(d->env) - used,
						 "%s%s=%s", used ? ", " : "",
						 vars[i], v);
	}
	errno = 0;
	g = gdr_open();
	if (g) {
		d->ok = true;
		if (!gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &b))
			d->backend = gdr_backend_name(b);
		gdr_close(g);
		return;
	}
	d->err = errno ? errno : ENODEV;
	last = gdrmap_last_error ? gdrmap_last_error() : "";
	snprintf(d->why, sizeof(d->why), "%s",
		 last[0] ? last : strerror(d->err));
	/* Which backend gdrmap_open takes where gdr_open takes none: the
	 * library's answer, not a rule restated here. */
	g = d->env[0] || !gdrmap_open ? NULL : gdrmap_open();
	if (g) {
		if (!gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &b))
			d->partial = gdr_backend_name(b);
		gdr_close(g);
	}
}

void probe_backends(struct backend_probe *bp, struct default_open *def,
		    const struct tcu *cu, const int *devs, int ndevs,
		    const char *vulkan_causes)
{
	const char *v = getenv("GDRMAP_BACKEND");
	char *saved = v ? strdup(v) : NULL;
	char why[256];
	gdr_t g;
	int i, err;

	/* gdr_open runs in the first GPU's context, as an application's. */
	if (cu && ndevs)
		tcu_use_device(cu, devs[0], NULL, why, sizeof(why));
	probe_default(def);
	for (i = 0; i < GDR_NR_BACKENDS; i++) {
		struct backend_probe *b = &bp[i];

		memset(b, 0, sizeof(*b));
		b->name = gdr_backend_name(gdr_backend_at(i));
		setenv("GDRMAP_BACKEND", b->name, 1);
		errno = 0;
		g = gdr_open();
		err = errno;
		if (g) {
			b->usable = true;
			gdr_driver_get_version(g, &b->drv_major, &b->drv_minor);
			if (cu)
				self_test_gpus(b, g, cu, devs, ndevs);
			gdr_close(g);
			continue;
		}
		library_reason(b, err);
		/* The advice below replaces it where it knows more. */
		snprintf(b->fix, sizeof(b->fix),
			 "see the reason; GDRCOPY_ENABLE_LOGGING=1 GDRCOPY_LOG_LEVEL=1 shows every step");
		switch (gdr_backend_at(i)) {
		case GDRMAP_BACKEND_GDRDRV:
			advise_gdrdrv(b);
			break;
		case GDRMAP_BACKEND_DMABUF:
			advise_dmabuf(b, cu, ndevs ? devs[0] : 0);
			break;
		case GDRMAP_BACKEND_RM:
			advise_rm(b, cu, ndevs ? devs[0] : 0);
			break;
		default:
			advise_vulkan(b, cu, ndevs ? devs[0] : 0, vulkan_causes);
		}
	}
	if (saved)
		setenv("GDRMAP_BACKEND", saved, 1);
	else
		unsetenv("GDRMAP_BACKEND");
	free(saved);
	if (cu && ndevs)
		cu->CtxSetCurrent(NULL);
}
