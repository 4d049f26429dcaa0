#!/bin/sh
# The measuring subcommands.  Without a GPU each fails cleanly: exit 1, a
# "no GPU" message, and with --json one JSON document with "error".  With
# a GPU (real, or the VM's simulated one) each runs a small configuration
# and its JSON is checked for shape and for data moved correctly
# ("verified": true); on a simulated GPU, for the "simulated" label.
# Speed is never checked.  With GDRMAP_TEST_DEVICE, on that GPU (-d).
. "$(dirname "$0")/harness.sh"

cmds="copylat copybw apiperf pplat"

"$GDRMAP" doctor --json $dev_opt >"$OUT/doctor.json" 2>/dev/null
gpu=$("$JSONQ" "$OUT/doctor.json" .gpu_present)
sim=$("$JSONQ" "$OUT/doctor.json" .simulated)
backend=$("$JSONQ" "$OUT/doctor.json" .default_backend)

if [ "$gpu" != true ] || [ "$backend" = null ]; then
	why="no GPU"
	[ "$gpu" = true ] && why="no usable backend"
	for c in $cmds; do
		run_rc t "$GDRMAP" $c $dev_opt
		expect "$c without a GPU exits 1 (got $rc)" [ $rc = 1 ]
		expect "$c without a GPU says $why" grep -Eq "$why|gdr(map)?_open failed" "$OUT/t.err"
		expect "$c without a GPU prints no table" [ ! -s "$OUT/t.out" ]
		run_rc j "$GDRMAP" $c $dev_opt --json
		expect "$c --json without a GPU exits 1" [ $rc = 1 ]
		expect "$c --json without a GPU is valid JSON" "$JSONQ" "$OUT/j.out"
		expect "$c --json without a GPU has the error" jq_has "$OUT/j.out" .error .exit_code
		expect "$c --json names itself" jq_is "$OUT/j.out" .command $c
		expect "$c --json exit_code 1" jq_is "$OUT/j.out" .exit_code 1
	done
	run_rc p "$GDRMAP" copylat $dev_opt --paths
	expect "copylat --paths without a GPU exits 1 (got $rc)" [ $rc = 1 ]
	expect "copylat --paths without a GPU says $why" grep -Eq "$why|gdr(map)?_open failed" "$OUT/p.err"
	done_tests
fi

# A GPU: every command, small, with --json and as text.
header() {
	f=$1
	c=$2
	expect "$c JSON valid" "$JSONQ" "$f"
	expect "$c JSON header" jq_has "$f" .tool .command .version \
		.simulated .device.name .device.pci_bus_id .backend \
		.allocation .mapping_type .cpus.source .timer_overhead_ns .verified
	expect "$c command" jq_is "$f" .command $c
	expect "$c simulated label" jq_is "$f" .simulated "$sim"
	expect "$c data verified" jq_is "$f" .verified true
	expect "$c on device ${dev:-0}" jq_is "$f" .device.index "${dev:-0}"
}

stats() {	# FILE PATH: p0 <= p50 <= p99 <= max, all numbers
	expect "$2 has numbers" jq_num "$1" "$2.p0"
	expect "$2 has p50" jq_num "$1" "$2.p50"
	expect "$2 has p99" jq_num "$1" "$2.p99"
	expect "$2 has n" jq_num "$1" "$2.n"
}

run_rc cl "$GDRMAP" copylat $dev_opt --json -s 64K -w 20 -r 20 -o 3
f=$OUT/cl.out
expect "copylat exits 0 (got $rc: $(cat "$OUT/cl.err"))" [ $rc = 0 ]
header "$f" copylat
expect "copylat: 17 sizes, 1 B to 64 KiB" jq_is "$f" .results# 17
expect "copylat: first size 1" jq_is "$f" '.results[0].size' 1
expect "copylat: last size 65536" jq_is "$f" '.results[16].size' 65536
expect "copylat: offset 3" jq_is "$f" .offset 3
for m in gdr_copy_to_mapping cuMemcpyHtoD gdr_copy_from_mapping cuMemcpyDtoH; do
	stats "$f" ".results[5].$m"
done
expect "copylat: every size verified" [ "$(grep -c '"verified": true' "$f")" = 18 ]

# jq_in FILE PATH VALUE...: the value at PATH is one of the VALUEs.
jq_in() {
	v=$("$JSONQ" "$1" "$2" 2>/dev/null) || { echo "  $1 $2 missing" >&2; return 1; }
	f_=$1 p_=$2
	shift 2
	rc_in "$v" "$@" || { echo "  $f_ $p_ = '$v', want one of $*" >&2; return 1; }
}

# stats_or_na FILE PATH: figures, or null (a path that cannot serve).
stats_or_na() {
	if [ "$("$JSONQ" "$1" "$2" 2>/dev/null)" = null ]; then ok; else stats "$1" "$2"; fi
}

