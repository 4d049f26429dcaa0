/* SPDX-License-Identifier: MIT */
/*
 * The simulated GPUs' counters (/proc/driver/nvsim, sim/README.md), for
 * the tests that run beside nvsim.ko: the sums over every GPU, and each
 * GPU's own.
 */
#ifndef GDRMAP_TEST_NVSIM_COUNT_H
#define GDRMAP_TEST_NVSIM_COUNT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The number a /proc file holds, or -1 if it cannot be read. */
static inline long read_count(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* One of nvsim's counters, summed over every GPU, or -1. */
static inline long nvsim_count(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/driver/nvsim/%s", name);
	return read_count(path);
}

/* One of nvsim's counters for simulated GPU dev alone, or -1. */
static inline long nvsim_gpu_count(int dev, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/driver/nvsim/gpu%d/%s", dev, name);
	return read_count(path);
}

/*
 * Resets simulated GPU dev (/proc/driver/nvsim/reset): 0, or -errno
 * (EBUSY while it is in use).
 */
static inline int nvsim_reset(int dev)
{
	FILE *f = fopen("/proc/driver/nvsim/reset", "w");
	int err;

	if (!f)
		return -errno;
	fprintf(f, "%d\n", dev);
	errno = 0;
	err = fclose(f) ? -errno : 0;
	return err;
}

/* A line "name: N" of /proc/driver/nvsim/stats (the sums), or -1. */
static inline long nvsim_stat(const char *name)
{
	FILE *f = fopen("/proc/driver/nvsim/stats", "r");
	char key[64];
	long v, found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63[^:]: %ld\n", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

#endif /* GDRMAP_TEST_NVSIM_COUNT_H */
