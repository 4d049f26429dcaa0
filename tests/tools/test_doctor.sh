#!/bin/sh
# gdrmap doctor: runs anywhere (no GPU, no root), exits 0 unless a check
# failed, and its JSON has every documented key, consistent with its text.
# With GDRMAP_TEST_DEVICE, about that GPU only (-d).
. "$(dirname "$0")/harness.sh"

run_rc text "$GDRMAP" doctor $dev_opt
expect "doctor exits 0 or 1 (got $rc)" rc_in $rc 0 1
text_rc=$rc
expect "doctor prints checks" grep -q '^\[ok  \] library' "$OUT/text.out"
expect "doctor writes nothing on stderr" [ ! -s "$OUT/text.err" ]

run_rc json "$GDRMAP" doctor --json $dev_opt
f=$OUT/json.out
expect "doctor --json exits as the text run did" [ $rc = $text_rc ]
expect "doctor --json is valid JSON" "$JSONQ" "$f"
expect "doctor --json has the documented keys" jq_has "$f" \
	.tool .command .version .simulated .gpu_present \
	.host.kernel .host.arch .host.cpu_model \
	.library.api_version .library.path \
	.cuda.available .cuda.nvidia_driver_version .cuda.driver_version .cuda.device_count .cuda.error \
	.gpus .backends .default_backend .gdrmap_open_backend .nvidia_peermem_loaded \
	.iommu.active .iommu.cmdline .nics .topology .checks \
	.summary.ok .summary.warn .summary.fail \
	.module_free.container.detected .module_free.container.signals \
	.module_free.container.kubernetes \
	.module_free.container.nvidia_driver_capabilities \
	.module_free.container.graphics .module_free.nvidia_pci_gpu \
	.module_free.icd_search_replaced_by .module_free.icd_searched \
	.module_free.icd_manifests .module_free.vulkan_devices \
	.module_free.findings \
	.pinnable.cumemcreate_posix_fd.without_module \
	.pinnable.cumemcreate_posix_fd.here .pinnable.cumemalloc.without_module \
	.pinnable.cumemalloc.here .pinnable.cumemalloc.copy_only \
	.pinnable.cumemalloc.copy_only_write_8b_us .pinnable.frameworks
expect "command is doctor" jq_is "$f" .command doctor
expect "tool is gdrmap" jq_is "$f" .tool gdrmap
expect "four backends" jq_is "$f" .backends# 4
i=0
for b in gdrdrv dmabuf rm vulkan; do
	expect "backend $i is $b" jq_is "$f" ".backends[$i].name" $b
	expect "backend $b has its keys" jq_has "$f" ".backends[$i].usable" \
		".backends[$i].reason" ".backends[$i].fix" \
		".backends[$i].self_test.ran" ".backends[$i].self_test.ok"
	if [ "$("$JSONQ" "$f" ".backends[$i].usable")" = false ]; then
		expect "unusable $b says why" [ "$("$JSONQ" "$f" ".backends[$i].reason")" != null ]
		expect "unusable $b says what to do" [ "$("$JSONQ" "$f" ".backends[$i].fix")" != null ]
	fi
	i=$((i + 1))
done

# The module-free findings: one check each unless unknown, with the same
# words; the library, which runs the same code, names every cause too.
expect "six module-free findings" jq_is "$f" .module_free.findings# 6
vulkan_usable=$("$JSONQ" "$f" .backends[3].usable)
"$JSONQ" "$f" .backends[3].reason >"$OUT/vulkan-reason.txt"
i=0
for name in "nvidia devices" container "vulkan loader" "vulkan icd" \
	"vulkan icd library" "vulkan gpu"; do
	expect "finding $i is $name" jq_is "$f" ".module_free.findings[$i].name" "$name"
	state=$("$JSONQ" "$f" ".module_free.findings[$i].state")
	msg=$("$JSONQ" "$f" ".module_free.findings[$i].message")
	line=$(grep -F "] $name " "$OUT/text.out" | grep -F "$msg")
	case $state in
	unknown) expect "$name unknown: no check" [ -z "$line" ] ;;
	ok) expect "$name ok: an ok check" [ "${line#\[ok  \]}" != "$line" ] ;;
	bad)
		expect "$name bad: a warn or fail check" \
			rc_in "$(printf %.6s "$line")" "[warn]" "[fail]"
		expect "$name bad: has a fix" \
			[ "$("$JSONQ" "$f" ".module_free.findings[$i].fix")" != null ]
		[ "$vulkan_usable" = true ] ||
			expect "the library names '$name' too" \
				grep -qF "$msg" "$OUT/vulkan-reason.txt"
		;;
	*) bad "finding $name has state '$state'" ;;
	esac
	i=$((i + 1))