# gdrmap_copy_* beside them, and every path forced (row, not r: rc_in
# sets r): from 8 B (the
# smallest size of the goal) to 64 KiB, at an odd offset.
run_rc paths "$GDRMAP" copylat $dev_opt --json --paths -m 8 -s 64K -w 20 -r 20 -o 3
f=$OUT/paths.out
expect "copylat --paths exits 0 (got $rc: $(cat "$OUT/paths.err"))" [ $rc = 0 ]
header "$f" copylat
expect "copylat --paths: gdrmap_copy_* timed" jq_is "$f" .gdrmap_copy true
expect "copylat --paths: labelled" jq_is "$f" .paths true
expect "copylat --paths: 14 sizes, 8 B to 64 KiB" jq_is "$f" .results# 14
expect "copylat --paths: every size verified" [ "$(grep -c '"verified": true' "$f")" = 15 ]
for i in 0 7 13; do
	row=".results[$i]"
	stats "$f" "$row.gdrmap_copy_to_mapping"
	stats "$f" "$row.gdrmap_copy_from_mapping"
	stats_or_na "$f" "$row.cuMemcpyHtoDAsync"
	stats_or_na "$f" "$row.cuMemcpyDtoHAsync"
	for d in write read; do
		expect "$row.$d.path" jq_in "$f" "$row.$d.path" mapping threads dma staged
		expect "$row.$d.fastest_path" jq_in "$f" "$row.$d.fastest_path" mapping threads dma staged
		expect "$row.$d.over_fastest" jq_num "$f" "$row.$d.over_fastest"
		expect "$row.$d.over_fastest_other" jq_num "$f" "$row.$d.over_fastest_other"
		expect "$row.$d.fastest_other" jq_has "$f" "$row.$d.fastest_other"
		expect "$row.$d.over_gdr_copy" jq_num "$f" "$row.$d.over_gdr_copy"
		expect "$row.$d.over_cuMemcpy" jq_num "$f" "$row.$d.over_cuMemcpy"
		stats "$f" "$row.$d.paths.mapping"
		stats_or_na "$f" "$row.$d.paths.threads"
		stats_or_na "$f" "$row.$d.paths.dma"
		# Pinned memory, and below 256 KiB: no staged path.
		expect "$row: no staged $d" jq_is "$f" "$row.$d.paths.staged" null
	done
done
expect "copylat --paths: host memory pinned" jq_is "$f" .host_memory pinned
expect "copylat --paths: crossovers" jq_has "$f" .crossovers.write .crossovers.read \
	.fastest_crossovers.write .fastest_crossovers.read
expect "copylat --paths: the goal" jq_is "$f" .goal.ratio 1.1
expect "copylat --paths: sizes against the goal" jq_is "$f" .goal.read.sizes 14
expect "copylat --paths: the other ways' goal" jq_is "$f" .goal_other.ratio 1.1
expect "copylat --paths: sizes against it" jq_is "$f" .goal_other.write.sizes 14
expect "copylat --paths: small copies" jq_is "$f" .small_copies.write.sizes 8
expect "copylat --paths: why staged cannot serve, from 8 B" \
	grep -q '"path": "staged",' "$f"
expect "... in the library's words" sh -c "'$JSONQ' '$f' .not_available[0].why | grep -q ."
run_rc pathstxt "$GDRMAP" copylat $dev_opt --paths -m 8 -s 4K -w 5 -r 5
expect "copylat --paths (text) exits 0 (got $rc)" [ $rc = 0 ]
for w in "writes: gdrmap_copy_to_mapping" "reads: gdrmap_copy_from_mapping" \
	 /fastest /other async staged "fastest forced path:" "crossovers:" \
	 "within 1.1x" "of the fastest other way's" "host memory pinned"; do
	expect "copylat --paths (text) has '$w'" grep -qF -- "$w" "$OUT/pathstxt.out"
done

# Pageable host memory: every path from and to it, checked; registered
# memory where this CUDA registers (the simulated one may not: exit 1).
run_rc pg "$GDRMAP" copylat $dev_opt --json --paths --host pageable -m 8 -s 512K -w 5 -r 5
expect "copylat --host pageable exits 0 (got $rc: $(cat "$OUT/pg.err"))" [ $rc = 0 ]
expect "copylat --host pageable: labelled" jq_is "$OUT/pg.out" .host_memory pageable
expect "copylat --host pageable: every size verified" jq_is "$OUT/pg.out" .verified true
stats_or_na "$OUT/pg.out" ".results[16].write.paths.staged"
run_rc rg "$GDRMAP" copylat $dev_opt --json --host registered -s 64K -w 5 -r 5
expect "copylat --host registered exits 0 or 1 (got $rc)" rc_in $rc 0 1
if [ $rc = 0 ]; then
	expect "copylat --host registered: labelled" jq_is "$OUT/rg.out" .host_memory registered
fi

run_rc cold "$GDRMAP" copylat $dev_opt --json -s 4K -w 5 -r 5 --cold
expect "copylat --cold exits 0" [ $rc = 0 ]
expect "copylat --cold labelled" jq_is "$OUT/cold.out" .cold_cache true

# An offset past the first 64 KiB: the pinned window starts above the
# allocation.
run_rc far "$GDRMAP" copylat $dev_opt --json -s 4K -m 1K -w 5 -r 5 -o 70001
expect "copylat -o 70001 exits 0 (got $rc: $(cat "$OUT/far.err"))" [ $rc = 0 ]
expect "copylat -o 70001 verified" jq_is "$OUT/far.out" .verified true

