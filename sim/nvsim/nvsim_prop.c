// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * nvsim_prop.ko: a stand-in of NVIDIA's proprietary nvidia.ko, for the VM
 * tests only.  It declares a licence that is not GPL-compatible, as that
 * driver does, and exports nvidia_p2p_* as plain exports over nvsim built
 * with NVSIM_STANDIN (whose nvidia_p2p_* are then named nvsim_p2p_*).
 * A module using its symbols inherits the proprietary taint and the
 * kernel then refuses it every GPL-only export at load time, as with the
 * real driver: the proprietary flavour of gdrdrv must load against it.
 * (The source is gdrmap's, GPL-2.0 OR MIT; only the module says otherwise.)
 */
#include <linux/module.h>

#include "nv-p2p.h"

/* nvsim's functions, as the NVSIM_STANDIN build names them. */
typeof(nvidia_p2p_get_pages) nvsim_p2p_get_pages;
typeof(nvidia_p2p_put_pages) nvsim_p2p_put_pages;
typeof(nvidia_p2p_get_pages_persistent) nvsim_p2p_get_pages_persistent;
typeof(nvidia_p2p_put_pages_persistent) nvsim_p2p_put_pages_persistent;
typeof(nvidia_p2p_free_page_table) nvsim_p2p_free_page_table;
typeof(nvidia_p2p_dma_map_pages) nvsim_p2p_dma_map_pages;
typeof(nvidia_p2p_dma_unmap_pages) nvsim_p2p_dma_unmap_pages;
typeof(nvidia_p2p_free_dma_mapping) nvsim_p2p_free_dma_mapping;

int nvidia_p2p_get_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address, uint64_t length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data)
{
	return nvsim_p2p_get_pages(p2p_token, va_space, virtual_address,
				   length, page_table, free_callback, data);
}
EXPORT_SYMBOL(nvidia_p2p_get_pages);

int nvidia_p2p_put_pages(uint64_t p2p_token, uint32_t va_space,
			 uint64_t virtual_address,
			 struct nvidia_p2p_page_table *page_table)
{
	return nvsim_p2p_put_pages(p2p_token, va_space, virtual_address,
				   page_table);
}
EXPORT_SYMBOL(nvidia_p2p_put_pages);

int nvidia_p2p_get_pages_persistent(uint64_t virtual_address, uint64_t length,
				    struct nvidia_p2p_page_table **page_table,
				    uint32_t flags)
{
	return nvsim_p2p_get_pages_persistent(virtual_address, length,
					      page_table, flags);
}
EXPORT_SYMBOL(nvidia_p2p_get_pages_persistent);

int nvidia_p2p_put_pages_persistent(uint64_t virtual_address,
				    struct nvidia_p2p_page_table *page_table,
				    uint32_t flags)
{
	return nvsim_p2p_put_pages_persistent(virtual_address, page_table,
					      flags);
}
EXPORT_SYMBOL(nvidia_p2p_put_pages_persistent);

int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	return nvsim_p2p_free_page_table(page_table);
}
EXPORT_SYMBOL(nvidia_p2p_free_page_table);

int nvidia_p2p_dma_map_pages(struct pci_dev *peer,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping)
{
	return nvsim_p2p_dma_map_pages(peer, page_table, dma_mapping);
}
EXPORT_SYMBOL(nvidia_p2p_dma_map_pages);

int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer,
			       struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return nvsim_p2p_dma_unmap_pages(peer, page_table, dma_mapping);
}
EXPORT_SYMBOL(nvidia_p2p_dma_unmap_pages);

int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return nvsim_p2p_free_dma_mapping(dma_mapping);
}
EXPORT_SYMBOL(nvidia_p2p_free_dma_mapping);

MODULE_LICENSE("NVIDIA");
MODULE_AUTHOR("gdrmap");
MODULE_DESCRIPTION("gdrmap VM tests: a proprietary-licensed stand-in of nvidia.ko over nvsim (not real hardware)");
