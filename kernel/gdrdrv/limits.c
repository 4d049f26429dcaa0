// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What one pin, and one open file, may take.
 *
 * NVIDIA's get_pages sizes its page arrays from the requested length
 * before it looks the range up (nv-p2p.c), so an absurd length makes the
 * kernel allocate gigabytes, or warn, before the request fails.  No pin
 * can be larger than the memory behind it: on x86 that memory is reached
 * through a PCI BAR (BAR1 of the GPU); on coherent platforms (arm64,
 * POWER) it may also be GPU memory onlined as system RAM.  So a pin larger
 * than the largest PCI memory BAR (there: or than all RAM) is refused
 * before NVIDIA is called.  The max_pin_size parameter replaces the bound.
 *
 * BAR1 space is shared by every process: max_pinned_per_file bounds the
 * bytes one open file holds pinned (0, the default: no bound, as GDRCopy).
 * A pin counts until NVIDIA has released it, not until it is unpinned: a
 * pin left to its free callback still holds its BAR1 space, its page
 * table and a module reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/pci.h>

#include "gdrdrv.h"

static u64 gdrdrv_max_pin;

static u64 gdrdrv_largest_bar(void)
{
	struct pci_dev *pdev = NULL;
	u64 largest = 0;
	int i;

	for_each_pci_dev(pdev) {
		for (i = 0; i < PCI_STD_NUM_BARS; i++) {
			if (pci_resource_flags(pdev, i) & IORESOURCE_MEM)
				largest = max_t(u64, largest,
						pci_resource_len(pdev, i));
		}
	}
	return largest;
}

void gdrdrv_limits_init(u64 max_pin_size)
{
	u64 bound = max_pin_size;

	if (!bound) {
		bound = gdrdrv_largest_bar();
#if defined(CONFIG_ARM64) || defined(CONFIG_PPC64)
		struct sysinfo si;

		si_meminfo(&si);
		bound = max_t(u64, bound, (u64)si.totalram * si.mem_unit);
#endif
	}
	/* No PCI memory at all, or a bound that rounds past 2^64: no bound. */
	if (!bound || bound > U64_MAX - GDRDRV_GPU_PAGE_SIZE + 1)
		gdrdrv_max_pin = U64_MAX;
	else
		gdrdrv_max_pin = round_up(bound, GDRDRV_GPU_PAGE_SIZE);
	gdrdrv_info("pins of up to %llu bytes\n", gdrdrv_max_pin);
}

/* size: the 64 KiB-rounded size of a pin request. */
int gdrdrv_check_pin_size(u64 size)
{
	if (size <= gdrdrv_max_pin)
		return 0;
	gdrdrv_dbg("pin of %llu bytes refused: no GPU memory is larger than %llu (max_pin_size)\n",
		   size, gdrdrv_max_pin);
	return -EINVAL;
}

/*
 * Counts a new pin of f against max_pinned_per_file.  Under f->lock, so
 * that two pins do not both take the last room; a release meanwhile only
 * makes more.
 */
int gdrdrv_charge_pin(struct gdrdrv_file *f, u64 bytes)
{
	u64 limit = READ_ONCE(gdrdrv_max_pinned_per_file);
	u64 held = atomic64_read(&f->pinned_bytes);

	lockdep_assert_held(&f->lock);

	if (limit && (held > limit || bytes > limit - held)) {
		gdrdrv_dbg("pin of %llu bytes refused: the file holds %llu of max_pinned_per_file %llu\n",
			   bytes, held, limit);
		return -ENOMEM;
	}
	atomic64_add(bytes, &f->pinned_bytes);
	atomic_inc(&f->pins);
	return 0;
}

/* By whoever releases the pin: the free callback takes no f->lock. */
void gdrdrv_uncharge_pin(struct gdrdrv_file *f, u64 bytes)
{
	atomic64_sub(bytes, &f->pinned_bytes);
	atomic_dec(&f->pins);
}
