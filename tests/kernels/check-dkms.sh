#!/bin/sh
# The gdrmap-dkms package on kernels of other Debian suites: in a chroot of
# each kernel's suite (an overlay of the cached one, thrown away after), as
# a user would: apt-get install the kernel's headers and gdrmap-dkms (built
# from this tree by packaging/build-debs.sh); DKMS must build gdrdrv for the
# kernel and install it, and purging the package must take it out again.
#
# usage: check-dkms.sh [-a ARCH] [-s SUMMARY_FILE] NAME...
# Environment: O (build directory), GDRMAP_VM_CACHE.  Exit 0 when all pass.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kl_prog=check-dkms
. "$top/tests/kernels/matrix.sh"
usage() { kl_die "usage: $0 [-a ARCH] [-s SUMMARY_FILE] NAME..."; }

arch=$kl_host_arch summary=
while getopts "a:s:" opt; do
	case $opt in
	a) arch=$OPTARG ;;
	s) summary=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
cd "$top"
O=${O:-build}
export O
work=$(kl_abs_o)/kernel/dkms
pass=0 fail=0
echo "== gdrmap-dkms in chroots of other suites ($*)"

# fail_all WHY: every kernel counts as failed.
fail_all() {
	echo "FAIL gdrmap-dkms on every kernel: $1"
	[ -z "$summary" ] || echo "0 $nkernels 0" >>"$summary"
	exit 1
}

nkernels=$#
if [ "$(id -u)" != 0 ]; then
	echo "SKIP gdrmap-dkms in chroots: needs root (chroots, apt-get, dkms)"
	[ -z "$summary" ] || echo "0 0 $nkernels" >>"$summary"
	exit 0
fi
rm -rf "$work"
mkdir -p "$work/debs"
t=$(date +%s)
if ! "$top/packaging/build-debs.sh" "$work/debs" >"$work/build-debs.log" 2>&1; then
	tail -n 20 "$work/build-debs.log" | sed 's/^/    /'
	fail_all "packaging/build-debs.sh failed (log: $work/build-debs.log)"
fi
deb=$(ls "$work"/debs/gdrmap-dkms_*_all.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || fail_all "build-debs.sh made no gdrmap-dkms package"
echo "   (packages built in $(($(date +%s) - t))s)"

# The test, run in the overlay: $1 kernel release, $2.. the local .debs.
# shellcheck disable=SC2016
in_chroot='
set -eu
kver=$1; shift
apt-get install -y -q --no-install-recommends "$@" >/tmp/install.log 2>&1 ||
	{ tail -n 30 /tmp/install.log; echo "FAIL: apt-get install of the headers and gdrmap-dkms"; exit 1; }
ver=$(dpkg-query -W -f="\${Version}" gdrmap-dkms); ver=${ver%-*}
dkms status -m gdrdrv -v "$ver" -k "$kver" | grep -q ": installed" || {
	dkms status -m gdrdrv
	tail -n 40 /var/lib/dkms/gdrdrv/$ver/build/make.log 2>/dev/null
	echo "FAIL: DKMS did not build and install gdrdrv $ver for $kver"; exit 1; }
ko=$(find /lib/modules/$kver/updates/dkms /usr/lib/modules/$kver/updates/dkms \
	-name "gdrdrv.ko*" 2>/dev/null | head -n 1)
[ -n "$ko" ] || { echo "FAIL: no gdrdrv.ko in /lib/modules/$kver/updates/dkms"; exit 1; }
vermagic=$(modinfo -F vermagic "$ko")
[ "${vermagic%% *}" = "$kver" ] || { echo "FAIL: $ko is built for ${vermagic%% *}"; exit 1; }
echo "    $ko"
apt-get purge -y -q gdrmap-dkms >/tmp/purge.log 2>&1 ||
	{ tail -n 20 /tmp/purge.log; echo "FAIL: apt-get purge gdrmap-dkms"; exit 1; }
[ -z "$(dkms status -m gdrdrv)" ] && [ ! -e "$ko" ] ||
	{ echo "FAIL: DKMS still has gdrdrv after the purge"; exit 1; }
'

for n in "$@"; do
	t=$(date +%s)
	log=$work/$n.log
	kvars=$("$top/tests/kernels/kernel.sh" -a "$arch" fetch "$n" 2>"$log") || {
		echo "FAIL gdrmap-dkms on $n: its kernel could not be fetched"
		sed 's/^/    /' "$log" | tail -n 20
		fail=$((fail + 1))
		continue
	}
	eval "$kvars"
	kl_kernel "$n" "$arch"
	root=$(kl_chroot_of "$k_ctx")
	[ -n "$root" ] || kl_die "$n builds on the host: no chroot to install gdrmap-dkms in"
	# dkms itself is kept in the cached chroot (fetched once).
	kl_locked "ctx-$k_ctx" kl_toolchain "$k_ctx" dkms >>"$log" 2>&1 || {
		echo "FAIL gdrmap-dkms on $n: dkms could not be installed in its chroot"
		tail -n 20 "$log" | sed 's/^/    /'
		fail=$((fail + 1))
		continue
	}
	# The kernel's own packages, as fetch left them, and gdrmap-dkms.
	debs=
	for p in $KPKGS; do
		d=$(kl_deb_of "$k_ctx" "$p")
		debs="$debs /var/cache/gdrmap-debs/${d##*/}"
	done
	cp "$deb" "$root/var/cache/gdrmap-debs/"
	ov=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-dkms.XXXXXX")
	# shellcheck disable=SC2086
	if KL_OVERLAY=$ov kl_in_chroot "$root" sh -c "$in_chroot" sh "$KVER" $debs \
		"/var/cache/gdrmap-debs/${deb##*/}" >>"$log" 2>&1; then
		echo "PASS gdrmap-dkms on $n: DKMS built and installed gdrdrv for $KVER, purge removed it ($(($(date +%s) - t))s)"
		pass=$((pass + 1))
	else
		echo "FAIL gdrmap-dkms on $n ($KVER; log: $log)"
		if grep -q FAIL "$log"; then
			grep -A30 -m1 FAIL "$log" | sed 's/^/    /'
		else
			tail -n 30 "$log" | sed 's/^/    /'
		fi
		fail=$((fail + 1))
	fi
	rm -f "$root/var/cache/gdrmap-debs/${deb##*/}"
	rm -rf "$ov"
done
[ -z "$summary" ] || echo "$pass $fail 0" >>"$summary"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
