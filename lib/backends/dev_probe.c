// SPDX-License-Identifier: MIT
/* Checks made once per CUDA device (dev_probe.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/cuda_api.h"
#include "dev_probe.h"

struct gdr_dev_answer {
	int done;
	int err;
	char why[512];
};

static int try_device(const struct gdr_cuda *cu, struct gdr_dev_probe *p,
		      int dev, char *why, size_t why_len)
{
	struct gdr_cuda_scope s;
	CUdeviceptr ptr = 0;
	CUresult res;
	char msg[160];
	int err;

	res = gdr_cuda_enter(dev, &s);
	if (res != CUDA_SUCCESS) {
		gdr_cuda_scope_error(&s, res, why, why_len);
		return ENODEV;
	}
	res = s.call->MemAlloc(&ptr, p->size);
	if (res != CUDA_SUCCESS) {
		snprintf(why, why_len, "cuMemAlloc on device %d failed: %s",
			 dev, gdr_cuda_error(cu, res, msg, sizeof(msg)));
		err = ENOMEM;
	} else {
		err = p->try_memory(&s, ptr, why, why_len);
		s.call->MemFree(ptr);
	}
	gdr_cuda_leave(&s);
	return err;
}

int gdr_dev_probe(struct gdr_dev_probe *p, int dev, char *why,
		  size_t why_len)
{
	const struct gdr_cuda *cu = gdr_cuda_get(why, why_len);
	struct gdr_dev_answer *a;
	int err;

	if (!cu)
		return ENODEV;
	if (dev < 0 || dev >= cu->device_count) {
		snprintf(why, why_len, "there is no CUDA device %d", dev);
		return ENODEV;
	}
	pthread_mutex_lock(&p->lock);
	if (!p->answers) {
		p->answers = calloc((size_t)cu->device_count,
				    sizeof(*p->answers));
		p->ndev = p->answers ? cu->device_count : 0;
	}
	if (!p->answers) {
		pthread_mutex_unlock(&p->lock);
		snprintf(why, why_len, "out of memory");
		return ENOMEM;
	}
	a = &p->answers[dev];
	if (!a->done) {
		a->why[0] = '\0';
		a->err = try_device(cu, p, dev, a->why, sizeof(a->why));
		a->done = 1;
	}
	err = a->err;
	if (err)
		snprintf(why, why_len, "%s", a->why);
	pthread_mutex_unlock(&p->lock);
	return err;
}
