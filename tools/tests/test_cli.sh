#!/bin/sh
# The gdrmap command line: help for every subcommand, and every kind of
# bad input refused with a message and exit status 2, never a crash.
. "$(dirname "$0")/lib.sh"

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
apiperf -n 0
apiperf -n 10000001
copylat -w 99999999
apiperf -w 3
pplat -n 0
pplat -n abc
pplat --mode
pplat --mode foo
pplat --mode mapping,foo
pplat --responder alien
pplat -s 4K
doctor -a vmm
doctor --cold
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
copybw -s 1M -c 512K -o 64 -w 2 -r 2 -t 2 -M default -a vmm
apiperf -s 64K -o 100 -n 5 -M cache
pplat -n 10 --mode mapping,hostflag --responder cpu -M device
pplat -n 10 --mode all --responder auto
EOF2

done_tests
