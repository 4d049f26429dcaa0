/* SPDX-License-Identifier: MIT */
/*
 * arm64 feature probe: the kernel's hardware capabilities, which already
 * account for what it enables.
 */
#include <sys/auxv.h>

#include "cpu.h"

#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD	(1UL << 1)
#endif

int gdr_cpu_has_neon(void)
{
	return !!(getauxval(AT_HWCAP) & HWCAP_ASIMD);
}
