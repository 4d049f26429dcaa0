// SPDX-License-Identifier: GPL-2.0 OR MIT
/* struct device_type's devnode() takes a const struct device (6.2). */
#include <linux/device.h>

static char *conftest_devnode(const struct device *dev, umode_t *mode,
			      kuid_t *uid, kgid_t *gid)
{
	return NULL;
}

void conftest(struct device_type *type);
void conftest(struct device_type *type)
{
	type->devnode = conftest_devnode;
}