done
expect "the frameworks check says how to get pinnable memory" \
	grep -q 'expandable_segments:True.*gdrmap_mem_alloc' "$OUT/text.out"

# Every check: a name, a verdict, a message; the summary counts them.
n=$("$JSONQ" "$f" .checks#)
expect "some checks ran" [ "$n" -gt 3 ]
okc=0 warnc=0 failc=0 i=0
while [ $i -lt "$n" ]; do
	s=$("$JSONQ" "$f" ".checks[$i].status")
	case $s in
	ok) okc=$((okc + 1)) ;;
	warn) warnc=$((warnc + 1)) ;;
	fail) failc=$((failc + 1)) ;;
	*) bad "check $i has status '$s'" ;;
	esac
	expect "check $i has a message" [ -n "$("$JSONQ" "$f" ".checks[$i].message")" ]
	if [ "$s" != ok ]; then
		expect "check $i ($s) gives advice" [ "$("$JSONQ" "$f" ".checks[$i].advice")" != null ]
	fi
	i=$((i + 1))
done
expect "summary.ok counts" jq_is "$f" .summary.ok $okc
expect "summary.warn counts" jq_is "$f" .summary.warn $warnc
expect "summary.fail counts" jq_is "$f" .summary.fail $failc
expect "exit status follows failed checks" [ $((failc > 0)) = "$rc" ]
lines=$(grep -c '^\[' "$OUT/text.out")
expect "text and JSON list the same checks ($lines, $n)" [ "$lines" = "$n" ]

if [ "$("$JSONQ" "$f" .gpu_present)" = false ]; then
	# This machine has no GPU: doctor must say so and still succeed.
	expect "no GPU: exit 0" [ $rc = 0 ]
	expect "no GPU: cuda.available false" jq_is "$f" .cuda.available false
	expect "no GPU: no gpus listed" jq_is "$f" .gpus# 0
	expect "no GPU: the cuda check warns" jq_is "$f" '.checks[1].status' warn
	expect "no GPU: and says 'no GPU'" grep -q "no GPU" "$OUT/text.out"
	expect "no GPU: no backend chosen" jq_is "$f" .default_backend null
