/* SPDX-License-Identifier: MIT */
/*
 * Force-included into every user-space compile (-include, Makefile).
 *
 * With _GNU_SOURCE, glibc 2.38 and later headers bind strtol, strtoul,
 * sscanf and their kin (atoi too, inlined) to __isoc23_* symbols, which
 * only glibc 2.38 has: a library or command built on such a machine
 * (Debian 13, Ubuntu 24.04) would not load on Debian 12 (glibc 2.36), and
 * its packages would not install there.  Nothing here parses "0b" binary
 * numbers, the only difference, so every compile keeps the older symbols,
 * by setting the switch <features.h> derives from _GNU_SOURCE back to 0
 * (spelt C2X_STRTOL, or C23_STRTOL in later releases: both are set).
 */
#ifndef GDRMAP_GLIBC_COMPAT_H
#define GDRMAP_GLIBC_COMPAT_H

#ifdef __linux__
#include <features.h>
#endif
#ifdef __GLIBC__
#undef __GLIBC_USE_C2X_STRTOL
#define __GLIBC_USE_C2X_STRTOL 0
#undef __GLIBC_USE_C23_STRTOL
#define __GLIBC_USE_C23_STRTOL 0
#endif

#endif /* GDRMAP_GLIBC_COMPAT_H */
