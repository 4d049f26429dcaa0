#!/bin/sh
# The kernel matrix's tables, from the result lines `make check-all`
# collects (tests/kernels/kernels.mk's KERNEL_RESULTS):
#   build NAME ARCH PAGE KVER COMPILER PASS|FAIL      (check-kernels.sh)
#   apis NAME ARCH KVER MACRO...                      (check-kernels.sh)
#   vm NAME ARCH PAGE KVER PASSED FAILED SKIPPED      (run-vm.sh; arm64 too)
#
# usage: report.sh RESULTS          print both tables (markdown)
#        report.sh -o DIR RESULTS   write them to DIR/kernel-matrix.md and
#                                   DIR/kernel-apis.md (make kernel-tables)
#        report.sh -u DIR docs/testing.md kernel/gdrdrv/README.md
#                                   copy DIR's tables between their
#                                   BEGIN/END markers there (make
#                                   update-tables: the only step that
#                                   writes the tree)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "report: $*" >&2; exit 1; }

mode=print out=
case ${1:-} in
-o | -u)
	[ $# -ge 2 ] || die "usage: $0 -o DIR RESULTS | -u DIR docs/testing.md kernel/gdrdrv/README.md"
	[ "$1" = -o ] && mode=write || mode=update
	out=$2
	shift 2 ;;
esac

# kernel x architecture x page size x {builds, VM suite}; one row per
# kernel release, in version order per architecture.
matrix() {
	echo "| kernel | kernels.conf (Debian suite) | arch | page size | gdrdrv + nvsim build (-Werror) | VM suite |"
	echo "|---|---|---|---|---|---|"
	awk 'NR == FNR { if ($1 == "kernel") ctx[$2 " " $3] = $5; next }
	$1 == "build" || $1 == "vm" {
		key = $3 " " $5
		if (!(key in name)) { keys[n++] = key }
		c = ctx[$2 " " $3]
		name[key] = $2 (c != "" && c != $2 ? " (" c ")" : "")
		arch[key] = $3; page[key] = $4; kver[key] = $5
		cc = $6
		sub(/^[a-z0-9_]+-linux-gnu-/, "", cc)
		if ($1 == "build")
			build[key] = ($7 == "PASS" ? "passed" : "**FAILED**") " (" cc ")"
		else
			vm[key] = $6 " passed, " $7 " failed" ($8 > 0 ? ", " $8 " skipped" : "") \
				($7 > 0 ? " **FAILED**" : "")
	}
	END {
		for (i = 0; i < n; i++) {
			k = keys[i]
			printf "%s\t| %s | %s | %s | %s | %s | %s |\n", k, kver[k], name[k],
				arch[k], page[k], (k in build) ? build[k] : "not built here",
				(k in vm) ? vm[k] : "not booted"
		}
	}' "$top/tests/kernels/kernels.conf" "$results" | sort -t ' ' -k1,1 -k2,2V | cut -f2-
}

# Which kernel APIs each built kernel has, as gdrdrv's compile tests found.
apis() {
	kvers=$(awk '$1 == "apis" { print $3 " " $4 }' "$results" | sort -u -k1,1 -k2,2V |
		awk '{ print $2 }')
	[ -n "$kvers" ] || return 0
	printf "| API (compile test in kernel/gdrdrv/conftest/) |"
	for k in $kvers; do printf " %s |" "$k"; done
	printf "\n|---|"
	for k in $kvers; do printf -- "---|"; done
	echo
	for t in "$top"/kernel/gdrdrv/conftest/*.c; do
		n=$(basename "$t" .c)
		macro=GDRDRV_HAVE_$(echo "$n" | tr 'a-z' 'A-Z')
		# The test's comment says what it finds.
		what=$(awk 'NR >= 2 { end = /\*\//; sub(/ *\*\/.*/, ""); sub(/^ *(\/\*|\*) */, "")
			if ($0 != "") printf "%s%s", (n++ ? " " : ""), $0; if (end) exit }' "$t" |
			sed 's/</\&lt;/g')
		printf "| %s (\`%s.c\`) |" "$what" "$n"
		for k in $kvers; do
			awk -v k="$k" -v m="$macro" '$1 == "apis" && $4 == k {
				for (i = 5; i <= NF; i++) if ($i == m) found = 1 }
				END { printf " %s |", found ? "yes" : "no" }' "$results"
		done
		echo
	done
}

# replace FILE NAME TEXT_FILE: the lines between "<!-- BEGIN NAME" and
# "<!-- END NAME -->" become TEXT_FILE's.
replace() {
	grep -q "^<!-- BEGIN $2" "$1" && grep -q "^<!-- END $2 -->" "$1" ||
		die "$1 has no <!-- BEGIN $2 ... --> / <!-- END $2 --> markers"
	awk -v name="$2" -v text="$3" '
		index($0, "<!-- BEGIN " name) == 1 { print; while ((getline l < text) > 0) print l; skip = 1; next }
		index($0, "<!-- END " name " -->") == 1 { skip = 0 }
		!skip' "$1" >"$1.tmp" && mv "$1.tmp" "$1"
}

if [ $mode = update ]; then
	[ $# = 2 ] || die "usage: $0 -u DIR docs/testing.md kernel/gdrdrv/README.md"
	for t in kernel-matrix kernel-apis; do
		[ -f "$out/$t.md" ] ||
			die "no $out/$t.md: make check-all (or make check-kernels, then make kernel-tables) writes it"
	done
	replace "$1" kernel-matrix "$out/kernel-matrix.md"
	replace "$2" kernel-apis "$out/kernel-apis.md"
	echo "report: the kernel tables of $1 and $2 are now those of $out"
	exit 0
fi

[ $# = 1 ] || die "usage: $0 [-o DIR] RESULTS"
results=$1
[ -s "$results" ] || die "no results in $results: run make check-all (or make check-kernels)"
if [ $mode = print ]; then
	matrix
	echo
	apis
	exit 0
fi
mkdir -p "$out"
matrix >"$out/kernel-matrix.md"
apis >"$out/kernel-apis.md"
echo "report: the kernel tables are in $out (make update-tables copies them into docs/testing.md and kernel/gdrdrv/README.md)"
