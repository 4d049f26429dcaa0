// SPDX-License-Identifier: MIT
/*
 * Every routine set this CPU supports, both directions: every size 0..1024
 * at every source and destination offset 0..63 from a 64-byte line, then a
 * few random sizes up to 64 MiB at random offsets.  The destination is
 * poisoned with bytes no source byte can equal, so every byte it should
 * get is checked, and 64 guard bytes either side must stay poisoned.
 * One check per copy.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "isa/copy.h"

#define MAX_SMALL	1024
#define OFFSETS		64
#define GUARD		64
#define MAX_LARGE	(64UL << 20)
#define LARGE_CASES	3
#define LARGE_OFFSETS	4096
#define FAILS_SHOWN	10

enum dir { TO_MAPPING, FROM_MAPPING };

static const char *const dir_name[] = { "to_mapping", "from_mapping" };

static uint64_t rng_state;

static uint64_t rng(void)
{
	/* xorshift64*: enough randomness for data and sizes */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* Sources are 0x01..0x7f, poison 0x80..0xff: a byte left poisoned or
 * taken from the wrong place cannot pass for the right one. */
static void fill_source(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = 1 + rng() % 0x7f;
}

static void fill_poison(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = 0x80 | ((i * 0x9d) & 0x7f);
}

static void *alloc_or_die(size_t n)
{
	void *p = aligned_alloc(4096, (n + 4095) & ~4095UL);

	if (!p) {
		fprintf(stderr, "out of memory (%zu bytes)\n", n);
		exit(1);
	}
	return p;
}

static unsigned long fails_in_set;

static void record(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		check_passed++;
		return;
	}
	check_failed++;
	if (fails_in_set++ >= FAILS_SHOWN)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "FAIL ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Where the first difference is, for the failure message. */
static long first_diff(const unsigned char *a, const unsigned char *b,
		       size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

/*
 * One copy: `dst` lies GUARD bytes or more inside `dst_buf`, which matches
 * `poison` byte for byte; afterwards [dst, dst + n) must equal src and the
 * guards must still match poison.  Restores the poison it disturbed.
 */
static void one_copy(const struct gdr_copy_impl *impl, enum dir dir,
		     unsigned char *dst_buf, const unsigned char *poison,
		     unsigned char *dst, const unsigned char *src, size_t n,
		     size_t src_off, size_t dst_off)
{
	size_t at = (size_t)(dst - dst_buf);
	int range_ok, guards_ok;

	if (dir == TO_MAPPING)
		impl->to_mapping(dst, src, n);
	else
		impl->from_mapping(dst, src, n);
	range_ok = !memcmp(dst, src, n);
	guards_ok = !memcmp(dst - GUARD, poison + at - GUARD, GUARD) &&
		    !memcmp(dst + n, poison + at + n, GUARD);
	record(range_ok && guards_ok,
	       "%s %s size %zu src+%zu dst+%zu: %s (byte %ld)", impl->name,
	       dir_name[dir], n, src_off, dst_off,
	       range_ok ? "wrote outside the range" : "wrong data",
	       range_ok ? first_diff(dst + n, poison + at + n, GUARD) :
			  first_diff(dst, src, n));
	memcpy(dst - GUARD, poison + at - GUARD, n + 2 * GUARD);
}

static void small_sizes(const struct gdr_copy_impl *impl, enum dir dir,
			unsigned char *src_buf, unsigned char *dst_buf,
			const unsigned char *poison)
{
	for (size_t n = 0; n <= MAX_SMALL; n++)
		for (size_t so = 0; so < OFFSETS; so++)
			for (size_t d_o = 0; d_o < OFFSETS; d_o++)
				one_copy(impl, dir, dst_buf, poison,
					 dst_buf + GUARD + d_o,
					 src_buf + GUARD + so, n, so, d_o);
}

static void large_sizes(const struct gdr_copy_impl *impl, enum dir dir,
			unsigned char *src_buf, unsigned char *dst_buf,
			const unsigned char *poison)
{
	for (int i = 0; i < LARGE_CASES; i++) {
		/* the first case is the largest, at the worst offsets */
		size_t n = i ? 1 + rng() % MAX_LARGE : MAX_LARGE;
		size_t so = i ? rng() % LARGE_OFFSETS : 63;
		size_t d_o = i ? rng() % LARGE_OFFSETS : 1;

		one_copy(impl, dir, dst_buf, poison,
			 dst_buf + GUARD + d_o, src_buf + GUARD + so, n, so,
			 d_o);
	}
}

static void test_set(const struct gdr_copy_impl *impl,
		     unsigned char *src_buf, unsigned char *dst_buf,
		     const unsigned char *poison)
{
	if (!impl->supported()) {
		SKIP("%s: not supported by this CPU", impl->name);
		return;
	}
	for (enum dir dir = TO_MAPPING; dir <= FROM_MAPPING; dir++) {
		unsigned long failed_before = check_failed;

		fails_in_set = 0;
		small_sizes(impl, dir, src_buf, dst_buf, poison);
		large_sizes(impl, dir, src_buf, dst_buf, poison);
		if (check_failed > failed_before)
			fprintf(stderr, "%s %s: %lu copies failed\n",
				impl->name, dir_name[dir],
				check_failed - failed_before);
	}
}

int main(void)
{
	size_t len = GUARD + LARGE_OFFSETS + MAX_LARGE + GUARD;
	unsigned char *src_buf = alloc_or_die(len);
	unsigned char *dst_buf = alloc_or_die(len);
	unsigned char *poison = alloc_or_die(len);
	const char *seed = getenv("GDRMAP_TEST_SEED");

	rng_state = seed ? strtoull(seed, NULL, 0) : 0x6764726d6170ULL;
	if (!rng_state)
		rng_state = 1;
	printf("seed 0x%llx (GDRMAP_TEST_SEED)\n",
	       (unsigned long long)rng_state);
	fill_source(src_buf, len);
	fill_poison(poison, len);
	memcpy(dst_buf, poison, len);

	for (size_t i = 0; gdr_copy_impls[i]; i++)
		test_set(gdr_copy_impls[i], src_buf, dst_buf, poison);
	test_set(&gdr_copy_memcpy, src_buf, dst_buf, poison);

	free(src_buf);
	free(dst_buf);
	free(poison);
	return test_done();
}
