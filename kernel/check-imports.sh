#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Fail when a module imports a GPL-only kernel export.  A module that uses
# symbols of the proprietary nvidia.ko inherits its taint, and the kernel
# then refuses it every GPL-only symbol at load time ("Unknown symbol ...
# (err -2)"), which no build would notice: the proprietary flavour of
# gdrdrv is checked with this after every build (kernel.mk, the DKMS tree).
#
# usage: check-imports.sh MODULE.ko KERNEL_MODULE_SYMVERS
set -eu
[ $# = 2 ] || { echo "usage: $0 MODULE.ko Module.symvers" >&2; exit 2; }
ko=$1 symvers=$2
name=$(basename "$ko" .ko)
[ -f "$symvers" ] || {
	echo "$name: no $symvers: cannot check the module's imports against the kernel's exports" >&2
	exit 1
}
# nm, or the one of a toolchain without plain binutils (Debian's gcc-N-for-host).
nm=${NM:-$(command -v nm || command -v "$(uname -m)-linux-gnu-nm" || echo nm)}
undefined=$($nm -u "$ko") || {
	echo "$name: cannot list the imports of $ko (set NM to binutils' nm)" >&2
	exit 1
}
undefined=$(echo "$undefined" | awk '{ print $2 }')

# Module.symvers: CRC, symbol, module, export type[, namespace], tab-separated.
gpl=$(echo "$undefined" | awk -F '\t' 'NR == FNR { if ($4 ~ /GPL/) gpl[$2] = $3; next }
	($1 in gpl) { print "    " $1 " (" gpl[$1] ")" }' "$symvers" -)
if [ -n "$gpl" ]; then
	echo "$name: $ko imports GPL-only kernel exports, which a module linked to the" >&2
	echo "proprietary nvidia.ko may not use (it would not load):" >&2
	echo "$gpl" >&2
	echo "Give it a stand-in in kernel/gdrdrv/compat.h (for the proprietary flavour)." >&2
	exit 1
fi
echo "$name: $(echo "$undefined" | wc -l) imports, none of them GPL-only"
