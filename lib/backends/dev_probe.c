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
		a->err = p->try_device(dev, a->why, sizeof(a->why));
		a->done = 1;
	}
	err = a->err;
	if (err)
		snprintf(why, why_len, "%s", a->why);
	pthread_mutex_unlock(&p->lock);
	return err;
}
