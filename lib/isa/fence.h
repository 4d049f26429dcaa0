/* SPDX-License-Identifier: MIT */
/*
 * The two fences every routine set needs, written as the instruction each
 * architecture wants for device memory (no intrinsics, so they build with
 * any file's flags).
 */
#ifndef GDRMAP_COPY_FENCE_H
#define GDRMAP_COPY_FENCE_H

/*
 * Before the first load of a read.  Streaming loads can be served from the
 * CPU's streaming-load buffers, holding data older than a read that already
 * returned (35% of reads of a live counter went backwards without it on
 * the H200: bench/results/h200/2026-11-21-bar1.md); a full fence drains
 * them.  On arm64 the mapping is in the
 * outer-shareable domain, so the barrier is `dmb osh`, not `dmb ish`.
 */
static inline void gdr_fence_before_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("mfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dmb osh" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * After the last store of a write: write-combined and non-temporal stores
 * sit in fill buffers until something drains them; the fence sends them
 * on their way before the call returns, and orders them before any later
 * store (a doorbell or flag, typically).
 */
static inline void gdr_fence_after_write(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("sfence" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("dmb oshst" ::: "memory");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

#endif /* GDRMAP_COPY_FENCE_H */
