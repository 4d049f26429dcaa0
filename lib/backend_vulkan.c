// SPDX-License-Identifier: MIT
/*
 * The Vulkan backend (CUDA VMM allocation exported as a file descriptor,
 * imported into Vulkan and mapped with vkMapMemory; no kernel module).
 * Not implemented yet: its open refuses, so gdr_open moves on and says
 * why when nothing else works.
 */
#include <errno.h>
#include <stdio.h>

#include "internal.h"

static int vulkan_open(struct gdr *g, char *why, size_t why_len)
{
	(void)g;
	snprintf(why, why_len,
		 "not available in this gdrmap version yet: load gdrdrv instead");
	return ENOTSUP;
}

const struct gdr_backend gdr_backend_vulkan = {
	.name = "vulkan",
	.id = GDRMAP_BACKEND_VULKAN,
	.open = vulkan_open,
};
