#!/bin/sh
# Run test programs one by one, each under a timeout, and print one line per
# test and a closing summary "N passed, N failed, N skipped".
#
# usage: run-tests.sh [-t SECONDS] [-k] [-s SUMMARY_FILE] [-w WRAPPER] PROGRAM...
#   -t  timeout per test (default 300 s)
#   -w  run each program through WRAPPER (e.g. qemu-aarch64)
#   -k  after each test, scan the kernel log for what
#       tests/kernel-log-bad.ere (next to this script) lists, WARNING, BUG,
#       Oops, leaks, and fail the test if any appeared (used inside the VM)
#   -s  append "passed failed skipped" counts to SUMMARY_FILE
# Exit status: 0 if nothing failed, 1 otherwise.
# A test exits 0 (pass), 77 (skip) or anything else (fail).

timeout=300
kscan=0
summary=
wrapper=
while getopts "t:ks:w:" opt; do
	case $opt in
	t) timeout=$OPTARG ;;
	k) kscan=1 ;;
	s) summary=$OPTARG ;;
	w) wrapper=$OPTARG ;;
	*) echo "usage: $0 [-t SECONDS] [-k] [-s FILE] [-w WRAPPER] PROGRAM..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

pass=0 fail=0 skip=0
if [ $kscan = 1 ]; then
	patterns=$(dirname "$0")/kernel-log-bad.ere
	[ -r "$patterns" ] || { echo "$0: no $patterns" >&2; exit 2; }
	klog_bad=$(grep -v -e '^#' -e '^$' "$patterns" | tr '\n' '|' | sed 's/|$//')
fi

for t in "$@"; do
	name=$(basename "$t")
	log=$(mktemp)
	[ $kscan = 1 ] && dmesg -c >/dev/null 2>&1
	start=$(date +%s)
	timeout -k 10 "$timeout" $wrapper "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	kmsg=
	if [ $kscan = 1 ]; then
		kmsg=$(dmesg -c 2>/dev/null | grep -E "$klog_bad")
	fi
	if [ $rc = 0 ] && [ -z "$kmsg" ]; then
		pass=$((pass + 1)); verdict=PASS
	elif [ $rc = 77 ] && [ -z "$kmsg" ]; then
		skip=$((skip + 1)); verdict=SKIP
	else
		fail=$((fail + 1)); verdict=FAIL
	fi
	[ $rc = 124 ] && verdict="$verdict (timed out after ${timeout}s)"
	echo "$verdict $name (${secs}s) $(tail -n 1 "$log")"
	if [ "${verdict%% *}" = FAIL ] || [ -n "$VERBOSE" ]; then
		sed 's/^/    /' "$log" | tail -n 60
		[ -n "$kmsg" ] && echo "$kmsg" | sed 's/^/    kernel: /'
	fi
	rm -f "$log"
done

[ -n "$summary" ] && echo "$pass $fail $skip" >>"$summary"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
