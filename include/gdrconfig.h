/* SPDX-License-Identifier: MIT */
/*
 * gdrconfig.h - which CPU architecture this build is for, as GDRCopy 2.x's
 * header of the same name reports it.  gdrmap itself does not need it;
 * it is installed for programs that include it.
 */
#ifndef __GDRCONFIG_H__
#define __GDRCONFIG_H__

#if defined(__x86_64__) || defined(__i386__)
#define GDRAPI_X86
#elif defined(__aarch64__)
#define GDRAPI_ARM64
#elif defined(__powerpc__) || defined(__powerpc64__)
#define GDRAPI_POWER
#else
#error "gdrconfig.h: unsupported CPU architecture (x86, arm64 and POWER are)"
#endif

#endif /* __GDRCONFIG_H__ */
