// SPDX-License-Identifier: MIT
/*
 * Threaded reads (lib/paths/threads.c) on ordinary memory: every size and
 * source alignment reads exactly the bytes asked, in parts that start on
 * the source's 64-byte lines (no line read by two parts) and cover the
 * range once; many reads in a row, some while the helpers sleep, stay
 * exact; and a thread pinned to one CPU after start still gets helpers
 * on the process's other CPUs.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "paths/threads.h"

#define MAX	(1 << 20)

static atomic_int parts, misaligned;
static atomic_size_t covered;

static void traced_read(void *dst, const void *src, size_t n)
{
	atomic_fetch_add(&parts, 1);
	atomic_fetch_add(&covered, n);
	memcpy(dst, src, n);
}

/* Parts after the first must start on a line. */
static const char *range_start;

static void checked_read(void *dst, const void *src, size_t n)
{
	if ((const char *)src != range_start && ((uintptr_t)src & 63))
		atomic_fetch_add(&misaligned, 1);
	traced_read(dst, src, n);
}

int main(void)
{
	static const size_t sizes[] = { 2048, 2049, 4096, 5000, 65536 + 7,
					300001, MAX - 64 };
	unsigned char *src = malloc(MAX + 64), *dst = malloc(MAX + 128);
	cpu_set_t one;
	size_t i, k, off;
	int helpers, wrong = 0, many = 0;

	if (!src || !dst)
		return 1;
	for (i = 0; i < MAX + 64; i++)
		src[i] = (unsigned char)(i * 7 + 3) | 1;
	/* Pinned to one CPU after start, as a benchmark's thread is. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	helpers = gdr_threads_helpers();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || helpers == 0) {
		CHECK(helpers == 0 || sysconf(_SC_NPROCESSORS_ONLN) >= 2,
		      "helpers on a one-CPU machine");
		SKIP("one CPU: no helper threads to test");
		return test_done();
	}
	CHECK(helpers >= 1 && helpers <= 3,
	      "a thread pinned after start gets 1 to 3 helpers (%d)", helpers);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (off = 0; off < 64; off += 21) {
			atomic_store(&parts, 0);
			atomic_store(&covered, 0);
			atomic_store(&misaligned, 0);
			memset(dst, 0x5a, sizes[i] + 128);
			range_start = (const char *)src + off;
			CHECK_RET(gdr_threads_copy(checked_read, dst + 64,
						   src + off, sizes[i], 0), 0);
			CHECK(!memcmp(dst + 64, src + off, sizes[i]),
			      "%zu at +%zu: the bytes", sizes[i], off);
			for (k = 0; k < 64; k++)
				wrong += dst[k] != 0x5a ||
					 dst[64 + sizes[i] + k] != 0x5a;
			CHECK(atomic_load(&covered) == sizes[i],
			      "%zu at +%zu: parts cover it once (%zu)", sizes[i],
			      off, atomic_load(&covered));
			CHECK(atomic_load(&parts) >= 2 &&
			      atomic_load(&parts) <= helpers + 1,
			      "%zu at +%zu: %d parts for %d helpers", sizes[i],
			      off, atomic_load(&parts), helpers);
			CHECK(atomic_load(&misaligned) == 0,
			      "%zu at +%zu: every later part starts on a line",
			      sizes[i], off);
		}
	CHECK(wrong == 0, "nothing written outside (%d bytes)", wrong);
	/* Reads in a row, and after the helpers went to sleep. */
	for (k = 0; k < 2000; k++) {
		if (k == 1000)
			usleep(300000);
		memset(dst, 0, 8192);
		if (gdr_threads_copy(traced_read, dst, src + (k % 64), 8192, 0) ||
		    memcmp(dst, src + (k % 64), 8192))
			many++;
	}
	CHECK(many == 0, "%d of 2000 reads in a row wrong", many);
	CHECK_RET(gdr_threads_copy(traced_read, dst, src, 100, 0), 0);
	CHECK(!memcmp(dst, src, 100), "a read too small to split");
	free(src);
	free(dst);
	return test_done();
}
