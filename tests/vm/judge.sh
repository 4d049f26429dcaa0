#!/bin/sh
# Judge one VM run from its serial log: show the test results, take the
# guest's summary line, and count a failure for a missing summary (the VM
# died, hung or timed out) or for any WARNING/BUG/Oops/leak anywhere in the
# guest's kernel log.
#
# usage: judge.sh SERIAL_LOG SUMMARY_FILE|"" QEMU_STATUS KVER SECONDS \
#                 [RESULT_PREFIX RESULTS_FILE]
# With the last two, "RESULT_PREFIX passed failed skipped" is appended to
# RESULTS_FILE (the kernel matrix's results, tests/kernels/report.sh).
set -eu

[ $# = 5 ] || [ $# = 7 ] ||
	{ echo "usage: $0 LOG SUMMARY QEMU_STATUS KVER SECONDS [PREFIX RESULTS]" >&2; exit 2; }
log=$1 summary=$2 qrc=$3 kver=$4 secs=$5 prefix=${6:-} results=${7:-}
# What fails a run, as run-tests.sh -k fails a test inside it.
klog_bad=$(grep -v -e '^#' -e '^$' "$(dirname "$0")/../kernel-log-bad.ere" | tr '\n' '|' | sed 's/|$//')
[ -n "$klog_bad" ] || { echo "judge: no patterns in tests/kernel-log-bad.ere" >&2; exit 2; }

# Results, without the kernel log dump.
sed '/^GDRMAP-VM-DMESG-BEGIN/,$d' "$log" | tr -d '\r'

set -- $(tr -d '\r' <"$log" | sed -n 's/^GDRMAP-VM-SUMMARY: \([0-9]* [0-9]* [0-9]*\)$/\1/p')
if [ $# = 3 ]; then
	pass=$1 fail=$2 skip=$3
else
	pass=0 fail=1 skip=0
	case $qrc in
	124|137) why="timed out (GDRMAP_VM_TIMEOUT)" ;;
	*) why="stopped without a summary (qemu exit $qrc)" ;;
	esac
	echo "FAIL vm-$kver: the VM $why; last lines of $log:"
	tail -n 40 "$log" | tr -d '\r' | sed 's/^/    /'
fi

# The guest's whole kernel log if it got that far, else whatever the console
# showed (a panic prints there).
bad=$(tr -d '\r' <"$log" | sed -n '/^GDRMAP-VM-DMESG-BEGIN/,/^GDRMAP-VM-DMESG-END/p' |
	grep -E "$klog_bad" || true)
[ -n "$bad" ] || bad=$(tr -d '\r' <"$log" | grep -E '^\[ *[0-9]+\.[0-9]+\] ' |
	grep -E "$klog_bad|Kernel panic" || true)
if [ -n "$bad" ]; then
	fail=$((fail + 1))
	echo "FAIL vm-$kver: the kernel log has warnings or errors:"
	echo "$bad" | head -n 80 | sed 's/^/    kernel: /'
fi

[ -n "$summary" ] && echo "$pass $fail $skip" >>"$summary"
[ -n "$results" ] && echo "$prefix $pass $fail $skip" >>"$results"
echo "== VM $kver: $pass passed, $fail failed, $skip skipped (${secs}s; log $log)"
[ $fail = 0 ]
