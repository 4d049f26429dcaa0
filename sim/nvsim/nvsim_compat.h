/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * nvsim: differences between the kernels nvsim builds for (Debian 6.1 and
 * 6.12), in one place.
 */
#ifndef _NVSIM_COMPAT_H
#define _NVSIM_COMPAT_H

#include <linux/version.h>

/* TASK_SIZE_MAX: the top of user space, defined on every architecture. */
#ifndef TASK_SIZE_MAX
#define TASK_SIZE_MAX TASK_SIZE
#endif

/* Symbol namespaces are named by a string literal from 6.13 on. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#define NVSIM_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS("DMA_BUF")
#else
#define NVSIM_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS(DMA_BUF)
#endif

#endif /* _NVSIM_COMPAT_H */
