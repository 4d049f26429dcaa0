#!/bin/sh
# Make sure the Debian packages a command of the README needs are
# installed:
#   scripts/deps.sh             what `make check-all` needs (CI)
#   scripts/deps.sh --check     what `make check` needs
#   scripts/deps.sh --demo      what `make demo` needs to build;
#   scripts/deps.sh --demo-vm   ... and to boot the VM
#   scripts/deps.sh PKG...      those packages (tests/packaging/test-deps.sh)
# With --list it prints the packages and stops.
# As root it installs what is missing (apt-get); otherwise it names the
# missing packages, prints the command that installs them, and fails.
# The kernel images (and headers) booted in the VM are not installed:
# tests/vm fetches them into its own cache.
set -u

# make check: compilers (gcc, clang and its libFuzzer runtime, the arm64
# cross compiler and qemu-user to run its tests); the Vulkan header the
# ABI test compares with; plots; the man pages' and the rpm spec's
# checkers, pkg-config for make install's test; the Python package's tests
# (python3, its headers for the compiled flag helper, venv + pip to install
# it offline, NumPy buffers).
check_pkgs="make gcc g++ clang libclang-rt-14-dev binutils gcc-aarch64-linux-gnu
	libc6-dev-arm64-cross qemu-user libvulkan-dev gnuplot-nox pkgconf man-db
	groff-base rpm python3 python3-dev python3-venv python3-pip python3-numpy"
# make check-all adds: the VM tests (QEMU for x86-64 and arm64, busybox,
# what Debian's prebuilt kbuild tools and the 6.12 BTF step need; the arm64
# guest's busybox is Debian's arm64 .deb, fetched by tests/vm, never
# installed); building and installing the packages and the DKMS module,
# and the Debian root file systems the container, newcomer and newer-glibc
# tests use (mmdebstrap, also for the chroots of the kernel matrix's other
# suites); the kernel headers gdrdrv is built against (Debian 12's 6.1 and
# 6.12; the VM tests fetch their own); the Python package's Debian
# packaging (dh-python, pybuild, the headers of every Python version).
all_pkgs="$check_pkgs
	qemu-system-x86 qemu-system-arm busybox-static cpio gzip kmod apt dpkg dpkg-dev
	libc-bin libelf1 libssl3 pahole debhelper dkms mmdebstrap
	linux-headers-amd64 linux-headers-6.12-amd64
	dh-python pybuild-plugin-pyproject python3-all python3-all-dev"

list=
pkgs=$all_pkgs what="make check-all"
while [ $# -gt 0 ]; do
	case $1 in
	--list) list=1 ;;
	--check) pkgs=$check_pkgs what="make check" ;;
	# make demo, subsets of the above: --demo builds the library and the
	# command; --demo-vm runs them on the simulated GPU (QEMU, busybox,
	# and what Debian's kernel headers build the VM's modules with).
	--demo) pkgs="make gcc libc6-dev binutils" what="make demo" ;;
	--demo-vm)
		pkgs="qemu-system-x86 busybox-static cpio gzip kmod apt dpkg libelf1 libssl3 pahole"
		# The VM boots Debian 12's kernel: elsewhere (Ubuntu, another
		# Debian release) its modules build in a Debian 12 chroot, made
		# with mmdebstrap (whose hooks use dpkg-architecture) and
		# Debian's keys.
		codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
		[ "$codename" = bookworm ] ||
			pkgs="$pkgs mmdebstrap debian-archive-keyring dpkg-dev"
		what="make demo's VM" ;;
	-*) echo "usage: $0 [--list] [--check | --demo | --demo-vm | PKG...]" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# = 0 ] || pkgs="$*" what="scripts/deps.sh $*"
if [ -n "$list" ]; then
	echo $pkgs
	exit 0
fi

find_missing() {
	missing=
	for p in $pkgs; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || missing="$missing $p"
	done
}
find_missing
[ -z "$missing" ] && exit 0

# A dpkg run that was cut short (a machine image saved or a session
# killed while a maintainer script ran) leaves packages half-configured
# or with triggers pending and its journal in updates/: they count as
# missing above, and apt-get refuses every install until `dpkg
# --configure -a` has finished that work.
admindir=$(dpkg --print-admindir 2>/dev/null || echo /var/lib/dpkg)
interrupted=
[ -z "$(dpkg --audit 2>/dev/null)" ] || interrupted=1
for f in "$admindir"/updates/[0-9]*; do
	[ -e "$f" ] && interrupted=1
done

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
	echo "$what needs these packages:$missing" >&2
	[ -n "$interrupted" ] &&
		echo "dpkg was interrupted before; finish its work first with: sudo dpkg --configure -a" >&2
	echo "install them with: sudo apt-get install$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive

if [ -n "$interrupted" ]; then
	echo "dpkg was interrupted before; finishing its work: dpkg --configure -a"
	log=$(mktemp "${TMPDIR:-/tmp}/gdrmap-dpkg.XXXXXX")
	if ! dpkg --configure -a --force-confdef --force-confold >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		echo "dpkg --configure -a failed (above): repair the package it names, then run make check again" >&2
		exit 1
	fi
	rm -f "$log"
	find_missing
	[ -z "$missing" ] && exit 0
fi

echo "installing what $what needs (scripts/deps.sh):$missing"
apt-get update -qq &&
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
	{ echo "apt-get install$missing failed" >&2; exit 1; }
