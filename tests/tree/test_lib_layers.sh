#!/bin/sh
# The library's folders are layers (docs/layout.md) and its includes never
# point up one: a file of lib/ includes headers of its own folder by bare
# name, and those of a lower layer by folder ("base/log.h", lib/ being on
# the include path), never those of its own layer's other folders or of a
# higher layer.  Every source file of lib/ lives in one of the folders,
# and docs/layout.md names each ("name.c, .h" names both).
# Exit 0 pass, 1 fail.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"

# The layers, lowest first: base, isa and diag use nothing of lib/ outside
# themselves; backends use those; paths use those but not the backends;
# api, the exported functions, may use them all.
layer() {
	case $1 in
	base | isa | diag) echo 0 ;;
	backends) echo 1 ;;
	paths) echo 2 ;;
	api) echo 3 ;;
	*) echo none ;;
	esac
}

files=$(git ls-files lib 2>/dev/null | grep -E '\.(c|h|mk)$') || true
[ -n "$files" ] || files=$(find lib -name '*.[ch]' -o -name '*.mk' | sort)
include_re='^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*'
passed=0 failed=0
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

for f in $files; do
	[ "$f" = lib/lib.mk ] && continue
	name=${f##*/}
	re=$(echo "$name" | sed 's/\./\\./g')
	pair=$(echo "${name%.h}" | sed 's/\./\\./g')'\.c, \.h'
	if ! grep -qE -e "(^| )$re(,| |\$)" -e "(^| )$pair" docs/layout.md; then
		fail "docs/layout.md does not name $f: give it a line there"
		continue
	fi
	case $f in *.mk) passed=$((passed + 1)); continue ;; esac
	dir=${f#lib/}
	dir=${dir%%/*}
	mine=$(layer "$dir")
	if [ "$mine" = none ] || [ "$f" = "lib/$dir" ]; then
		fail "$f is in no layer folder of lib/ (docs/layout.md lists them)"
		continue
	fi
	bad=0
	for inc in $(sed -n "s/$include_re/\\1/p" "$f"); do
		case $inc in
		*/*)
			to=${inc%%/*}
			theirs=$(layer "$to")
			[ "$theirs" = none ] && continue	# uapi/, not lib/
			if [ "$to" = "$dir" ]; then
				fail "$f includes \"$inc\": a header of its own folder goes by its bare name"
				bad=1
			elif [ "$theirs" -ge "$mine" ]; then
				fail "$f ($dir, layer $mine) includes \"$inc\" ($to, layer $theirs): a lower layer only"
				bad=1
			fi
			;;
		*)
			# Bare: its own folder's, or include/'s and common/'s.
			[ -f "lib/$dir/$inc" ] && continue
			if ls lib/*/"$inc" >/dev/null 2>&1; then
				fail "$f includes \"$inc\" bare, a header of another folder of lib/: name the folder"
				bad=1
			fi
			;;
		esac
	done
	[ $bad = 0 ] && passed=$((passed + 1))
done
echo "$passed passed, $failed failed"
[ $failed = 0 ]
