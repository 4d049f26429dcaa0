#!/bin/sh
# The gdrmap command line: help for every subcommand, and every kind of
# bad input refused with a message and exit status 2, never a crash.
. "$(dirname "$0")/harness.sh"

cmds="doctor copylat copybw apiperf pplat"

run_rc top "$GDRMAP" --help
expect "gdrmap --help exits 0" [ $rc = 0 ]
for c in $cmds; do
	expect "gdrmap --help lists $c" grep -q "^  $c " "$OUT/top.out"
done
run_rc none "$GDRMAP"
expect "gdrmap without a command exits 2" [ $rc = 2 ]
run_rc unknown "$GDRMAP" frobnicate
expect "an unknown command exits 2" [ $rc = 2 ]
expect "an unknown command is named" grep -q frobnicate "$OUT/unknown.err"
run_rc version "$GDRMAP" --version
expect "--version exits 0" [ $rc = 0 ]
for a in --version version --help -h; do
	run_rc extra "$GDRMAP" $a extra
	expect "gdrmap $a extra exits 2 (got $rc)" [ $rc = 2 ]
	expect "gdrmap $a extra names the stray argument" grep -q "takes no argument, not 'extra'" "$OUT/extra.err"
done

# gdrmap help [COMMAND]
run_rc helptop "$GDRMAP" help
expect "gdrmap help exits 0" [ $rc = 0 ]
expect "gdrmap help is gdrmap --help" cmp -s "$OUT/helptop.out" "$OUT/top.out"
for c in $cmds; do
	run_rc helpc "$GDRMAP" help $c
	run_rc dashh "$GDRMAP" $c --help
	expect "gdrmap help $c exits 0" [ $rc = 0 ]
	expect "gdrmap help $c is gdrmap $c --help" cmp -s "$OUT/helpc.out" "$OUT/dashh.out"
done
run_rc helpbad "$GDRMAP" help frobnicate
expect "gdrmap help frobnicate exits 2" [ $rc = 2 ]
expect "gdrmap help frobnicate names it" grep -q "unknown command 'frobnicate'" "$OUT/helpbad.err"
run_rc helptwo "$GDRMAP" help doctor pplat
expect "gdrmap help doctor pplat exits 2" [ $rc = 2 ]

# Every line of every help fits in 79 columns.
for h in top helptop; do
	expect "gdrmap --help: lines of 79 columns at most" \
		awk 'length > 79 { print FILENAME ": " $0; bad = 1 } END { exit bad }' "$OUT/$h.out"
done
for c in $cmds; do
	"$GDRMAP" $c --help >"$OUT/width.out" 2>&1
	expect "$c --help: lines of 79 columns at most" \
		awk 'length > 79 { print "'$c': " $0; bad = 1 } END { exit bad }' "$OUT/width.out"
	# The size sentence only where the command takes a size.
	if grep -q ' BYTES ' "$OUT/width.out"; then
		expect "$c --help explains the size suffixes" grep -q "Sizes take K, M or G" "$OUT/width.out"
	else
		expect "$c --help has no size sentence (it takes no size)" sh -c "! grep -q 'Sizes take' '$OUT/width.out'"
	fi
done
"$GDRMAP" copylat --help >"$OUT/copylat-help.out"
expect "copylat --help lists --paths and its paths" sh -c \
	"grep -A2 -- '--paths' '$OUT/copylat-help.out' | grep -q 'mapping, threads, dma, staged'"
expect "copylat --help lists --host and its kinds" sh -c \
	"grep -A4 -- '--host KIND' '$OUT/copylat-help.out' | tr '\n' ' ' | grep -q 'pinned.*registered.*pageable'"
for c in doctor copybw apiperf pplat; do
	"$GDRMAP" $c --help >"$OUT/other-help.out"
	expect "$c --help has no --paths" sh -c "! grep -q -- '--paths' '$OUT/other-help.out'"
	expect "$c --help has no --host" sh -c "! grep -q -- '--host' '$OUT/other-help.out'"
done
"$GDRMAP" copybw --help >"$OUT/copybw-help.out"
expect "copybw's --cpus help is about its threads, not latency" sh -c \
	"grep -A3 -- '--cpus' '$OUT/copybw-help.out' | grep -q 'thread' && ! grep -A3 -- '--cpus' '$OUT/copybw-help.out' | grep -q latency"

for c in $cmds; do
	for h in --help -h; do
		run_rc help "$GDRMAP" $c $h
		expect "$c $h exits 0" [ $rc = 0 ]
		expect "$c $h prints usage" grep -q "^usage: gdrmap $c" "$OUT/help.out"
		expect "$c $h mentions --json" grep -q -- "--json" "$OUT/help.out"
		expect "$c $h writes nothing on stderr" [ ! -s "$OUT/help.err" ]
	done
	# Each line: arguments that must be refused.
	while read -r args; do
		[ -z "$args" ] && continue
		# shellcheck disable=SC2086
		run_rc bad "$GDRMAP" $c $args
		expect "$c $args exits 2 (got $rc)" [ $rc = 2 ]
		expect "$c $args says what is wrong" [ -s "$OUT/bad.err" ]
		expect "$c $args prints nothing on stdout" [ ! -s "$OUT/bad.out" ]
	done <<EOF2
