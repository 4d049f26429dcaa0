# The kernel matrix's shell functions (sourced; tests/kernels/README.md).
# This file reads kernels.conf and sets what every part shares; it sources
# the three parts, one job each:
#   context.sh  the apt contexts: private apt lists on the host, or a
#               chroot of another Debian suite (mmdebstrap), kept fresh,
#               and commands run in them (the compilers installed there);
#   resolve.sh  the newest kernel of an entry whose packages are all there;
#   fetch.sh    downloading and unpacking them into the cache, once.
#
# The caller sets `top` (the tree) and `kl_prog` (its name, for messages);
# GDRMAP_VM_CACHE moves the cache (default ~/.cache/gdrmap-vm).  Nothing of
# the host's apt configuration, /boot or /lib/modules is changed; only a
# kernel whose suite is the host's own may install its compiler on the host
# (as scripts/deps.sh does).
#
# The state the functions share, by who sets it:
#   k_name k_arch k_flavour k_ctx k_series k_vm   the entry (kl_kernel)
#   KL_IMAGE                the caller: 1 to resolve and fetch the image too
#   kver kdebver kpkgs kimage ktools   what it resolves to (kl_resolve)
#   kdir kroot vmlinuz kchroot kcc kpage   where it is, unpacked (kl_fetch)

kl_die() { echo "${kl_prog:-kernels}: $*" >&2; exit 1; }
kl_t0=$(date +%s)
kl_say() { echo "${kl_prog:-kernels}: [$(($(date +%s) - kl_t0))s] $*" >&2; }

kl_conf=$top/tests/kernels/kernels.conf
kl_cache=${GDRMAP_VM_CACHE:-${HOME:-/tmp}/.cache/gdrmap-vm}
# Lists updated less than this many seconds ago are used as they are: one
# update per `make check-all`, so "newest" is resolved on every run.
kl_lists_max_age=${GDRMAP_APT_MAX_AGE:-1800}
kl_host_arch=$(dpkg --print-architecture 2>/dev/null) ||
	kl_die "dpkg not found: this needs a Debian host"
kl_host_suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
export LC_ALL=C DEBIAN_FRONTEND=noninteractive

# kl_kernel NAME ARCH: the entry's fields as k_name k_arch k_flavour k_ctx
# k_series k_vm; fails when kernels.conf has no such kernel.
kl_kernel() {
	# shellcheck disable=SC2046
	set -- $(awk -v n="$1" -v a="$2" '$1 == "kernel" && $2 == n && $3 == a {
		print $2, $3, $4, $5, $6, $7; exit }' "$kl_conf")
	[ $# = 6 ] || return 1
	k_name=$1 k_arch=$2 k_flavour=$3 k_ctx=$4 k_series=$5 k_vm=$6
}

# kl_names ARCH [VM...]: the kernel names of ARCH (whose VM field is one of VM).
kl_names() {
	awk -v a="$1" -v vm=" ${2:-} ${3:-} ${4:-} " '$1 == "kernel" && $3 == a &&
		(vm ~ /^ *$/ || index(vm, " " $7 " ")) { print $2 }' "$kl_conf"
}

kl_suites() {
	awk -v c="$1" '$1 == "context" && $2 == c { $1 = $2 = ""; print; exit }' "$kl_conf"
}

# The CPU page size of a kernel config: 4K, 16K or 64K.
kl_page_size() {
	_s=$(sed -n 's/^CONFIG_PAGE_SHIFT=//p' "$1" 2>/dev/null)
	if [ -z "$_s" ]; then
		if grep -q '^CONFIG_ARM64_64K_PAGES=y' "$1" 2>/dev/null; then _s=16
		elif grep -q '^CONFIG_ARM64_16K_PAGES=y' "$1" 2>/dev/null; then _s=14
		else _s=12
		fi
	fi
	echo "$(( (1 << _s) / 1024 ))K"
}

. "$top/tests/kernels/context.sh"
. "$top/tests/kernels/resolve.sh"
. "$top/tests/kernels/fetch.sh"
