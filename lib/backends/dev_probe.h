/* SPDX-License-Identifier: MIT */
/*
 * A check a module-free backend makes once per CUDA device per process
 * (dev_probe.c): the whole chain on memory of its own, before it trusts
 * the device with an application's memory.  The first caller for a device
 * runs it; every later one gets its answer, reason included.
 */
#ifndef GDRMAP_DEV_PROBE_H
#define GDRMAP_DEV_PROBE_H

#include <pthread.h>
#include <stddef.h>

#include "base/cuda_api.h"

struct gdr_dev_answer;

struct gdr_dev_probe {
	pthread_mutex_t lock;
	size_t size;
	/* The check on ptr, size bytes of cuMemAlloc memory of device s->dev,
	 * in scope s: 0, or an errno with why filled. */
	int (*try_memory)(struct gdr_cuda_scope *s, CUdeviceptr ptr,
			  char *why, size_t why_len);
	int ndev;
	struct gdr_dev_answer *answers;
};

#define GDR_DEV_PROBE_INIT(size, fn) \
	{ PTHREAD_MUTEX_INITIALIZER, (size), (fn), 0, NULL }

/* The answer for dev (a CUDA ordinal): 0, or an errno with why. */
int gdr_dev_probe(struct gdr_dev_probe *p, int dev, char *why,
		  size_t why_len);

#endif /* GDRMAP_DEV_PROBE_H */
