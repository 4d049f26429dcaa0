#!/bin/sh
# Make sure the Debian packages that `make check` needs are installed.
# As root it installs what is missing (apt-get); otherwise it prints the
# command to run and fails.  Kernel images and headers for the VM tests
# are not installed here: tests/vm fetches them into its own cache.
set -u

pkgs="make gcc g++ clang binutils gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	qemu-system-x86 busybox-static cpio kmod apt libvulkan-dev"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
	echo "make check needs these packages:$missing" >&2
	echo "install them with: sudo apt-get install$missing" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq &&
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	{ echo "apt-get install$missing failed" >&2; exit 1; }
