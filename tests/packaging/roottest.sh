# shellcheck shell=sh disable=SC2154
# Sourced by the root-only tests that run in the Debian 12 root file
# system of packaging/rootfs.sh, after `top=` (the tree) and `name=` (the
# test's, for its work directory's name), with the test's own arguments
# still in "$@" (sh's `.` passes none of its own).  Skips (77) when
# not root; makes the work directory $work, removed at exit unless the
# test was given -k, with that root file system unpacked in $root; gives
# step, ok, bad, expect and die, the passed and failed counters, and
# make_root DIR [rootfs.sh options] for more root file systems.
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (chroot, dpkg in the root file system)"; exit 77; }
keep=0
[ "${1:-}" = -k ] && keep=1
work=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-$name.XXXXXX")
root=$work/root
cleanup() {
	rc=$?
	if [ $keep = 1 ]; then echo "work directory: $work"; else rm -rf "$work"; fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
expect() { what=$1; shift; if "$@"; then ok; else bad "$what"; fi; }
die() { echo "FAIL: $*" >&2; exit 1; }

make_root() {
	_dir=$1
	shift
	mkdir -p "$_dir"
	rootfs_rc=0
	"$top/packaging/rootfs.sh" "$@" "$_dir" >"$work/rootfs.out" 2>&1 || rootfs_rc=$?
	if [ $rootfs_rc != 0 ]; then
		cat "$work/rootfs.out"
		[ $rootfs_rc = 77 ] && exit 77
		die "packaging/rootfs.sh $*"
	fi
}
# A test that needs no container root sets roottest_own_roots=1 first.
[ "${roottest_own_roots:-0}" = 1 ] || make_root "$root"
