// SPDX-License-Identifier: MIT
/* The rm backend's view of the system (rm_os.h): the real one. */
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rm_os.h"

static int sys_open(const char *path, int flags)
{
	return open(path, flags);
}

static int sys_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg);
}

static const struct gdr_rm_os real_os = {
	.open = sys_open,
	.close = close,
	.ioctl = sys_ioctl,
	.mmap = mmap,
	.munmap = munmap,
	.export = gdr_rm_capture_export,
	.export_ready = gdr_rm_capture_ready,
};

static _Atomic(const struct gdr_rm_os *) os_in_use;

const struct gdr_rm_os *gdr_rm_os(void)
{
	const struct gdr_rm_os *os = atomic_load(&os_in_use);

	return os ? os : &real_os;
}

void gdr_rm_use_os(const struct gdr_rm_os *os)
{
	atomic_store(&os_in_use, os);
}
