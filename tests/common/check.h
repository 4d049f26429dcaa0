/* SPDX-License-Identifier: MIT */
/*
 * Minimal test helpers shared by every gdrmap test program.
 *
 * A test counts checks with CHECK(); test_done() prints the closing line
 * "N passed, N failed[, N skipped]" and returns the exit status the runner
 * expects: 0 pass, 1 fail, 77 skip (nothing ran and something was skipped).
 */
#ifndef GDRMAP_TEST_CHECK_H
#define GDRMAP_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static unsigned long check_passed, check_failed, check_skipped;

#define CHECK(cond, ...)						\
	do {								\
		if (cond) {						\
			check_passed++;					\
		} else {						\
			check_failed++;					\
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,	\
				__LINE__, #cond);			\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
		}							\
	} while (0)

/* CHECK that a gdr_* call returned the expected code. */
#define CHECK_RET(expr, want)						\
	do {								\
		int check_ret_ = (expr);				\
		CHECK(check_ret_ == (want), "%s returned %d, want %d",	\
		      #expr, check_ret_, (int)(want));			\
	} while (0)

#define SKIP(...)							\
	do {								\
		check_skipped++;					\
		fprintf(stderr, "SKIP: ");				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
	} while (0)

static inline int test_done(void)
{
	if (check_skipped)
		printf("%lu passed, %lu failed, %lu skipped\n", check_passed,
		       check_failed, check_skipped);
	else
		printf("%lu passed, %lu failed\n", check_passed, check_failed);
	fflush(stdout);
	if (check_failed)
		return 1;
	if (!check_passed && check_skipped)
		return 77;
	return 0;
}

#endif /* GDRMAP_TEST_CHECK_H */
