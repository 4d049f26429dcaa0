// SPDX-License-Identifier: MIT
/*
 * libcuda shim of the simulated GPUs (shim.h): the bytes of device memory,
 * read and written through nvsim's file at their device addresses.  Its
 * own file because both the synchronous copies (copy.c) and the copies a
 * stream runs later (stream.c) move them.
 */
#include <errno.h>
#include <unistd.h>

#include "shim.h"

CUresult dev_rw(uint64_t dev, void *host, size_t n, bool write)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		if (write)
			r = pwrite(shim_fd, (char *)host + done, n - done,
				   (off_t)(dev + done));
		else
			r = pread(shim_fd, (char *)host + done, n - done,
				  (off_t)(dev + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? errno_to_cu(errno) : CUDA_ERROR_UNKNOWN;
		done += (size_t)r;
	}
	return CUDA_SUCCESS;
}
