// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The XArray (4.20), which gdrdrv keeps its regions in. */
#include <linux/xarray.h>

void *conftest(struct xarray *xa);
void *conftest(struct xarray *xa)
{
	return xa_load(xa, 0);
}
