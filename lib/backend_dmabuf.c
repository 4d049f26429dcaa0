// SPDX-License-Identifier: MIT
/*
 * The dma-buf backend (CUDA dma-buf file descriptor + mmap, no kernel
 * module).  Not implemented yet: its open refuses, so gdr_open moves on
 * and says why when nothing else works.
 */
#include <errno.h>
#include <stdio.h>

#include "internal.h"

static int dmabuf_open(struct gdr *g, char *why, size_t why_len)
{
	(void)g;
	snprintf(why, why_len,
		 "not available in this gdrmap version yet (mapping CUDA dma-bufs needs a CUDA 13.3+ driver): load gdrdrv instead");
	return ENOTSUP;
}

const struct gdr_backend gdr_backend_dmabuf = {
	.name = "dmabuf",
	.id = GDRMAP_BACKEND_DMABUF,
	.open = dmabuf_open,
};