--bogus
-Z
stray
--json stray
-d
-d -1
-d x
-d 99999
EOF2
done

for c in copylat copybw apiperf pplat; do
	while read -r args; do
		[ -z "$args" ] && continue
		run_rc bad "$GDRMAP" $c $args
		expect "$c $args exits 2 (got $rc)" [ $rc = 2 ]
		expect "$c $args says what is wrong" [ -s "$OUT/bad.err" ]
	done <<EOF2
-a
-a nosuchkind
-M
-M purple
-C
-C x-y
-C 3-1
-C 99999999
EOF2
done

for c in copylat copybw apiperf; do
	while read -r args; do
		[ -z "$args" ] && continue
		run_rc bad "$GDRMAP" $c $args
		expect "$c $args exits 2 (got $rc)" [ $rc = 2 ]
	done <<EOF2
-s 0
-s -5
-s 12Q
-s 99999999999999999999999
-o
-o -1
-o 1X
EOF2
done

while read -r line; do
	[ -z "$line" ] && continue
	c=${line%% *}
	args=${line#* }
	run_rc bad "$GDRMAP" $c $args
	expect "$c $args exits 2 (got $rc)" [ $rc = 2 ]
done <<EOF2
copylat -w 0
copylat -r -3
copylat -m 2M -s 1M
copylat -m 0
copylat -c 5
copylat -t 2
copybw -t 0
copybw -t 5000
copybw -c 0
copybw -s 1M -o 1M
copybw -s 1M -o 4K -c 1M
copybw -n 3
copybw --cold
copybw --paths
apiperf --paths
pplat --paths
doctor --paths
copylat --paths=yes
copylat --paths=
copylat --cold=1
copylat --host
copylat --host malloc
copylat --host Pinned
copybw --host pinned
apiperf -n 0
apiperf -n 10000001
copylat -w 99999999
apiperf -w 3
pplat -n 0
pplat -n abc
pplat --mode
pplat --mode foo
pplat --mode mapping,foo
pplat --mode mapping,,htod
pplat --mode ,mapping
pplat --mode mapping,
pplat --mode ,
pplat --responder alien
pplat -s 4K
doctor -a vmm
doctor --cold
EOF2

# A bad value's error says what is accepted, with the limits
# (each line: WANT|ARGUMENTS).
while IFS="|" read -r want line; do
	[ -z "$line" ] && continue
	run_rc limit "$GDRMAP" $line
	expect "$line exits 2 (got $rc)" [ $rc = 2 ]
	expect "$line says the limit '$want': $(cat "$OUT/limit.err")" grep -qF -- "$want" "$OUT/limit.err"
done <<EOF2
10000000|copylat -w 100000000
10000000|copybw -r 10000001
10000000|apiperf -n 0
10000000|pplat -n 99999999
to 1024|copybw -t 1025
0 to 1023|copylat -d 1024
0 to 1023|doctor -d 5000
1024G|copylat -s 2048G
1024G|apiperf -o 2000G
1024G|copybw -c 0
K, M or G|copylat -m 1Q
vmm, cumemalloc or auto|pplat -a nosuch
default, wc, cache or device|copybw -M purple
auto, gpu or cpu|pplat --responder alien
pinned, registered or pageable|copylat --host default
no empty item|pplat --mode mapping,,htod
0-3,8|copylat -C x-y
--size 1048576|copylat -m 2M -s 1M
copy at most 1044480 bytes|copybw -s 1M -o 4K -c 1M
--offset 1048576 must be below --size 1048576|copybw -s 1M -o 1M
option '--paths' takes no value|copylat --paths=yes
option '--json' takes no value|copybw --json=1
unknown option '--paths'|copybw --paths
EOF2

# --json on a usage error: still exit 2, and stdout holds either nothing
# or one JSON document.
run_rc badjson "$GDRMAP" copylat --json -s 0
expect "copylat --json -s 0 exits 2" [ $rc = 2 ]
if [ -s "$OUT/badjson.out" ]; then
	expect "usage error in JSON mode is valid JSON" "$JSONQ" "$OUT/badjson.out"
fi

# Good values of every option parse (the run itself may lack a GPU: 1).
while read -r line; do
	[ -z "$line" ] && continue
	c=${line%% *}
	args=${line#* }
	run_rc good "$GDRMAP" $c $args
	expect "$c $args is accepted (got $rc)" rc_in $rc 0 1 3
done <<EOF2
copylat -d 0 -s 4K -m 1 -o 3 -w 5 -r 5 --cold -a cumemalloc -M wc -C all
copylat --size=64K --min-size=1K --offset=0x10 --write-iters=3 --read-iters=3
copylat --paths -m 8 -s 64K -w 3 -r 3
copylat --paths --cold --json -s 4K
copylat --paths --host pageable -m 8 -s 64K -w 3 -r 3
copylat --host registered --json -s 4K
copylat --host pinned -s 4K -w 3 -r 3
copybw -s 1M -c 512K -o 64 -w 2 -r 2 -t 2 -M default -a vmm
apiperf -s 64K -o 100 -n 5 -M cache
pplat -n 10 --mode mapping,hostflag --responder cpu -M device
pplat -n 10 --mode all --responder auto
EOF2

done_tests
