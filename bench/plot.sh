#!/bin/sh
# Plot `gdrmap ... --json` output with gnuplot, as PNG and SVG.
#
# usage: bench/plot.sh [-o OUTDIR] FILE.json...
#   one plot per file, OUTDIR/<file name>.png and .svg (default: next to
#   the file), chosen by the file's "command":
#     copylat  latency per size, log-log: the mapping (gdr_copy_to/from_
#              mapping) against cuMemcpyHtoD/DtoH and gdrmap_copy_* (the
#              fastest path), p50 lines, p0-p99 bars; a run with --paths
#              also gives <file name>-paths.*: p50 of each forced path
#     pplat    round-trip p0/p50/p99 per signal path
#     apiperf  p50 of pin/map/get_info/unmap/unpin, p0-p99 bars, log scale
#     copybw   GB/s each way, mapping against cuMemcpy (and gdrmap_copy_*
#              where the run has it); several copybw
#              files (e.g. -t 1, 2, 4, 8) also give OUTDIR/copybw-threads.*
# Figures taken on a simulated GPU are titled as such.
#
# Needs gnuplot (Debian: apt-get install gnuplot-nox) and jsonq, which
# `make tools` builds (JSONQ names another copy).
set -eu

die() { echo "plot.sh: $*" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
outdir=
while getopts "o:h" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	h) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "usage: $0 [-o OUTDIR] FILE.json..." ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || die "usage: $0 [-o OUTDIR] FILE.json..."
command -v gnuplot >/dev/null || die "gnuplot not found: apt-get install gnuplot-nox"
jsonq=${JSONQ:-$top/build/tests/tools/jsonq}
if [ ! -x "$jsonq" ]; then
	make -s -C "$top" "$jsonq" >/dev/null 2>&1 ||
		die "no $jsonq: run 'make tools' (or set JSONQ)"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

q() { "$jsonq" "$@"; }

# The title: what, then device and backend, and the simulated label.
title() {
	f=$1 what=$2
	t="gdrmap $what\\n$(q "$f" .device.name), $(q "$f" .backend) backend"
	mt=$(q "$f" .mapping_type)
	[ "$mt" = null ] || t="$t, $mt"
	if [ "$(q "$f" .simulated)" = true ]; then
		t="SIMULATED GPU - NOT PERFORMANCE DATA\\n$t"
	fi
	printf '%s' "$t" | sed 's/"/\\"/g'
}

# Run gnuplot once per terminal on script $1, output base $2.
render() {
	for term in png svg; do
		if [ $term = png ]; then
			set_term="set terminal pngcairo noenhanced size 1100,700 font 'Sans,11'"
		else
			set_term="set terminal svg noenhanced size 1100,700 dynamic font 'Sans,11'"
		fi
		{ echo "$set_term"; echo "set output '$2.$term'"; cat "$1"; } |
			gnuplot || die "gnuplot failed on $1"
	done
	echo "wrote $2.png $2.svg"
}

