// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Build-only stand-in for nvidia.ko's nvidia_p2p_* exports.
 *
 * modpost needs a Module.symvers with these symbols (and their CRCs) to
 * link gdrdrv.ko when neither an NVIDIA driver tree nor sim/nvsim's
 * Module.symvers is given.  This module is never installed and refuses to
 * load.  Its CRCs come from kernel/nvidia/nv-p2p.h, as nvsim's do.
 */
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/module.h>

#include "nv-p2p.h"

int nvidia_p2p_get_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address, uint64_t length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	return -ENODEV;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_get_pages);

int nvidia_p2p_put_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address,
			 struct nvidia_p2p_page_table *page_table)
{
	return -ENODEV;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_put_pages);

int nvidia_p2p_get_pages_persistent(uint64_t virtual_address, uint64_t length,
				    struct nvidia_p2p_page_table **page_table,
				    uint32_t flags)
{
	return -ENODEV;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_get_pages_persistent);

int nvidia_p2p_put_pages_persistent(uint64_t virtual_address,
				    struct nvidia_p2p_page_table *page_table,
				    uint32_t flags)
{
	return -ENODEV;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_put_pages_persistent);

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	return 0;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_free_page_table);

int nvidia_p2p_dma_map_pages(struct pci_dev *peer,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping)
{
	return -ENODEV;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_dma_map_pages);

int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer,
			       struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return -ENODEV;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_dma_unmap_pages);

int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return 0;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_free_dma_mapping);

static int __init nv_p2p_stub_init(void)
{
	return -EPERM;		/* build-only: never to be loaded */
}
module_init(nv_p2p_stub_init);

MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("gdrmap build-only stub of the nvidia_p2p exports (do not load)");
