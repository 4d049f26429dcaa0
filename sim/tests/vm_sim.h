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

#include "cuda_test.h"
#include "nvsim_count.h"
#include "nvsim_ioctl.h"

#define SIM_PAGE (64UL * 1024)
#define SIM_MIB (1024UL * 1024)

#define SIM_PARAM "/sys/module/nvsim/parameters/"

/* A boolean parameter of nvsim: 1, 0, or -1 if it cannot be read. */
static inline int sim_get_param(const char *name)
{
	char path[128], c = 0;
	int fd;

	snprintf(path, sizeof(path), SIM_PARAM "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == 'Y' || c == '1';
}

static inline int sim_set_param(const char *name, int v)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), SIM_PARAM "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = write(fd, v ? "1" : "0", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
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
