// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: its module parameters (simulated GPU, not real hardware).  The
 * other files read them only through the functions below: most are
 * writable in sysfs and change under a reader at any time, so each is
 * read once per use, whole.
 */
#include <linux/compiler.h>
#include <linux/moduleparam.h>

#include "nvsim.h"

static bool nvsim_scatter;
module_param_named(scatter, nvsim_scatter, bool, 0644);
MODULE_PARM_DESC(scatter,
		 "Hand pages out in descending BAR order, never contiguous (default 0)");

static bool nvsim_poison;
module_param_named(poison, nvsim_poison, bool, 0644);
MODULE_PARM_DESC(poison, "Fill freed pages with 0x6b (default 0)");

static bool nvsim_dmabuf;
module_param_named(dmabuf, nvsim_dmabuf, bool, 0644);
MODULE_PARM_DESC(dmabuf, "Offer dma-buf export, CUDA's DMA_BUF_SUPPORTED (default 0)");

static bool nvsim_dmabuf_mmap = true;
module_param_named(dmabuf_mmap, nvsim_dmabuf_mmap, bool, 0644);
MODULE_PARM_DESC(dmabuf_mmap,
		 "dma-bufs can be mmap'ed; 0 fails with ENOTSUPP as drivers before 580 (default 1)");

static unsigned int nvsim_fail_puts;
module_param_named(fail_puts, nvsim_fail_puts, uint, 0644);
MODULE_PARM_DESC(fail_puts,
		 "The next N put_pages[_persistent] calls fail with -ENOMEM and release nothing, as the driver's do when it cannot allocate (default 0)");

static unsigned long max_pages;
module_param(max_pages, ulong, 0444);
MODULE_PARM_DESC(max_pages, "Use at most this many 64 KiB pages (0: the whole BAR)");

bool nvsim_param_scatter(void)
{
	return READ_ONCE(nvsim_scatter);
}

bool nvsim_param_poison(void)
{
	return READ_ONCE(nvsim_poison);
}

bool nvsim_param_dmabuf(void)
{
	return READ_ONCE(nvsim_dmabuf);
}

bool nvsim_param_dmabuf_mmap(void)
{
	return READ_ONCE(nvsim_dmabuf_mmap);
}

/* Read-only: fixed from load on. */
unsigned long nvsim_param_max_pages(void)
{
	return max_pages;
}

/*
 * Whether fail_puts asks this put to fail: it counts down by one for each
 * put it fails.  The caller holds nvsim_lock, so two puts never take the
 * same failure; a value written from sysfs meanwhile may be lost, as with
 * any counter set while it counts down.
 */
bool nvsim_param_take_fail_put(void)
{
	unsigned int n = READ_ONCE(nvsim_fail_puts);

	if (!n)
		return false;
	WRITE_ONCE(nvsim_fail_puts, n - 1);
	return true;
}
