#!/bin/sh
# The one file-circle checker of the tree: the file-to-file call graph of a
# group of objects linked together (a kernel module's, the library's, the
# gdrmap command's, the simulated libcuda's), from their symbol tables:
# file A -> file B when A calls a function B defines.  Prints each edge
# with the functions behind it, then every circle (files that reach one
# another through the edges, directly or around a loop).  Exit 0: no
# circle; 1: a circle; 2: bad usage or an object nm cannot read.
#
# One rule for every group: calls count, data does not.  A module's files
# share its state (gdrdrv's device, lists and module parameters are read
# from every file), which says nothing about which file's functions build
# on which; a loop of calls does, and it is what keeps files from being
# read and changed one at a time.
#
# usage: file-graph.sh [-q] MODULE.mod | OBJECT.o...
#   MODULE.mod  kbuild's list of a module's objects (e.g. nvsim.mod)
#   -q          print the circles only (the builds and tests/tree check so)
# Files are named by their object's name, or by its path where two
# objects share a name.
# Environment: NM (default: nm, or the host toolchain's where plain binutils
# is missing, as in Debian's gcc-N-for-host chroots; any binutils nm reads
# another architecture's symbol tables).
set -eu
usage() { echo "usage: $0 [-q] MODULE.mod | OBJECT.o..." >&2; exit 2; }
quiet=0
while getopts q opt; do
	case $opt in
	q) quiet=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || usage
nm=${NM:-$(command -v nm || command -v "$(uname -m)-linux-gnu-nm" || echo nm)}
case $1 in
*.mod)
	# Newer kbuild names the objects relative to the module's directory.
	dir=$(dirname "$1")
	objs=$(tr ' ' '\n' <"$1" | grep '\.o$' |
		sed "s|^\([^/]\)|$dir/\1|") ;;
*) objs=$* ;;
esac

# "FILE TYPE SYMBOL" lines: T/D/B/R/... defined globally, U undefined.
dups=$(for o in $objs; do basename "$o"; done | sort | uniq -d)
syms=$(for o in $objs; do
	"$nm" -P "$o" >/dev/null || exit 2
	f=$(basename "$o" .o)
	[ -z "$dups" ] || f=${o%.o}
	"$nm" -P "$o" |
		awk -v f="$f" '$2 ~ /^[A-Z]$/ { print f, $2, $1 }'
done) || { echo "$0: cannot read the symbols of $objs" >&2; exit 2; }

echo "$syms" | awk -v quiet=$quiet '
$2 != "U" { def[$3] = $1; kind[$3] = ($2 == "T" || $2 == "W") ? "" : " (data)"
	    file[$1] = 1; next }
	  { use[++n] = $1 " " $3; file[$1] = 1 }
END {
	for (i = 1; i <= n; i++) {
		split(use[i], u, " ")
		to = def[u[2]]
		if (to == "" || to == u[1] || kind[u[2]] != "")
			continue
		e = u[1] " -> " to
		if (!(e in edge))
			order[++ne] = e
		edge[e] = edge[e] " " u[2] kind[u[2]]
		reach[u[1], to] = 1
	}
	nf = 0
	for (f in file)
		names[++nf] = f
	# Sorted, so that two runs compare line by line.
	for (i = 2; i <= nf; i++)
		for (j = i; j > 1 && names[j] < names[j - 1]; j--) {
			t = names[j]; names[j] = names[j - 1]; names[j - 1] = t
		}
	for (i = 2; i <= ne; i++)
		for (j = i; j > 1 && order[j] < order[j - 1]; j--) {
			t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
		}
	for (i = 1; i <= ne && !quiet; i++)
		printf "%s:%s\n", order[i], edge[order[i]]
	# Transitive closure (a few dozen files at most).
	for (k = 1; k <= nf; k++)
		for (i = 1; i <= nf; i++)
			if ((names[i], names[k]) in reach)
				for (j = 1; j <= nf; j++)
					if ((names[k], names[j]) in reach)
						reach[names[i], names[j]] = 1
	circles = 0
	for (i = 1; i <= nf; i++) {
		if (names[i] in seen)
			continue
		c = names[i]
		for (j = i + 1; j <= nf; j++)
			if ((names[i], names[j]) in reach &&
			    (names[j], names[i]) in reach) {
				c = c " " names[j]
				seen[names[j]] = 1
			}
		if (c != names[i]) {
			printf "circle: %s\n", c
			circles++
		}
	}
	if (!circles && !quiet)
		printf "no circle between the %d files\n", nf
	exit circles ? 1 : 0
}'
