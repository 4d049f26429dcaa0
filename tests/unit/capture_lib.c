// SPDX-License-Identifier: MIT
/*
 * A stand-in for libcuda in test_rm_capture: a shared library that calls
 * ioctl() through its own import, as libcuda does, built into
 * libgdrtest_capture.so (bound at load, its import slot in RELRO) and
 * libgdrtest_capture_lazy.so (bound at the first call).  It issues the
 * dma-buf export argument libcuda passes nvidia.ko, in parts of at most
 * NV_DMABUF_EXPORT_MAX_HANDLES objects as libcuda does, directly or
 * through NV_ESC_IOCTL_XFER_CMD, with an argument of any size; and
 * FIONREAD, any other ioctl.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "backends/rm_abi.h"

int gdrtest_export(int fd, uint32_t client, const uint32_t *handles,
		   const uint64_t *offsets, const uint64_t *sizes,
		   uint32_t n, size_t arg_size, int xfer);
int gdrtest_fionread(int fd, int *avail);

/*
 * Export objects [0, n) of client in parts; the argument is arg_size
 * bytes (the known layout's fields at their places).  0, or -1 with
 * errno from the first ioctl that failed.
 */
int gdrtest_export(int fd, uint32_t client, const uint32_t *handles,
		   const uint64_t *offsets, const uint64_t *sizes,
		   uint32_t n, size_t arg_size, int xfer)
{
	size_t room = arg_size > sizeof(struct nv_export_dmabuf) ?
		      arg_size : sizeof(struct nv_export_dmabuf);
	struct nv_export_dmabuf *p = calloc(1, room);
	uint32_t at = 0, k, part;
	uint64_t total = 0;
	int ret = 0;

	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	for (k = 0; k < n; k++)
		total += sizes[k];
	do {
		part = n - at < NV_DMABUF_EXPORT_MAX_HANDLES ?
		       n - at : NV_DMABUF_EXPORT_MAX_HANDLES;
		memset(p, 0, room);
		p->fd = -1;
		p->hClient = client;
		p->totalObjects = n;
		p->numObjects = part;
		p->index = at;
		p->totalSize = total;
		for (k = 0; k < part; k++) {
			p->handles[k] = handles[at + k];
			p->offsets[k] = offsets[at + k];
			p->sizes[k] = sizes[at + k];
		}
		if (xfer) {
			struct nv_ioctl_xfer x = {
				.cmd = NV_ESC_EXPORT_TO_DMABUF_FD,
				.size = (uint32_t)arg_size,
				.ptr = (uintptr_t)p,
			};

			ret = ioctl(fd, NV_IOCTL_REQ(NV_ESC_IOCTL_XFER_CMD,
						     sizeof(x)), &x);
		} else {
			ret = ioctl(fd, NV_IOCTL_REQ(NV_ESC_EXPORT_TO_DMABUF_FD,
						     arg_size), p);
		}
		at += part;
	} while (!ret && at < n);
	free(p);
	return ret;
}

int gdrtest_fionread(int fd, int *avail)
{
	return ioctl(fd, FIONREAD, avail);
}
