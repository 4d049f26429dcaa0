# Shared by tests/tools/*.sh (POSIX sh; busybox sh in the VM).
# GDRMAP and JSONQ name the programs under test; OUT is a scratch dir.

GDRMAP=${GDRMAP:-build/tools/gdrmap}
JSONQ=${JSONQ:-build/tests/tools/jsonq}
# GDRMAP_TEST_DEVICE: the GPU the commands are asked about (their -d), as
# the VM runs them on its second simulated GPU; unset, each one's default.
dev=${GDRMAP_TEST_DEVICE:-}
dev_opt=${dev:+-d $dev}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
passed=0 failed=0 skipped=0

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# expect WHAT CONDITION...: run the condition, count it.
expect() {
	what=$1
	shift
	if "$@"; then ok; else bad "$what"; fi
}

# run_rc NAME CMD...: run, keep stdout/stderr in $OUT/NAME.{out,err},
# leave the exit status in $rc.
run_rc() {
	name=$1
	shift
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	rc=$?
}

# jq_is FILE PATH VALUE: the value at PATH is VALUE.
jq_is() {
	v=$("$JSONQ" "$1" "$2" 2>/dev/null) && [ "$v" = "$3" ] ||
		{ echo "  $1 $2 = '${v:-missing}', want '$3'" >&2; return 1; }
}

# jq_has FILE PATH...: every PATH exists.
jq_has() {
	f=$1
	shift
	"$JSONQ" "$f" "$@" >/dev/null
}

# jq_num FILE PATH: the value is a number (not null).
jq_num() {
	v=$("$JSONQ" "$1" "$2" 2>/dev/null) || return 1
	case $v in
	'' | *[!0-9.eE+-]*) echo "  $1 $2 = '$v', not a number" >&2; return 1 ;;
	esac
}

done_tests() {
	if [ $skipped -gt 0 ]; then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
	[ $failed -gt 0 ] && exit 1
	[ $passed = 0 ] && [ $skipped -gt 0 ] && exit 77
	exit 0
}

# rc_in RC CODE...: RC is one of the CODEs.
rc_in() {
	r=$1
	shift
	for c in "$@"; do
		[ "$r" = "$c" ] && return 0
	done
	return 1
}
