// SPDX-License-Identifier: MIT
/*
 * The in-tree nvidia_p2p declarations (kernel/nvidia/nv-p2p.h) lay structs
 * out as NVIDIA's driver does on LP64 (docs/abi.md section 3.3), so a
 * gdrdrv built against them works with the real nvidia.ko.
 */
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "../../kernel/nvidia/nv-p2p.h"

#define OFF(type, field, want)						\
	CHECK(offsetof(struct type, field) == (want), #type "." #field	\
	      " at %zu, want %d", offsetof(struct type, field), (want))

int main(void)
{
	CHECK(sizeof(struct nvidia_p2p_page) == 32, "page is 32 bytes");
	OFF(nvidia_p2p_page, physical_address, 0);
	OFF(nvidia_p2p_page, registers.fermi.wreqmb_h, 8);
	OFF(nvidia_p2p_page, registers.fermi.rreqmb_h, 12);
	OFF(nvidia_p2p_page, registers.fermi.rreqmb_0, 16);

	CHECK(sizeof(struct nvidia_p2p_page_table) == 40,
	      "page table (v2.0) is 40 bytes");
	OFF(nvidia_p2p_page_table, version, 0);
	OFF(nvidia_p2p_page_table, page_size, 4);
	OFF(nvidia_p2p_page_table, pages, 8);
	OFF(nvidia_p2p_page_table, entries, 16);
	OFF(nvidia_p2p_page_table, gpu_uuid, 24);
	OFF(nvidia_p2p_page_table, flags, 32);

	CHECK(sizeof(struct nvidia_p2p_dma_mapping) == 40,
	      "dma mapping is 40 bytes");
	OFF(nvidia_p2p_dma_mapping, page_size_type, 4);
	OFF(nvidia_p2p_dma_mapping, entries, 8);
	OFF(nvidia_p2p_dma_mapping, dma_addresses, 16);
	OFF(nvidia_p2p_dma_mapping, private, 24);
	OFF(nvidia_p2p_dma_mapping, pci_dev, 32);

	CHECK(NVIDIA_P2P_PAGE_TABLE_VERSION == 0x00020000, "table version");
	CHECK(NVIDIA_P2P_DMA_MAPPING_VERSION == 0x00020003, "dma version");
	CHECK(NVIDIA_P2P_PAGE_SIZE_64KB == 1, "64 KiB page enum");
	CHECK(NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING == 1, "FORCE_BAR1 flag");
	CHECK(NVIDIA_P2P_PAGE_TABLE_FLAGS_CPU_CACHEABLE == 1, "cacheable flag");
	return test_done();
}
