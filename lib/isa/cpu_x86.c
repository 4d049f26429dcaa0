/* SPDX-License-Identifier: MIT */
/*
 * x86-64 feature probe: cpuid says what the CPU has, xgetbv what the OS
 * saves on a context switch.  A vector unit whose registers the OS does not
 * save (XCR0) must not be used, whatever cpuid says.
 */
#include <cpuid.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu.h"

enum {
	HAVE_SSE41	= 1u << 0,
	HAVE_AVX2	= 1u << 1,
	HAVE_AVX512	= 1u << 2,
	HAVE_MOVDIR64B	= 1u << 3,
	PROBED		= 1u << 31,
};

/* CPUID.1:ECX */
#define ECX1_SSE41	(1u << 19)
#define ECX1_OSXSAVE	(1u << 27)
#define ECX1_AVX	(1u << 28)
/* CPUID.(7,0):EBX and ECX */
#define EBX7_AVX2	(1u << 5)
#define EBX7_AVX512F	(1u << 16)
#define EBX7_AVX512BW	(1u << 30)
#define EBX7_AVX512VL	(1u << 31)
#define ECX7_MOVDIR64B	(1u << 28)
/* XCR0: SSE and AVX state; opmask, ZMM0-15 upper halves, ZMM16-31 */
#define XCR0_YMM	0x06u
#define XCR0_ZMM	0xe0u

static uint64_t read_xcr0(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static unsigned probe(void)
{
	unsigned max_leaf, eax, ebx, ecx1, ebx7 = 0, ecx7 = 0, edx;
	uint64_t xcr0 = 0;
	unsigned have = PROBED;
	int ymm_saved, zmm_saved;

	max_leaf = __get_cpuid_max(0, NULL);
	if (max_leaf < 1)
		return have;
	__cpuid(1, eax, ebx, ecx1, edx);
	if (max_leaf >= 7)
		__cpuid_count(7, 0, eax, ebx7, ecx7, edx);
	if (ecx1 & ECX1_OSXSAVE)
		xcr0 = read_xcr0();
	ymm_saved = (ecx1 & ECX1_AVX) && (xcr0 & XCR0_YMM) == XCR0_YMM;
	zmm_saved = ymm_saved && (xcr0 & XCR0_ZMM) == XCR0_ZMM;

	if (ecx1 & ECX1_SSE41)
		have |= HAVE_SSE41;
	if (ymm_saved && (ebx7 & EBX7_AVX2))
		have |= HAVE_AVX2;
	if (zmm_saved && (ebx7 & EBX7_AVX512F) && (ebx7 & EBX7_AVX512BW) &&
	    (ebx7 & EBX7_AVX512VL))
		have |= HAVE_AVX512;
	if ((ecx7 & ECX7_MOVDIR64B) && (ecx1 & ECX1_SSE41))
		have |= HAVE_MOVDIR64B;
	return have;
}

/* Probing is idempotent, so racing first callers just probe twice. */
static unsigned features(void)
{
	static unsigned cached;
	unsigned have = __atomic_load_n(&cached, __ATOMIC_RELAXED);

	if (!have) {
		have = probe();
		__atomic_store_n(&cached, have, __ATOMIC_RELAXED);
	}
	return have;
}

int gdr_cpu_has_sse41(void)
{
	return !!(features() & HAVE_SSE41);
}

int gdr_cpu_has_avx2(void)
{
	return !!(features() & HAVE_AVX2);
}

int gdr_cpu_has_avx512(void)
{
	return !!(features() & HAVE_AVX512);
}

int gdr_cpu_has_movdir64b(void)
{
	return !!(features() & HAVE_MOVDIR64B);
}