run_rc bw "$GDRMAP" copybw $dev_opt --json -s 1M -c 768K -o 64 -w 3 -r 3 -t 3
f=$OUT/bw.out
expect "copybw exits 0 (got $rc: $(cat "$OUT/bw.err"))" [ $rc = 0 ]
header "$f" copybw
expect "copybw threads" jq_is "$f" .threads 3
expect "copybw copy_size" jq_is "$f" .copy_size 786432
expect "copybw write verified" jq_is "$f" .write.verified true
expect "copybw read verified" jq_is "$f" .read.verified true
for p in write.gdr_copy_to_mapping write.cuMemcpyHtoD read.gdr_copy_from_mapping read.cuMemcpyDtoH \
	 write.gdrmap_copy_to_mapping read.gdrmap_copy_from_mapping; do
	expect "copybw $p gbps" jq_num "$f" ".$p.gbps"
	stats "$f" ".$p.ns"
done
expect "copybw: gdrmap_copy_* timed" jq_is "$f" .gdrmap_copy true
expect "copybw write path" jq_in "$f" .write.path mapping threads dma staged
expect "copybw read path" jq_in "$f" .read.path mapping threads dma staged

run_rc ap "$GDRMAP" apiperf $dev_opt --json -s 64K -o 12345 -n 30
f=$OUT/ap.out
expect "apiperf exits 0 (got $rc: $(cat "$OUT/ap.err"))" [ $rc = 0 ]
header "$f" apiperf
for op in pin map get_info unmap unpin; do
	stats "$f" ".ops.$op"
	expect "apiperf $op histogram" jq_has "$f" ".ops.$op.histogram[0].lo_ns" \
		".ops.$op.histogram[0].count"
done
expect "apiperf: every read checked" jq_is "$f" .reads_checked 30
expect "apiperf: none wrong" jq_is "$f" .reads_wrong 0

run_rc pp "$GDRMAP" pplat $dev_opt --json -n 200
f=$OUT/pp.out
expect "pplat exits 0 (got $rc: $(cat "$OUT/pp.err"))" [ $rc = 0 ]
header "$f" pplat
for m in mapping htod hostflag; do
	expect "pplat $m verified" jq_is "$f" ".modes.$m.verified" true
	stats "$f" ".modes.$m"
	expect "pplat $m: 200 round trips" jq_is "$f" ".modes.$m.n" 200
done
if [ "$sim" = true ]; then
	expect "pplat on a simulated GPU: CPU responder" jq_is "$f" .responder cpu-thread
else
	expect "pplat on a GPU: kernel responder" jq_is "$f" .responder gpu-kernel
fi

run_rc pp1 "$GDRMAP" pplat $dev_opt --json -n 30 --mode hostflag,mapping
expect "pplat --mode hostflag,mapping exits 0" [ $rc = 0 ]
expect "pplat --mode: two modes" jq_is "$OUT/pp1.out" .modes# 2
expect "pplat --mode: no htod" sh -c "! '$JSONQ' '$OUT/pp1.out' .modes.htod 2>/dev/null"

# Text output of each, with the simulated banner where it applies.
for c in "copylat -s 1K -w 5 -r 5" "copybw -s 256K -w 2 -r 2" \
	 "apiperf -n 5" "pplat -n 20"; do
	run_rc txt "$GDRMAP" $c $dev_opt
	expect "$c (text) exits 0" [ $rc = 0 ]
	if [ "$sim" = true ]; then
		expect "$c (text) has the SIMULATED banner" grep -q SIMULATED "$OUT/txt.out"
	fi
done

# cuMemAlloc memory: mapped by gdrdrv and dmabuf, pinned copy-only by
# vulkan; verified either way.
run_rc cm "$GDRMAP" copylat $dev_opt --json -a cumemalloc -s 4K -w 5 -r 5
expect "copylat -a cumemalloc exits 0 (got $rc)" [ $rc = 0 ]
expect "... verified" jq_is "$OUT/cm.out" .verified true
if [ "$backend" = vulkan ]; then
	expect "... copy-only on vulkan" jq_is "$OUT/cm.out" .mapping_type copy-only
fi
# Every path on that memory: on a copy-only pin only dma serves.
run_rc cmp "$GDRMAP" copylat $dev_opt --json --paths -a cumemalloc -m 8 -s 4K -w 5 -r 5
expect "copylat --paths -a cumemalloc exits 0 (got $rc: $(cat "$OUT/cmp.err"))" [ $rc = 0 ]
expect "... verified" jq_is "$OUT/cmp.out" .verified true
if [ "$("$JSONQ" "$OUT/cmp.out" .mapping_type)" = copy-only ]; then
	for d in write read; do
		expect "copy-only: no $d through the mapping" jq_is "$OUT/cmp.out" ".results[0].$d.paths.mapping" null
		expect "copy-only: $d by dma" jq_is "$OUT/cmp.out" ".results[0].$d.path" dma
	done
fi

done_tests
