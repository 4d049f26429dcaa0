/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the simulated GPU's own VM tests (sim/tests/vm_*.c): they run
 * inside the test VM with nvsim.ko loaded, linked with the libcuda shim.
 */
#ifndef GDRMAP_VM_SIM_H
#define GDRMAP_VM_SIM_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "check.h"
#include "cuda_defs.h"
#include "nvsim_ioctl.h"

#define SIM_PAGE (64UL * 1024)
#define SIM_MIB (1024UL * 1024)

/* CHECK, and give up when it fails; cond is evaluated once. */
#define REQUIRE(cond, ...)						\
	do {								\
		unsigned long require_failed_ = check_failed;		\
									\
		CHECK(cond, __VA_ARGS__);				\
		if (check_failed != require_failed_)			\
			exit(test_done());				\
	} while (0)

#define CU_OK(call)							\
	do {								\
		CUresult cu_ok_rc_ = (call);				\
		REQUIRE(cu_ok_rc_ == CUDA_SUCCESS, "%s: CUresult %d",	\
			#call, cu_ok_rc_);				\
	} while (0)

#define CU_IS(call, want)						\
	do {								\
		CUresult cu_is_rc_ = (call);				\
		CHECK(cu_is_rc_ == (want), "%s: CUresult %d, want %d",	\
		      #call, cu_is_rc_, (int)(want));			\
	} while (0)

/* One counter of /proc/driver/nvsim, or -1. */
static inline long sim_count(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/driver/nvsim/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* cuInit and a current primary context; skip the test without nvsim. */
static inline CUcontext sim_cuda_init(void)
{
	static CUcontext ctx;
	CUresult r;

	if (!ctx) {
		r = cuInit(0);
		if (r == CUDA_ERROR_NO_DEVICE) {
			SKIP("no simulated GPU (/dev/nvsim)");
			exit(test_done());
		}
		CU_OK(r);
		CU_OK(cuDevicePrimaryCtxRetain(&ctx, 0));
	}
	CU_OK(cuCtxSetCurrent(ctx));
	return ctx;
}

static inline uint8_t sim_pattern(size_t i, unsigned int seed)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + 0x9e37u;

	return (uint8_t)(x >> 13) | 1;
}

static inline void sim_fill(uint8_t *p, size_t n, size_t first,
			    unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = sim_pattern(first + i, seed);
}

/* First index where p differs from the pattern (starting at first), or -1. */
static inline long sim_mismatch(const uint8_t *p, size_t n, size_t first,
				unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != sim_pattern(first + i, seed))
			return (long)i;
	return -1;
}

#endif /* GDRMAP_VM_SIM_H */
