// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * MODULE_IMPORT_NS() takes the namespace as an identifier (5.4 to 6.12;
 * 6.13 made it a string literal).
 */
#include <linux/module.h>

MODULE_IMPORT_NS(DMA_BUF);
