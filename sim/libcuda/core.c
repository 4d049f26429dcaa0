// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1 for gdrmap's simulated GPUs (sim/nvsim): the CUDA driver
 * API calls that GPUDirect programs use, over /dev/nvsim.  NOT REAL
 * HARDWARE (see shim.h).
 *
 * This file: cuInit (the connection to nvsim, what it says about each
 * GPU, and the environment's NVSIM_ALLOC_OFFSET), the driver version,
 * and the translation of nvsim's errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "shim.h"

#define SHIM_DRIVER_VERSION 13000

pthread_mutex_t shim_lock = PTHREAD_MUTEX_INITIALIZER;
bool shim_initialized;
static CUresult shim_init_result = CUDA_ERROR_NOT_INITIALIZED;
int shim_fd = -1;
int shim_ndevs;
struct shim_dev shim_devs[NVSIM_MAX_DEVICES];
long shim_alloc_offset = -1;

CUresult errno_to_cu(int err)
{
	switch (err) {
	case ENOMEM:
		return CUDA_ERROR_OUT_OF_MEMORY;
	case ENODEV:
	case ENXIO:
		return CUDA_ERROR_NO_DEVICE;
	case EACCES:
	case EPERM:
		return CUDA_ERROR_NOT_PERMITTED;
	case EINVAL:
	case EFAULT:
	case ENOENT:
	case EEXIST:
		return CUDA_ERROR_INVALID_VALUE;
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

/* An nvsim ioctl: 0 or the errno. */
int nvsim_ioctl(unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(shim_fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? errno : 0;
}

/* The mapping holding va, on whichever GPU. */
bool nvsim_query_va(uint64_t va, struct nvsim_query *q)
{
	memset(q, 0, sizeof(*q));
	q->va = va;
	return nvsim_ioctl(NVSIM_IOC_QUERY, q) == 0;
}

/* nvsim's capabilities now (module parameters may change at run time). */
uint64_t nvsim_caps(CUdevice dev)
{
	struct nvsim_info info = { .device = (uint32_t)dev };

	pthread_mutex_lock(&shim_lock);
	if (nvsim_ioctl(NVSIM_IOC_INFO, &info))
		info.caps = 0;
	pthread_mutex_unlock(&shim_lock);
	return info.caps;
}

/* NVSIM_ALLOC_OFFSET, read at cuInit. */
static void read_alloc_offset(void)
{
	const char *s = getenv("NVSIM_ALLOC_OFFSET");
	char *end;
	long v;

	if (!s)
		return;
	errno = 0;
	v = strtol(s, &end, 0);
	if (!errno && *s && !*end && v >= 0 && v < (long)SHIM_PAGE &&
	    !(v & 0xff))
		shim_alloc_offset = v;
	else
		fprintf(stderr, "libcuda (nvsim shim): ignoring NVSIM_ALLOC_OFFSET=%s\n",
			s);
}

/* What nvsim says about GPU dev; a CUresult for cuInit. */
static CUresult read_device(int dev)
{
	struct shim_dev *d = &shim_devs[dev];
	int err;

	memset(&d->info, 0, sizeof(d->info));
	d->info.device = (uint32_t)dev;
	err = nvsim_ioctl(NVSIM_IOC_INFO, &d->info);
	if (err)
		return CUDA_ERROR_NO_DEVICE;
	if (d->info.abi_version != NVSIM_ABI_VERSION ||
	    d->info.page_size != SHIM_PAGE)
		return CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
	d->primary = (struct CUctx_st){ .dev = dev, .primary = true };
	d->primary_refs = 0;
	return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int flags)
{
	const char *path = getenv("NVSIM_DEVICE");
	CUresult ret;
	int fd, i;

	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_lock);
	if (shim_initialized || shim_init_result != CUDA_ERROR_NOT_INITIALIZED) {
		ret = shim_initialized ? CUDA_SUCCESS : shim_init_result;
		goto out;
	}
	fd = open(path && *path ? path : NVSIM_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		/* No simulated GPU: the same answer as a machine without one. */
		ret = CUDA_ERROR_NO_DEVICE;
		goto fail;
	}
	shim_fd = fd;
	/* Device 0 says how many there are. */
	ret = read_device(0);
	shim_ndevs = (int)shim_devs[0].info.device_count;
	if (!ret && (shim_ndevs < 1 || shim_ndevs > NVSIM_MAX_DEVICES))
		ret = CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
	for (i = 1; !ret && i < shim_ndevs; i++)
		ret = read_device(i);
	if (ret) {
		close(fd);
		shim_fd = -1;
		shim_ndevs = 0;
		goto fail;
	}
	read_alloc_offset();
	shim_initialized = true;
	ret = CUDA_SUCCESS;
	goto out;
fail:
	shim_init_result = ret;
out:
	pthread_mutex_unlock(&shim_lock);
	return ret;
}

CUresult cuDriverGetVersion(int *version)
{
	const char *s = getenv("NVSIM_DRIVER_VERSION");

	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	*version = s && atoi(s) > 0 ? atoi(s) : SHIM_DRIVER_VERSION;
	return CUDA_SUCCESS;
}
