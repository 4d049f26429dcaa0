// SPDX-License-Identifier: GPL-2.0 OR MIT
/* <linux/math.h> exists (split out of kernel.h after 5.10). */
#include <linux/math.h>

unsigned long conftest(unsigned long x);
unsigned long conftest(unsigned long x)
{
	return round_up(x, 64);
}
