#!/bin/sh
# The verdicts of bench/copy-paths-run.sh, from its JSON documents alone
# (copylat --paths --json per host buffer kind, all CPUs and one): per
# document and direction, gdrmap_copy_*'s p50 against the fastest other
# way's at every size (target: 1.1x at most; copylat's "goal_other"),
# small copies against gdr_copy_*'s (up to 1 KiB; 1.05 allowed for
# noise), the crossovers of the path taken; for pageable memory,
# gdrmap_copy_*'s throughput over cuMemcpy's at 4 MiB and above (target:
# 2x at least) and the 64 MiB copy against the pinned-memory DMA floor
# (the fastest 64 MiB copy of the pinned run with the same CPUs); with
# one CPU the 2x is shown but is not a target (the one core copies every
# byte whichever path does it).
#
# usage: bench/copy-paths-summary.sh OUTDIR  (writes to stdout)
# Environment: JSONQ (tests/tools/jsonq, built by `make tools`; default
# $BUILD/tests/tools/jsonq, BUILD as for copy-paths-run.sh).
set -u
out=${1:?usage: $0 OUTDIR}
jsonq=${JSONQ:-${BUILD:-/tmp/gdrmap-paths-build}/tests/tools/jsonq}
[ -x "$jsonq" ] || { echo "no jsonq at $jsonq: make tools, or set JSONQ"; exit 1; }

# q FILE PATH...: the values, one per line (nothing if one is missing).
q() { f_=$1; shift; "$jsonq" "$f_" "$@" 2>/dev/null; }
# fmt X: a ratio as "1.23", "-" when there is none.
fmt() { awk -v r="$1" 'BEGIN { if (r == "null" || r == "") print "-"; else printf "%.2f", r }'; }
# sz N: a size as copylat writes it: 8, 4K, 64M.
sz() { awk -v n="$1" 'BEGIN { u = ""; split("K M G", us, " "); k = 0
	while (n >= 1024 && n % 1024 == 0 && k < 3) { n /= 1024; u = us[++k] }
	printf "%d%s", n, u }'; }
# le X LIMIT: yes if X <= LIMIT (a number).
le() { awk -v r="$1" -v l="$2" 'BEGIN { print (r != "null" && r != "" && r + 0 <= l + 0) ? "yes" : "no" }'; }

# p50 FILE I DIR WAY: the p50 (ns) of WAY (a path's name or a call's) at
# result I in direction DIR.
p50() {
	case $4 in
	mapping|threads|dma|staged) q "$1" ".results[$2].$3.paths.$4.p50" ;;
	*) q "$1" ".results[$2].$4.p50" ;;
	esac
}

# The index of the result of size N in FILE, or nothing.
index_of() {
	n_=$(q "$1" ".results#") || return
	i_=0
	while [ "$i_" -lt "$n_" ]; do
		[ "$(q "$1" ".results[$i_].size")" = "$2" ] && { echo "$i_"; return; }
		i_=$((i_ + 1))
	done
}

