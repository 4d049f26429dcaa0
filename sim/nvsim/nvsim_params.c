// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim: its module parameters (simulated GPU, not real hardware).  The
 * other files read them only through the functions below: most are
 * writable in sysfs and change under a reader at any time, so each is
 * read once per use, whole.
 */
#include <linux/atomic.h>
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
		 "The next N put_pages[_persistent] calls fail with -ENOMEM before taking any lock, releasing and dropping nothing, as the driver's do when it cannot allocate its stack (default 0)");

static unsigned int nvsim_fail_puts_rm;
module_param_named(fail_puts_rm, nvsim_fail_puts_rm, uint, 0644);
MODULE_PARM_DESC(fail_puts_rm,
		 "The next N put_pages[_persistent] calls that get past that allocation fail inside RM with -EIO: nothing released, but a persistent put still drops its GPU reference, as the driver's does (default 0)");

static unsigned int nvsim_fail_gets_late;
module_param_named(fail_gets_late, nvsim_fail_gets_late, uint, 0644);
MODULE_PARM_DESC(fail_gets_late,
		 "The next N get_pages[_persistent] calls fail with -EIO after the pin was made and its callback registered (the pin undone, unless its callback ran meanwhile) (default 0)");

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
 * Takes one failure from a count-down parameter.  An early failing put
 * holds no lock (the driver's takes none before it fails), so the count
 * goes down by cmpxchg: two callers never take the same failure.  A value
 * written from sysfs meanwhile may be lost, as with any counter set while
 * it counts down.
 */
static bool nvsim_take(unsigned int *param)
{
	unsigned int n = READ_ONCE(*param);

	while (n) {
		unsigned int was = cmpxchg(param, n, n - 1);

		if (was == n)
			return true;
		n = was;
	}
	return false;
}

bool nvsim_param_take_fail_put(void)
{
	return nvsim_take(&nvsim_fail_puts);
}

bool nvsim_param_take_fail_put_rm(void)
{
	return nvsim_take(&nvsim_fail_puts_rm);
}

bool nvsim_param_take_fail_get_late(void)
{
	return nvsim_take(&nvsim_fail_gets_late);
}
