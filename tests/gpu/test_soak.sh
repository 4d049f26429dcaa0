#!/bin/sh
# tests/gpu/soak.sh's verdicts, with a made-up nvidia-smi (no GPU needed):
# rounds that pass with the memory back pass; a failing test, or a GPU
# whose used memory stays up after a round, or memory figures that cannot
# be compared, fail the round; a soak too short for a whole second still
# runs a round; no GPU skips.
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

expect() {
	what=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $what" >&2
	fi
}

mkdir "$tmp/bin"
cat >"$tmp/bin/nvidia-smi" <<EOF
#!/bin/sh
[ -e "$tmp/nogpu" ] && exit 9
case "\$*" in -L) echo "GPU 0: made up"; exit 0 ;; esac
cat "$tmp/mem"
EOF
printf '#!/bin/sh\necho "1 passed, 0 failed"\n' >"$tmp/ok"
printf '#!/bin/sh\necho "0 passed, 1 failed"; exit 1\n' >"$tmp/bad"
printf '#!/bin/sh\nprintf "22\\n900\\n" >"%s/mem"\n' "$tmp" >"$tmp/keeps"
chmod +x "$tmp/bin/nvidia-smi" "$tmp/ok" "$tmp/bad" "$tmp/keeps"
soak() {
	PATH=$tmp/bin:$PATH "$here/soak.sh" "$@" >"$tmp/log" 2>&1
}

printf '22\n30\n' >"$tmp/mem"
soak 2 "$tmp/o1" "$tmp/ok"
expect "passing rounds, memory back: exit 0 (got $?)" [ $? = 0 ]
# As many lines as the summary counts rounds (how many fit in the two
# seconds depends on the machine's load and the clock's second).
n=$(sed -n 's/^soak: \([0-9]*\) rounds.*/\1/p' "$tmp/o1/summary.txt")
a_line_per_round() {
	[ "${n:-0}" -ge 1 ] && [ "$(wc -l <"$tmp/o1/rounds.txt")" = "$n" ]
}
expect "a line per round ($n rounds)" a_line_per_round
expect "the closing line counts rounds" grep -Eq '^[0-9]+ passed, 0 failed$' "$tmp/log"

soak 1 "$tmp/o2" "$tmp/ok" "$tmp/bad"
expect "a failing test fails the soak (got $?)" [ $? = 1 ]
expect "the failed round's log is kept" [ -s "$tmp/o2/fail-1.log" ]

printf '22\n30\n' >"$tmp/mem"
soak 1 "$tmp/o3" "$tmp/keeps"
expect "memory not back fails the soak (got $?)" [ $? = 1 ]
expect "it names the GPU" grep -q 'GPU 1 not back' "$tmp/o3/rounds.txt"

printf '22\n30\n' >"$tmp/mem"
printf '#!/bin/sh\nprintf "[N/A]\\n30\\n" >"%s/mem"\n' "$tmp" >"$tmp/na"
chmod +x "$tmp/na"
soak 1 "$tmp/o5" "$tmp/na"
expect "memory not readable fails the soak (got $?)" [ $? = 1 ]
expect "it says so" grep -q 'not readable' "$tmp/o5/rounds.txt"

printf '22\n30\n' >"$tmp/mem"
printf '#!/bin/sh\nprintf "22\\n" >"%s/mem"\n' "$tmp" >"$tmp/gone"
chmod +x "$tmp/gone"
soak 1 "$tmp/o6" "$tmp/gone"
expect "a GPU missing after a round fails the soak (got $?)" [ $? = 1 ]

# No time at all still runs a round: a soak that checked nothing must
# not pass.
printf '22\n30\n' >"$tmp/mem"
soak 0 "$tmp/o7" "$tmp/bad"
expect "a soak of 0 s runs a round, which fails (got $?)" [ $? = 1 ]
expect "and counts it" grep -q '^soak: 1 rounds' "$tmp/o7/summary.txt"

touch "$tmp/nogpu"
soak 1 "$tmp/o4" "$tmp/ok"
expect "no GPU: exit 77 (got $?)" [ $? = 77 ]

echo "$passed passed, $failed failed"
[ $failed = 0 ]
