/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * nvsim: differences between the kernels nvsim builds for, in one place.
 * Kernel APIs are chosen by the compile tests in conftest/ (conftest.h,
 * written at build time by kernel/conftest.sh), not by version number.
 */
#ifndef _NVSIM_COMPAT_H
#define _NVSIM_COMPAT_H

#include <linux/export.h>
#include <linux/module.h>

#include "conftest.h"

/* TASK_SIZE_MAX: the top of user space, defined on every architecture. */
#ifndef TASK_SIZE_MAX
#define TASK_SIZE_MAX TASK_SIZE
#endif

#ifdef NVSIM_HAVE_MODULE_IMPORT_NS_IDENT
#define NVSIM_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS(DMA_BUF)
#else
#define NVSIM_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS("DMA_BUF")
#endif

/*
 * nvidia_p2p_* are GPL-only exports, as NVIDIA's open modules have them.
 * Built for the VM tests' proprietary stand-in of nvidia.ko (NVSIM_STANDIN,
 * see nvsim_prop.c) they are plain exports, renamed nvsim_p2p_* by Kbuild,
 * which nvsim_prop.ko re-exports under NVIDIA's names.
 */
#ifdef NVSIM_STANDIN
#define EXPORT_SYMBOL_NVSIM_P2P(sym)	EXPORT_SYMBOL(sym)
#else
#define EXPORT_SYMBOL_NVSIM_P2P(sym)	EXPORT_SYMBOL_GPL(sym)
#endif

#endif /* _NVSIM_COMPAT_H */
