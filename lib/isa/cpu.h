/* SPDX-License-Identifier: MIT */
/*
 * What this CPU and OS allow, probed once and cached.  These live apart
 * from the ISA files so that they are compiled without any -m flag: the
 * probe must run on every CPU.
 */
#ifndef GDRMAP_COPY_CPU_H
#define GDRMAP_COPY_CPU_H

#if defined(__x86_64__)
int gdr_cpu_has_sse41(void);
/* AVX2, and the OS saves YMM state. */
int gdr_cpu_has_avx2(void);
/* AVX-512 F, BW and VL (the flags copy_avx512.c is built with), and the
 * OS saves YMM and ZMM state. */
int gdr_cpu_has_avx512(void);
/* MOVDIR64B, and the SSE4.1 the MOVDIR64B set reads with. */
int gdr_cpu_has_movdir64b(void);
#elif defined(__aarch64__)
/* Advanced SIMD, as the kernel reports it (HWCAP_ASIMD). */
int gdr_cpu_has_neon(void);
#endif

#endif /* GDRMAP_COPY_CPU_H */
