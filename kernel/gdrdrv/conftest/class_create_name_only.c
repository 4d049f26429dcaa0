// SPDX-License-Identifier: GPL-2.0 OR MIT
/* class_create() takes the name only (6.4 dropped the owner argument). */
#include <linux/device.h>

struct class *conftest(void);
struct class *conftest(void)
{
	return class_create("conftest");
}
