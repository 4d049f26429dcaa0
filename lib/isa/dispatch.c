/* SPDX-License-Identifier: MIT */
/*
 * Which routine set serves which mapping: the set for write-combined
 * mappings is chosen once per process, from the CPU's features or from
 * GDRMAP_COPY, and cached; the core then calls through its pointers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy.h"

/*
 * Preferred first.  Measured with these routines through the vulkan
 * backend's BAR1 mapping on the H200 machine (GB/s, 64 MiB writes, 8 MiB
 * reads, median of 9; bench/results/h200/2026-11-21-h200_copy.txt):
 *
 *	set		write	read
 *	avx512		18.75	0.922
 *	avx2		19.02	0.758
 *	movdir64b	19.07	0.660 (SSE4.1 reads)
 *	sse41		18.87	0.661
 *	generic		18.54	0.008 (a round trip per 8-byte word)
 *
 * Writes are all close, so reads decide, and one 64-byte load per line
 * reads fastest.  MOVDIR64B writes no faster than non-temporal vector
 * stores (slower at 1 MiB: 49 against 44 us), so it ranks below AVX2: it
 * is chosen on its own only on a CPU without AVX2, or when forced.
 */
const struct gdr_copy_impl *const gdr_copy_impls[] = {
#if defined(__x86_64__)
	&gdr_copy_avx512,
	&gdr_copy_avx2,
	&gdr_copy_movdir64b,
	&gdr_copy_sse41,
#elif defined(__aarch64__)
	&gdr_copy_neon,
#endif
	&gdr_copy_generic,
	NULL
};

const struct gdr_copy_impl *gdr_copy_find(const char *name)
{
	const struct gdr_copy_impl *const *impl;

	if (!name)
		return NULL;
	for (impl = gdr_copy_impls; *impl; impl++)
		if (!strcmp((*impl)->name, name))
			return *impl;
	return NULL;
}

static const struct gdr_copy_impl *best_supported(void)
{
	const struct gdr_copy_impl *const *impl;

	for (impl = gdr_copy_impls; (*impl)->supported() == 0; impl++)
		;	/* generic, last, is always supported */
	return *impl;
}

/* The core's logger is not ours to depend on: this is the one message the
 * copy engine has, printed on the same condition. */
static void warn_ignored(const char *forced, const char *why,
			 const struct gdr_copy_impl *used)
{
	if (!getenv("GDRCOPY_ENABLE_LOGGING"))
		return;
	fprintf(stderr, "gdrmap: warning: GDRMAP_COPY=%s ignored (%s); "
		"using the %s copy routines\n", forced, why, used->name);
}

const struct gdr_copy_impl *gdr_copy_select(const char *forced)
{
	const struct gdr_copy_impl *best = best_supported();
	const struct gdr_copy_impl *wanted;

	if (!forced || !*forced)
		return best;
	wanted = gdr_copy_find(forced);
	if (!wanted) {
		warn_ignored(forced, "no routine set of that name is built",
			     best);
		return best;
	}
	if (!wanted->supported()) {
		warn_ignored(forced, "this CPU or OS does not support it",
			     best);
		return best;
	}
	return wanted;
}

static const struct gdr_copy_impl *wc_impl;
static pthread_once_t wc_once = PTHREAD_ONCE_INIT;

static void choose_wc(void)
{
	wc_impl = gdr_copy_select(getenv("GDRMAP_COPY"));
}

const struct gdr_copy_impl *gdr_copy_for_type(gdr_mapping_type_t type)
{
	switch (type) {
	case GDR_MAPPING_TYPE_WC:
		pthread_once(&wc_once, choose_wc);
		return wc_impl;
	case GDR_MAPPING_TYPE_CACHING:
		return &gdr_copy_memcpy;
	case GDR_MAPPING_TYPE_DEVICE:
		return &gdr_copy_generic;
	default:
		return NULL;
	}
}
