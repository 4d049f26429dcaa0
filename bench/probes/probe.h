/* SPDX-License-Identifier: MIT */
/*
 * What the CUDA probes share: a CUDA call that must succeed, the start
 * on GPU 0's primary context, a microsecond clock, and the p50 and
 * minimum of each method's timings.
 * Each probe builds with one cc command; this header sits beside them.
 */
#ifndef GDRMAP_PROBE_H
#define GDRMAP_PROBE_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MUST(call)							\
	do {								\
		CUresult r_ = (call);					\
		if (r_ != CUDA_SUCCESS) {				\
			fprintf(stderr, "%s:%d: %s = %d\n", __FILE__,	\
				__LINE__, #call, r_);			\
			exit(1);					\
		}							\
	} while (0)

static inline double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* GPU 0's primary context made current; its name and the driver's
 * CUDA version for the report's first line. */
static inline void probe_cuda_start(char *name, int len, int *drv)
{
	CUcontext ctx;
	CUdevice dev;

	MUST(cuInit(0));
	MUST(cuDeviceGet(&dev, 0));
	MUST(cuDevicePrimaryCtxRetain(&ctx, dev));
	MUST(cuCtxSetCurrent(ctx));
	MUST(cuDeviceGetName(name, len, dev));
	MUST(cuDriverGetVersion(drv));
}

static inline int probe_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The rest of a report line: per method m, "name p50 (min)" of its
 * rounds timings at t[m * rounds], with decimals digits.  Sorts them.
 */
static inline void probe_print(double *t, int rounds, int methods,
			       const char *const *names, int decimals)
{
	for (int m = 0; m < methods; m++) {
		double *v = t + m * rounds;

		qsort(v, rounds, sizeof(double), probe_cmp);
		printf("  %s %.*f (%.*f)", names[m], decimals, v[rounds / 2],
		       decimals, v[0]);
	}
	printf("\n");
	fflush(stdout);
}

#endif /* GDRMAP_PROBE_H */
