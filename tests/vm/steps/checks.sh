# Shell twin of tests/common/check.h for the VM's module steps: count
# checks, print the closing line, exit 0 pass / 1 fail.
passed=0 failed=0

# The modules of this pass (init sets the proprietary stand-in's directory
# and flavour for its pass).
kodir=${GDRMAP_VM_KODIR:-/lib/gdrmap}
flavor=${GDRMAP_VM_FLAVOR:-opensource}

check() {
	# check DESCRIPTION COMMAND...: the command's status is the verdict.
	desc=$1; shift
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: $desc" >&2
	fi
}

done_checks() {
	echo "$passed passed, $failed failed"
	[ $failed = 0 ]
}

# One of nvsim's counters in /proc/driver/nvsim (see sim/README.md).
nvsim_count() {
	cat "/proc/driver/nvsim/$1" 2>/dev/null || echo "unreadable"
}

# gdrdrv's count of pins not yet released; "" when not exported (NVIDIA's
# gdrdrv has it only with dbg_enabled=1, ours always).
gdrdrv_outstanding() {
	f=/proc/driver/gdrdrv/nv_get_pages_refcount
	[ -r "$f" ] && cat "$f" || echo ""
}

is_zero_or_unknown() {
	[ -z "$1" ] || [ "$1" = 0 ]
}