# pageable FILE DIR FLOOR_FILE: throughput over cuMemcpy's at >= 4 MiB,
# and 64 MiB against the DMA floor of FLOOR_FILE.
pageable() {
	f=$1 d=$2 floor=$3
	n=$(q "$f" ".results#")
	i=0 worst='' worst_size='' sizes=0 met=0
	while [ "$i" -lt "$n" ]; do
		# shellcheck disable=SC2046
		set -- $(q "$f" ".results[$i].size" ".results[$i].verified")
		size=$1 ok=$2
		if [ "$ok" = true ] && [ "$size" -ge 4194304 ]; then
			o=$(q "$f" ".results[$i].$d.over_cuMemcpy")
			if [ -n "$o" ] && [ "$o" != null ]; then
				x=$(awk -v o="$o" 'BEGIN { printf "%.4f", 1 / o }')
				sizes=$((sizes + 1))
				[ "$(awk -v x="$x" 'BEGIN { print (x >= 2) }')" = 1 ] &&
					met=$((met + 1))
				if [ -z "$worst" ] ||
				   [ "$(awk -v x="$x" -v w="$worst" 'BEGIN { print (x < w) }')" = 1 ]; then
					worst=$x worst_size=$size
				fi
			fi
		fi
		i=$((i + 1))
	done
	if [ "$sizes" = 0 ]; then
		echo "  $d from 4 MiB: no size measured against cuMemcpy"
		return
	fi
	v=no
	[ "$met" = "$sizes" ] && v=yes
	# One CPU copies every byte itself, by whichever path: there the
	# target is the best path (the 1.1x above), not 2x.
	case $f in
	*-1cpu.json) v="not a target with one CPU" ;;
	esac
	echo "  $d from 4 MiB: throughput at least 2x cuMemcpy's at $met of $sizes sizes (worst $(fmt "$worst")x at $(sz "$worst_size")): $v"
	i=$(index_of "$f" 67108864)
	[ -n "$i" ] || return
	if [ "$d" = write ]; then
		t=$(p50 "$f" "$i" "$d" gdrmap_copy_to_mapping)
		c=$(p50 "$f" "$i" "$d" cuMemcpyHtoD)
	else
		t=$(p50 "$f" "$i" "$d" gdrmap_copy_from_mapping)
		c=$(p50 "$f" "$i" "$d" cuMemcpyDtoH)
	fi
	line="  $d 64 MiB: gdrmap_copy_* $(awk -v t="$t" 'BEGIN { printf "%.2f ms", t / 1e6 }'), cuMemcpy $(awk -v t="$c" 'BEGIN { printf "%.2f ms", t / 1e6 }')"
	j=
	[ -f "$floor" ] && j=$(index_of "$floor" 67108864)
	if [ -n "$j" ]; then
		way=$(q "$floor" ".results[$j].$d.fastest_other")
		fl=$(p50 "$floor" "$j" "$d" "$way")
		line="$line; the pinned-memory DMA floor ($way from pinned memory, $(basename "$floor")) $(awk -v t="$fl" 'BEGIN { printf "%.2f ms", t / 1e6 }'): $(awk -v t="$t" -v f="$fl" 'BEGIN { printf "%.2f", t / f }')x it"
	fi
	echo "$line"
}

verdict() {
	name=$1 f=$out/$1
	"$jsonq" "$f" >/dev/null 2>&1 || { echo "$1: no document"; return; }
	if q "$f" .error >/dev/null; then
		echo "$1: the run failed: $(q "$f" .error)"
		return
	fi
	if [ "$(q "$f" .paths)" != true ]; then
		echo "$1: no forced paths timed (a library without gdrmap_copy_*?)"
		return
	fi
	kind=$(q "$f" .host_memory)
	echo "$1 ($(q "$f" .device.name), $(q "$f" .backend) backend, host memory $kind, CPUs $(q "$f" .cpus.list), measuring on $(q "$f" .cpus.measuring_cpu)):"
	for d in write read; do
		# shellcheck disable=SC2046
		set -- $(q "$f" .goal_other.$d.within .goal_other.$d.sizes \
			.goal_other.$d.worst_ratio .goal_other.$d.worst_size \
			.goal_other.$d.against \
			.small_copies.$d.worst_ratio .small_copies.$d.worst_size)
		if [ $# -lt 7 ]; then
			echo "  $d: no goal_other in the document (an older copylat?)"
			continue
		fi
		met=no
		[ "$1" = "$2" ] && [ "$2" != 0 ] && met=yes
		echo "  $d: p50 within 1.1x of the fastest other way at $1 of $2 sizes (worst $(fmt "$3")x at $(sz "$4"), against $5): $met;" \
			"up to 1 KiB, worst $(fmt "$6")x gdr_copy_*'s p50 (at $(sz "$7"); 1.05 allowed for noise): $(le "$6" 1.05)"
		printf '  %s crossovers:' $d
		n=$(q "$f" ".crossovers.$d#")
		i=0
		while [ "$i" -lt "$n" ]; do
			printf ' %s' "$(q "$f" ".crossovers.${d}[$i].size" \
				".crossovers.${d}[$i].from" ".crossovers.${d}[$i].to" |
				tr '\n' ' ' | awk '{ printf "%s (%s -> %s)", $1, $2, $3 }')"
			i=$((i + 1))
		done
		[ "$n" = 0 ] && printf ' none'
		echo
	done
	if [ "$kind" = pageable ]; then
		case $name in
		*-1cpu.json) floor=$out/paths-pinned-1cpu.json ;;
		*) floor=$out/paths-pinned.json ;;
		esac
		pageable "$f" write "$floor"
		pageable "$f" read "$floor"
	fi
}

for kind in pinned registered pageable; do
	verdict "paths-$kind.json"
	verdict "paths-$kind-1cpu.json"
done
