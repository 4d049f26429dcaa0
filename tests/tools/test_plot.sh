#!/bin/sh
# bench/plot.sh on recorded --json output (tests/tools/data: runs on the
# simulated GPU): a PNG and an SVG per file and the threads plot, each
# titled as simulated; bad input refused.  Skips the plotting without
# gnuplot.
. "$(dirname "$0")/harness.sh"

data=$(cd "$(dirname "$0")/data" 2>/dev/null && pwd)
plot=$(cd "$(dirname "$0")/../../bench" 2>/dev/null && pwd)/plot.sh
export JSONQ
if [ -z "$data" ] || [ ! -x "$plot" ]; then
	# Copied without the tree around it (as into the VM).
	skipped=1
	echo "SKIP: no tests/tools/data or bench/plot.sh next to this script" >&2
	done_tests
fi

for f in "$data"/*.json; do
	expect "$(basename "$f") is valid JSON" "$JSONQ" "$f"
	expect "$(basename "$f") is labelled simulated" jq_is "$f" .simulated true
done

if ! command -v gnuplot >/dev/null; then
	skipped=$((skipped + 1))
	echo "SKIP: no gnuplot (apt-get install gnuplot-nox)" >&2
	done_tests
fi

# copylat.json, copybw-t1 and -t2 are from before gdrmap_copy_* was timed;
# copylat-forced.json (--paths) and copybw-t3.json have it.
run_rc plot "$plot" -o "$OUT/p" "$data"/copylat.json "$data"/pplat.json \
	"$data"/apiperf.json "$data"/copybw-t1.json "$data"/copybw-t2.json \
	"$data"/copybw-t3.json "$data"/copylat-forced.json "$data"/doctor.json
expect "plot.sh exits 0 (got $rc: $(cat "$OUT/plot.err"))" [ $rc = 0 ]
for n in copylat pplat apiperf copybw-t1 copybw-t2 copybw-t3 copybw-threads \
	 copylat-forced copylat-forced-paths; do
	expect "$n.png written" [ -s "$OUT/p/$n.png" ]
	expect "$n.png is a PNG" grep -q PNG "$OUT/p/$n.png"
	expect "$n.svg written" grep -q "<svg" "$OUT/p/$n.svg"
	expect "$n.svg says SIMULATED" grep -q "SIMULATED GPU" "$OUT/p/$n.svg"
done
expect "copylat-forced.svg has gdrmap_copy_* beside the rest" sh -c \
	"grep -q 'read: gdrmap_copy_from_mapping' '$OUT/p/copylat-forced.svg' && grep -q 'read: cuMemcpyDtoH' '$OUT/p/copylat-forced.svg'"
expect "copylat-forced-paths.svg has each path" sh -c \
	"grep -q 'read: threads' '$OUT/p/copylat-forced-paths.svg' && grep -q 'write: dma' '$OUT/p/copylat-forced-paths.svg'"
expect "copylat.svg of an older run has no gdrmap_copy_*" sh -c \
	"! grep -q gdrmap_copy '$OUT/p/copylat.svg'"
expect "copybw-t3.svg has gdrmap_copy_*" grep -q "gdrmap_copy_" "$OUT/p/copybw-t3.svg"
expect "no -paths plot for a run without --paths" [ ! -e "$OUT/p/copylat-paths.png" ]
expect "doctor: nothing to plot, said so" grep -q "nothing to plot" "$OUT/plot.err"

echo '{"tool": "gdrmap", "command": "copylat", "error": "no GPU", "exit_code": 1}' >"$OUT/err.json"
run_rc e "$plot" -o "$OUT/p" "$OUT/err.json"
expect "a failed run's JSON is refused" [ $rc = 1 ]
echo '{"command": ' >"$OUT/broken.json"
run_rc b "$plot" -o "$OUT/p" "$OUT/broken.json"
expect "broken JSON is refused" [ $rc = 1 ]
run_rc n "$plot"
expect "no file: usage error" [ $rc = 1 ]

done_tests