plot_copylat() {
	f=$1 base=$2
	n=$(q "$f" .results#)
	# Runs before gdrmap_copy_* was timed have no such member.
	calls=$(q "$f" .gdrmap_copy 2>/dev/null || echo false)
	paths=$(q "$f" .paths 2>/dev/null || echo false)
	i=0
	: >"$tmp/lat.dat"
	: >"$tmp/paths.dat"
	while [ $i -lt "$n" ]; do
		r=".results[$i]"
		if [ "$(q "$f" $r.verified)" = true ]; then
			line=$(q "$f" $r.size)
			ms="gdr_copy_to_mapping cuMemcpyHtoD gdr_copy_from_mapping cuMemcpyDtoH"
			[ "$calls" = true ] &&
				ms="$ms gdrmap_copy_to_mapping gdrmap_copy_from_mapping"
			for m in $ms; do
				line="$line $(q "$f" $r.$m.p0 $r.$m.p50 $r.$m.p99 | tr '\n' ' ')"
			done
			echo "$line" >>"$tmp/lat.dat"
		fi
		if [ "$paths" = true ] && [ "$(q "$f" $r.verified)" = true ]; then
			# An n/a path is null: gnuplot leaves it out.
			line="$(q "$f" $r.size) $(q "$f" $r.gdrmap_copy_to_mapping.p50)"
			for d in write read; do
				[ $d = read ] && line="$line $(q "$f" $r.gdrmap_copy_from_mapping.p50)"
				for p in mapping threads dma; do
					v=$(q "$f" $r.$d.paths.$p)
					[ "$v" = null ] || v=$(q "$f" $r.$d.paths.$p.p50)
					line="$line $v"
				done
			done
			echo "$line" >>"$tmp/paths.dat"
		fi
		i=$((i + 1))
	done
	more=
	if [ "$calls" = true ]; then
		more=", \\
     '' u 1:15:14:16 w yerrorlines lw 2 pt 13 ps 0.6 t 'write: gdrmap_copy_to_mapping', \\
     '' u 1:18:17:19 w yerrorlines lw 2 pt 15 ps 0.6 t 'read: gdrmap_copy_from_mapping'"
	fi
	cat >"$tmp/lat.gp" <<GP
set title "$(title "$f" "copy latency")"
set logscale xy
set xlabel "copy size (bytes)"
set ylabel "latency of one call (ns): p50, bars p0-p99"
set format x "%.0s%cB"
set grid
set key top left
set xrange [*:*]
plot '$tmp/lat.dat' u 1:3:2:4 w yerrorlines lw 2 pt 7 ps 0.6 t 'write: gdr_copy_to_mapping', \
     '' u 1:6:5:7 w yerrorlines lw 2 pt 5 ps 0.6 t 'write: cuMemcpyHtoD', \
     '' u 1:9:8:10 w yerrorlines lw 2 pt 9 ps 0.6 t 'read: gdr_copy_from_mapping', \
     '' u 1:12:11:13 w yerrorlines lw 2 pt 11 ps 0.6 t 'read: cuMemcpyDtoH'$more
GP
	render "$tmp/lat.gp" "$base"
	[ -s "$tmp/paths.dat" ] || return 0
	cat >"$tmp/paths.gp" <<GP
set title "$(title "$f" "gdrmap_copy_* against each path forced, p50")"
set logscale xy
set xlabel "copy size (bytes)"
set ylabel "latency of one call (ns), p50"
set format x "%.0s%cB"
set datafile missing "null"
set grid
set key top left
plot '$tmp/paths.dat' u 1:2 w linespoints lw 3 pt 7 ps 0.6 t 'write: gdrmap_copy_to_mapping', \
     '' u 1:3 w linespoints lw 1 dt 2 pt 5 ps 0.5 t 'write: mapping', \
     '' u 1:5 w linespoints lw 1 dt 2 pt 9 ps 0.5 t 'write: dma', \
     '' u 1:6 w linespoints lw 3 pt 7 ps 0.6 t 'read: gdrmap_copy_from_mapping', \
     '' u 1:7 w linespoints lw 1 dt 3 pt 5 ps 0.5 t 'read: mapping', \
     '' u 1:8 w linespoints lw 1 dt 3 pt 11 ps 0.5 t 'read: threads', \
     '' u 1:9 w linespoints lw 1 dt 3 pt 9 ps 0.5 t 'read: dma'
GP
	render "$tmp/paths.gp" "$base-paths"
}

plot_pplat() {
	f=$1 base=$2
	: >"$tmp/pp.dat"
	for m in mapping htod hostflag; do
		[ "$(q "$f" .modes.$m.verified 2>/dev/null)" = true ] || continue
		printf '"%s\\n(%s)" %s\n' "$m" "$(q "$f" .modes.$m.signal_call)" \
			"$(q "$f" .modes.$m.p0 .modes.$m.p50 .modes.$m.p99 | tr '\n' ' ')" >>"$tmp/pp.dat"
	done
	cat >"$tmp/pp.gp" <<GP
set title "$(title "$f" "GPU<->CPU round trip ($(q "$f" .responder) answers)")"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "round trip, signal to answer (ns)"
set logscale y
set yrange [*:*]
set bmargin 4
set grid ytics
set key top left
plot '$tmp/pp.dat' u 2:xtic(1) t 'p0', '' u 3 t 'p50', '' u 4 t 'p99'
GP
	render "$tmp/pp.gp" "$base"
}

plot_apiperf() {
	f=$1 base=$2
	: >"$tmp/ap.dat"
	for op in pin map get_info unmap unpin; do
		echo "$op $(q "$f" .ops.$op.p0 .ops.$op.p50 .ops.$op.p99 | tr '\n' ' ')" >>"$tmp/ap.dat"
	done
	cat >"$tmp/ap.gp" <<GP
set title "$(title "$f" "API call latency, $(q "$f" .size) bytes")"
set logscale y
set ylabel "ns per call: p50, bars p0-p99"
set style fill solid 0.6 border -1
set boxwidth 0.5
set grid ytics
set xrange [-0.6:4.6]
plot '$tmp/ap.dat' u 0:3:xtic(1) w boxes notitle, \
     '' u 0:3:2:4 w yerrorbars lc rgb 'black' pt 7 notitle
GP
	render "$tmp/ap.gp" "$base"
}

plot_copybw() {
	f=$1 base=$2
	calls=$(q "$f" .gdrmap_copy 2>/dev/null || echo false)
	w=".write.gdr_copy_to_mapping.gbps .write.cuMemcpyHtoD.gbps"
	r=".read.gdr_copy_from_mapping.gbps .read.cuMemcpyDtoH.gbps"
	more=
	if [ "$calls" = true ]; then
		w="$w .write.gdrmap_copy_to_mapping.gbps"
		r="$r .read.gdrmap_copy_from_mapping.gbps"
		more=", '' u 4 t 'gdrmap_copy_* (fastest path)'"
	fi
	{
		echo "write $(q "$f" $w | tr '\n' ' ')"
		echo "read $(q "$f" $r | tr '\n' ' ')"
	} >"$tmp/bw.dat"
	cat >"$tmp/bw.gp" <<GP
set title "$(title "$f" "bandwidth, $(q "$f" .copy_size) bytes, $(q "$f" .threads) thread(s)")"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "GB/s (from the median copy)"
set yrange [0:*]
set grid ytics
plot '$tmp/bw.dat' u 2:xtic(1) t 'mapping (gdr_copy_*)', '' u 3 t 'cuMemcpy'$more
GP
	render "$tmp/bw.gp" "$base"
}

: >"$tmp/threads.dat"
for f in "$@"; do
	[ -r "$f" ] || die "cannot read $f"
	q "$f" >/dev/null || die "$f is not valid JSON"
	cmd=$(q "$f" .command) || die "$f has no \"command\": not gdrmap --json output"
	q "$f" .error >/dev/null 2>&1 && die "$f records a failed run: $(q "$f" .error)"
	name=$(basename "$f" .json)
	dir=${outdir:-$(dirname "$f")}
	mkdir -p "$dir"
	case $cmd in
	copylat) plot_copylat "$f" "$dir/$name" ;;
	pplat) plot_pplat "$f" "$dir/$name" ;;
	apiperf) plot_apiperf "$f" "$dir/$name" ;;
	copybw)
		plot_copybw "$f" "$dir/$name"
		echo "$(q "$f" .threads) $(q "$f" .write.gdr_copy_to_mapping.gbps .read.gdr_copy_from_mapping.gbps | tr '\n' ' ')" >>"$tmp/threads.dat"
		bwfile=$f bwdir=$dir
		;;
	doctor) echo "plot.sh: $f: doctor has nothing to plot" >&2 ;;
	*) die "$f: unknown command '$cmd'" ;;
	esac
done

if [ "$(wc -l <"$tmp/threads.dat")" -gt 1 ]; then
	sort -n "$tmp/threads.dat" >"$tmp/threads.sorted"
	cat >"$tmp/th.gp" <<GP
set title "$(title "$bwfile" "bandwidth over threads")"
set xlabel "threads"
set logscale x 2
set format x "%g"
set xtics 2
set ylabel "GB/s (from the median copy)"
set yrange [0:*]
set grid
set key top left
plot '$tmp/threads.sorted' u 1:2 w linespoints lw 2 pt 7 t 'write (gdr_copy_to_mapping)', \
     '' u 1:3 w linespoints lw 2 pt 5 t 'read (gdr_copy_from_mapping)'
GP
	render "$tmp/th.gp" "$bwdir/copybw-threads"
fi