else
	g=$("$JSONQ" "$f" .gpus#)
	expect "GPU present: listed" [ "$g" -ge 1 ]
	expect "GPU 0 has its keys" jq_has "$f" .gpus[0].name \
		.gpus[0].pci_bus_id .gpus[0].numa_node .gpus[0].local_cpus \
		.gpus[0].bar_bytes .gpus[0].memory_bytes \
		.gpus[0].rdma_supported .gpus[0].simulated .gpus[0].acs
	if [ -n "$dev" ]; then
		expect "doctor -d $dev: that GPU only" jq_is "$f" .gpus# 1
		expect "doctor -d $dev: GPU $dev" jq_is "$f" .gpus[0].index "$dev"
	fi
	if [ "$("$JSONQ" "$f" .gpus[0].simulated)" = true ]; then
		expect "simulated GPU: top-level simulated" jq_is "$f" .simulated true
		expect "simulated GPU: banner" grep -q SIMULATED "$OUT/text.out"
	fi
fi

# One GPU asked for that does not exist: a failed check, not a crash.
if [ "$("$JSONQ" "$f" .gpu_present)" = true ]; then
	run_rc nogpu "$GDRMAP" doctor --json -d 1000
	expect "doctor -d 1000 exits 1" [ $rc = 1 ]
	expect "doctor -d 1000 is valid JSON" "$JSONQ" "$OUT/nogpu.out"
fi

# One line of text per check: none ends in a colon that introduced a
# list it left out; advice names checks, never "below" (the JSON has no
# order to point at); the library's path is a real path.
expect "no text line ends with a dangling ':'" sh -c "! grep -n ':\$' '$OUT/text.out'"
expect "no fix or advice points 'below' or 'above'" sh -c \
	"! grep -nE '\"(fix|advice)\": \"[^\"]*( below| above)' '$f'"
lib=$("$JSONQ" "$f" .library.path)
case $lib in
*/../* | */./* | *//*) bad "the library's path is not a real path: $lib" ;;
/*) ok ;;
*) bad "the library's path is not absolute: $lib" ;;
esac
expect "the text shows that path" grep -qF "from $lib" "$OUT/text.out"

# On a terminal the report is wrapped to 79 columns (a word longer than
# the rest of a line stays whole); piped, each check is one line.
if command -v script >/dev/null 2>&1; then
	script -qc "$GDRMAP doctor $dev_opt" /dev/null </dev/null 2>/dev/null | tr -d '\r' >"$OUT/tty.out"
	expect "on a terminal: the same checks" [ "$(grep -c '^\[' "$OUT/tty.out")" = "$(grep -c '^\[' "$OUT/text.out")" ]
	expect "on a terminal: lines of 79 columns, but for single long words" \
		awk 'length > 79 && $0 !~ /^ *(-> )?[^ ]+$/ { print; bad = 1 } END { exit bad }' "$OUT/tty.out"
fi

# A variable that chooses the backend is what every program here gets:
# doctor says so, and fails on a value that names no backend.
run_rc env env GDRMAP_BACKEND=nonsense GDRCOPY_ENABLE_LOGGING=1 \
	"$GDRMAP" doctor --json $dev_opt
expect "doctor with GDRMAP_BACKEND=nonsense exits 1 (got $rc)" [ $rc = 1 ]
expect "... and its JSON is valid" "$JSONQ" "$OUT/env.out"
expect "... names the variable" jq_is "$OUT/env.out" .default_backend_environment GDRMAP_BACKEND=nonsense
expect "... and the library's reason" sh -c "'$JSONQ' '$OUT/env.out' .default_backend_error | grep -q 'GDRMAP_BACKEND=nonsense is not a backend'"
expect "... no default backend" jq_is "$OUT/env.out" .default_backend null
run_rc envtext env GDRMAP_BACKEND=nonsense "$GDRMAP" doctor $dev_opt
expect "GDRMAP_BACKEND=nonsense: a failed backend check naming it" \
	grep -q '^\[fail\] backend  .*GDRMAP_BACKEND=nonsense is not a backend' "$OUT/envtext.out"
run_rc dmabuf env GDRCOPY_USE_DMABUF_MMAP=1 "$GDRMAP" doctor $dev_opt
expect "GDRCOPY_USE_DMABUF_MMAP=1: the backend check names it" \
	grep -q '^\[.*\] backend  .*GDRCOPY_USE_DMABUF_MMAP=1' "$OUT/dmabuf.out"
if [ "$("$JSONQ" "$f" .gpu_present)" = false ]; then
	# A GPU asked for on a machine without CUDA: said, and a failure.
	run_rc nodev "$GDRMAP" doctor -d 99
	expect "no GPU: doctor -d 99 exits 1 (got $rc)" [ $rc = 1 ]
	expect "no GPU: doctor -d 99 says there is no device 99" \
		grep -q '^\[fail\] gpu .*no CUDA device 99' "$OUT/nodev.out"
fi

done_tests
