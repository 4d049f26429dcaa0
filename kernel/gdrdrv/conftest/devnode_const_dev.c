// SPDX-License-Identifier: GPL-2.0 OR MIT
/* struct class's devnode() takes a const struct device (6.2). */
#include <linux/device.h>

static char *conftest_devnode(const struct device *dev, umode_t *mode)
{
	return NULL;
}

void conftest(struct class *class);
void conftest(struct class *class)
{
	class->devnode = conftest_devnode;
}
