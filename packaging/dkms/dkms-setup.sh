#!/bin/sh
# Register gdrmap's gdrdrv with DKMS and build it for every installed
# kernel that has headers, or take it out of DKMS again.  Used by
# `make install-dkms`, the Debian package's postinst/prerm and the rpm's
# scriptlets.
#
#   dkms-setup.sh add VERSION      exit 0 even if a build failed (it says so)
#   dkms-setup.sh remove VERSION
#
# Kernels installed later get the module from DKMS's own kernel hook
# (AUTOINSTALL=yes); kernels whose headers arrive later: `dkms autoinstall`.
set -eu
name=gdrdrv
usage() { echo "usage: $0 add|remove VERSION" >&2; exit 2; }
[ $# = 2 ] || usage
ver=$2

registered() { [ -n "$(dkms status -m $name -v "$ver" 2>/dev/null)" ]; }

case $1 in
add)
	registered || dkms add -m $name -v "$ver" >/dev/null
	built=0 failed=0
	for dir in /lib/modules/*/; do
		k=$(basename "$dir")
		[ -f "$dir/build/Makefile" ] || continue
		if dkms install -m $name -v "$ver" -k "$k" >/dev/null 2>&1; then
			echo "gdrdrv $ver: built and installed for kernel $k"
			built=$((built + 1))
		else
			echo "gdrdrv $ver: WARNING: the build for kernel $k failed;" \
				"see /var/lib/dkms/$name/$ver/build/make.log" >&2
			failed=$((failed + 1))
		fi
	done
	if [ $built = 0 ] && [ $failed = 0 ]; then
		echo "gdrdrv $ver: no kernel with headers installed; install them" \
			"(e.g. apt-get install linux-headers-$(uname -r)) and run" \
			"'dkms autoinstall'"
	fi
	;;
remove)
	if registered && ! dkms remove -m $name -v "$ver" --all >/dev/null 2>&1; then
		echo "gdrdrv $ver: WARNING: dkms remove -m $name -v $ver --all failed" >&2
	fi
	rmdir /var/lib/dkms/$name 2>/dev/null || true
	;;
*) usage ;;
esac
exit 0
