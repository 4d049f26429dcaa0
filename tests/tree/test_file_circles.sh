#!/bin/sh
# No two source files of the library, of the gdrmap command or of the
# simulated GPU's CUDA library call each other in a loop, directly or
# through others: a file's functions may call another file's only where
# that file does not, through any chain, call the first one's.  The calls
# are read from the objects the build made, by the tree's one checker,
# scripts/file-graph.sh, with the rule it applies to gdrdrv and nvsim at
# every build (calls count, data does not); a call through a header's
# inline function counts where it is made.
#
# Each group of objects linked together is checked on its own; the build
# directory is $GDRMAP_BUILD (default build/).  Exit 0 pass, 1 fail, 77
# skip (no nm).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${GDRMAP_BUILD:-$top/build}
command -v nm >/dev/null || { echo "SKIP: nm is missing (apt-get install binutils)"; exit 77; }
passed=0 failed=0

# group NAME DIR...: the objects under these directories of the build.
group() {
	name=$1
	shift
	objs=$(for d in "$@"; do
		[ ! -d "$build/$d" ] || find "$build/$d" -name '*.o'
	done | sort)
	if [ -z "$objs" ]; then
		echo "no objects of $name in $build: build it first"
		failed=$((failed + 1))
		return
	fi
	# shellcheck disable=SC2086
	if out=$("$top/scripts/file-graph.sh" -q $objs 2>&1); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $name: files that call each other in a loop (scripts/file-graph.sh prints who calls what):"
		echo "$out" | sed 's/^/    /'
	fi
}

group "the library (lib/, common/)" lib common
group "the gdrmap command (tools/)" tools
group "the simulated GPU's CUDA (sim/libcuda/)" sim/libcuda
echo "$passed passed, $failed failed"
[ $failed = 0 ]
