// SPDX-License-Identifier: MIT
/*
 * GDR_PIN_FLAG_FORCE_PCIE in the module-free backends (backend.h): the
 * same answer as gdrdrv gives, where NVIDIA's driver decides.  The flag
 * asks for a BAR1 mapping where a coherent link (NVLink-C2C) would
 * otherwise serve the CPU; without such a link there is nothing to force,
 * and NVIDIA's driver refuses the flag (nvidia_p2p_get_pages with
 * NVIDIA_P2P_FLAGS_FORCE_BAR1_MAPPING), as does CUDA's dma-buf export of
 * GDRCopy's dma-buf path.  UCX, whose UCX_GDR_COPY_USE_PCIE=yes pins
 * with the flag, expects that refusal there.
 */
#include <errno.h>

#include "base/cuda_api.h"
#include "base/internal.h"
#include "base/log.h"

int gdr_force_pcie_refused(const struct gdr_region *r, int dev)
{
	const struct gdr_cuda *cu = gdr_cuda_get(NULL, 0);
	int coherent = 0;

	if (!(r->pin_flags & GDR_PIN_FLAG_FORCE_PCIE))
		return 0;
	if (cu)
		cu->DeviceGetAttribute(&coherent,
			CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
			dev);
	if (coherent)
		return 0;
	gdr_err("GDR_PIN_FLAG_FORCE_PCIE: CUDA device %d has no coherent link to the CPU, so every mapping of its memory is PCIe already, and NVIDIA's driver refuses the flag here (for gdrdrv too): pin without it",
		dev);
	return EOPNOTSUPP;
}
