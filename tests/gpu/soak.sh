#!/bin/sh
# The GPU tests over and over for a while, on a GPU machine: every
# tests/gpu program in rounds (each one on every GPU, as always) until
# SECONDS have passed, a round always finished, and at least one round
# (the clock's second may tick before the first: a soak that ran nothing
# would pass having checked nothing).  After each round, with no test
# process left, every GPU's used memory must be back where it was before
# the first: what a pin, a mapping or a helper thread kept would show
# there.
#
# usage: tests/gpu/soak.sh SECONDS OUTDIR PROGRAM...
#   (make check-gpu-soak SOAK_S=600 runs it on the built tests/gpu)
# OUTDIR gets rounds.txt (one line per round: seconds, the round's
# summary, each GPU's used MiB), fail-N.log for a failed round, and
# summary.txt.  A round fails if a test failed or a GPU's memory did not
# come back.  Exit 0 if none failed, 1 otherwise, 77 without a GPU; the
# closing line "N passed, N failed" counts rounds.
set -u
secs=${1:?usage: soak.sh SECONDS OUTDIR PROGRAM...}
out=${2:?usage: soak.sh SECONDS OUTDIR PROGRAM...}
shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
# Slack for what the driver itself holds for a while after an exit.
slack_mib=${SOAK_SLACK_MIB:-64}

used() {
	nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits |
		tr -d ' ' | tr '\n' ' '
}

# What a round's memory check found wrong, for rounds.txt.
memory_note() {
	if [ "$1" = "?" ]; then
		echo "memory not readable as numbers: before '$base', now '$now'"
	else
		echo "GPU $1 not back to $base"
	fi
}

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no GPU here (nvidia-smi -L fails)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 77
fi
mkdir -p "$out" || exit 1
: >"$out/rounds.txt"
base=$(used)
start=$(date +%s)
rounds=0 failed=0
while [ $rounds = 0 ] || [ $(($(date +%s) - start)) -lt "$secs" ]; do
	rounds=$((rounds + 1))
	ok=1
	"$here/run-tests.sh" -t 300 "$@" >"$out/round.log" 2>&1 || ok=0
	sleep 1
	now=$(used)
	# The first GPU whose used memory is above where it started, or
	# "?" when the figures cannot be compared (not numbers, another
	# count of GPUs): a reading that says nothing fails the round.
	bad=$(echo "$base|$now" | awk -F'|' -v s="$slack_mib" '{
		n = split($1, b, " "); m = split($2, c, " ")
		if (n == 0 || n != m) { print "?"; exit }
		for (i = 1; i <= n; i++) {
			if (b[i] !~ /^[0-9]+$/ || c[i] !~ /^[0-9]+$/) { print "?"; exit }
			if (c[i] + 0 > b[i] + s) { print i - 1; exit }
		}
	}')
	[ -n "$bad" ] && ok=0
	if [ $ok = 0 ]; then
		failed=$((failed + 1))
		cp "$out/round.log" "$out/fail-$rounds.log"
	fi
	echo "$(($(date +%s) - start)) s: $(tail -1 "$out/round.log"); MiB used: $now${bad:+($(memory_note "$bad"))}" \
		>>"$out/rounds.txt"
done
{
	echo "soak: $rounds rounds in $(($(date +%s) - start)) s, $failed failed"
	echo "GPU memory used before the first round (MiB): $base"
} >"$out/summary.txt"
cat "$out/summary.txt"
echo "$((rounds - failed)) passed, $failed failed"
[ $failed = 0 ]
