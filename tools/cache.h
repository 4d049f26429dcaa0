/* SPDX-License-Identifier: MIT */
/*
 * Evict host memory from the CPU caches, for copylat --cold: what a copy
 * costs when its host buffer was last touched long ago.
 */
#ifndef GDRMAP_TOOLS_CACHE_H
#define GDRMAP_TOOLS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true where flush_range can evict (x86-64, arm64). */
static inline bool flush_supported(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return true;
#else
	return false;
#endif
}

static inline void flush_range(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)63, end = (uintptr_t)p + n;

	for (; a < end; a += 64) {
#if defined(__x86_64__)
		__builtin_ia32_clflush((const void *)a);
#elif defined(__aarch64__)
		__asm__ volatile("dc civac, %0" : : "r"(a) : "memory");
#endif
	}
#if defined(__x86_64__)
	__builtin_ia32_mfence();
#elif defined(__aarch64__)
	__asm__ volatile("dsb ish" : : : "memory");
#endif
}

#endif /* GDRMAP_TOOLS_CACHE_H */
