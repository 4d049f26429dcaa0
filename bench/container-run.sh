#!/bin/sh
# On a GPU machine (a container, as the H100/H200 ones are): the consumer
# of packaging/container/ and `gdrmap doctor`, with the Vulkan loader
# absent and then present, recording what they print.
#
# usage: bench/container-run.sh OUTDIR        (from the top of the tree)
#
# The loader comes from Debian's libvulkan1, libglvnd0 and libegl1 packages left in
# .gl/ (as for bench/gpu-run.sh), unpacked here into a private directory
# and put on LD_LIBRARY_PATH, so nothing is installed and the cases are
# independent.  Where the system already has a loader (or libEGL), the
# cases without it hide it with a private mount (unshare -m); if that is
# not allowed they are skipped and the summary says so.
#
# Cases, each kept in OUTDIR/CASE.{doctor.txt,doctor.json,consumer.txt}:
#   absent         no loader, no libglvnd: gdrmap_open must fail naming the loader
#   loader-only    libvulkan1 without libglvnd0: works, or names what is missing
#   no-egl         libvulkan1 and libglvnd0 without libegl1: the NVIDIA driver
#                  opens libEGL.so.1 when Vulkan starts; fails naming libegl1
#   present        all three: gdrmap_open uses vulkan, the consumer's bytes come back,
#                  doctor exits 0 and says cuMemCreate memory is pinnable
#   caps-compute   both, NVIDIA_DRIVER_CAPABILITIES=compute,utility (the
#                  driver is mounted anyway): still works, not blamed on it
#   icd-hidden     VK_DRIVER_FILES=/nonexistent/nvidia_icd.json: fails naming it
#   icd-broken     a manifest whose library does not exist: fails naming it
# Exit 0 if every expectation held, 1 if not, 77 without a GPU.
set -u
out=${1:?usage: $0 OUTDIR}
build=${BUILD:-/tmp/gdrmap-container-build}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no NVIDIA GPU here (nvidia-smi -L fails)"
	exit 77
fi

make -j"$(nproc)" O="$build" lib tools >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }
cc -std=c11 -Wall -Wextra -Werror -Iinclude -o "$build/consumer" \
	packaging/container/consumer.c -L"$build/lib" -lgdrapi \
	-Wl,-rpath,"$build/lib" >>"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log"; exit 1; }
g=$build/tools/gdrmap
jsonq=$build/tests/tools/jsonq

# The packages of .gl/, each unpacked into its own directory.
vk=$build/gl
rm -rf "$vk"
for p in libvulkan1 libglvnd0 libegl1; do
	deb=$(ls .gl/${p}_*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] && mkdir -p "$vk/$p" && dpkg -x "$deb" "$vk/$p"
done
libdir() { echo "$vk/$1/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"; }
system_loader=$(ldconfig -p | awk '/libvulkan\.so\.1 / {print $NF}')
system_egl=$(ldconfig -p | awk '/libEGL\.so\.1 / {print $NF}')

{
	date -u
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id,uuid --format=csv,noheader 2>&1
	uname -r
	echo "commit: ${GDRMAP_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
	echo "NVIDIA_DRIVER_CAPABILITIES=${NVIDIA_DRIVER_CAPABILITIES:-(unset)}"
	echo "NVIDIA_VISIBLE_DEVICES=${NVIDIA_VISIBLE_DEVICES:-(unset)}"
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
	echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-(unset)} VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-(unset)}"
	ls -l /.dockerenv /run/.containerenv 2>&1
	echo "system loader: ${system_loader:-none}"
	echo ".gl unpacked: $(ls "$vk" 2>/dev/null | tr '\n' ' ')"
	echo "== ICD manifests"
	for f in /etc/vulkan/icd.d/*.json /usr/share/vulkan/icd.d/*.json \
		/usr/local/share/vulkan/icd.d/*.json /usr/local/nvidia/share/vulkan/icd.d/*.json; do
		[ -f "$f" ] && { echo "$f:"; cat "$f"; }
	done
	echo "== what libGLX_nvidia.so.0 links (the NVIDIA Vulkan driver)"
	glx=$(ldconfig -p | awk '/libGLX_nvidia\.so\.0 / {print $NF; exit}')
	[ -n "$glx" ] && { readelf -d "$glx" 2>&1 | grep NEEDED; ldd "$glx" 2>&1; }
	echo "== libglvnd on the system"
	ldconfig -p | grep -E 'libGLdispatch|libX11\.so|libXext\.so' || echo none
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

passed=0 failed=0 skipped=0
expect() {
	what=$1
	shift
	if "$@"; then passed=$((passed + 1)); echo "  ok: $what"
	else failed=$((failed + 1)); echo "  FAIL: $what"; fi
}

# run CASE HIDE LIBDIRS VAR=VALUE...: doctor and the consumer with the
# system's libraries HIDE (files, space-separated) out of sight, those
# library directories first on LD_LIBRARY_PATH and those variables.
run() {
	c=$1 hide=$2 dirs=$3
	shift 3
	echo "== $c"
	for what in doctor.txt doctor.json consumer.txt; do
		case $what in
		doctor.txt) cmd="$g doctor" ;;
		doctor.json) cmd="$g doctor --json" ;;
		consumer.txt) cmd=$build/consumer ;;
		esac
		if [ -n "$hide" ]; then
			# shellcheck disable=SC2016
			env LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:-}" "$@" \
				unshare -m sh -c 'for f in $1; do mount --bind /dev/null "$f" || exit 99; done; shift; exec "$@"' \
				sh "$hide" $cmd >"$out/$c.$what" 2>&1
		else
			env LD_LIBRARY_PATH="$dirs${LD_LIBRARY_PATH:-}" "$@" \
				$cmd >"$out/$c.$what" 2>&1
		fi
		echo $? >"$out/$c.$what.rc"
	done
	sed 's/^/    /' "$out/$c.consumer.txt"
	echo "    (consumer exit $(cat "$out/$c.consumer.txt.rc"), doctor exit $(cat "$out/$c.doctor.txt.rc"))"
}
rc() { cat "$out/$1.$2.rc"; }
says() { grep -qF -- "$2" "$out/$1.consumer.txt"; }
# Every failure of gdrmap_open's vulkan backend lists its causes.
causes_named() {
	[ "$(rc "$1" consumer.txt)" = 0 ] ||
		{ says "$1" "what stops it here:" && grep -q '^    - ' "$out/$1.consumer.txt"; }
}
finding() {	# CASE INDEX: the state of module-free finding INDEX
	"$jsonq" "$out/$1.doctor.json" ".module_free.findings[$2].state" 2>/dev/null
}

hidden="$system_loader $system_egl"
if [ -n "${hidden# }" ] && ! unshare -m true 2>/dev/null; then
	echo "== absent, loader-only, no-egl: SKIPPED (the loader or libEGL is installed and unshare -m is not allowed)"
	skipped=$((skipped + 3))
else
	run absent "${hidden# }" ""
	expect "absent: gdrmap_open fails" [ "$(rc absent consumer.txt)" = 1 ]
	expect "absent: and names the loader" says absent "libvulkan.so.1"
	expect "absent: doctor fails the vulkan loader check" grep -q '^\[fail\] vulkan loader ' "$out/absent.doctor.txt"
	expect "absent: doctor exits 1" [ "$(rc absent doctor.txt)" = 1 ]
	if [ -d "$vk/libvulkan1" ]; then
		run loader-only "${hidden# }" "$(libdir libvulkan1):"
		expect "loader-only: works, or names every cause" causes_named loader-only
	fi
	if [ -d "$vk/libvulkan1" ] && [ -d "$vk/libglvnd0" ]; then
		run no-egl "${hidden# }" "$(libdir libvulkan1):$(libdir libglvnd0):"
		expect "no-egl: gdrmap_open fails" [ "$(rc no-egl consumer.txt)" = 1 ]
		expect "no-egl: and names libEGL.so.1 and libegl1" \
			sh -c "grep -qF libEGL.so.1 '$out/no-egl.consumer.txt' && grep -qF 'apt-get install libegl1' '$out/no-egl.consumer.txt'"
		expect "no-egl: doctor fails the vulkan icd library check" [ "$(finding no-egl 4)" = bad ]
	fi
fi

if [ -d "$vk/libvulkan1" ] && [ -d "$vk/libglvnd0" ] && [ -d "$vk/libegl1" ]; then
	both="$(libdir libvulkan1):$(libdir libglvnd0):$(libdir libegl1):"
elif [ -n "$system_loader" ]; then
	both=
else
	echo "no Vulkan loader: neither .gl/libvulkan1_*.deb nor an installed one"
	echo "$passed passed, $((failed + 1)) failed, $skipped skipped"
	exit 1
fi
run present "" "$both"
expect "present: the consumer works" [ "$(rc present consumer.txt)" = 0 ]
expect "present: with the vulkan backend" says present "backend vulkan"
expect "present: doctor exits 0" [ "$(rc present doctor.txt)" = 0 ]
expect "present: gdrmap_open's backend is vulkan (gdr_open steps aside)" \
	[ "$("$jsonq" "$out/present.doctor.json" .gdrmap_open_backend)" = vulkan ]
expect "present: cuMemCreate memory pinnable without a module" \
	[ "$("$jsonq" "$out/present.doctor.json" .pinnable.cumemcreate_posix_fd.without_module)" = true ]
expect "present: the vulkan gpu check passes" [ "$(finding present 5)" = ok ]

run caps-compute "" "$both" NVIDIA_DRIVER_CAPABILITIES=compute,utility
expect "caps-compute: still works" [ "$(rc caps-compute consumer.txt)" = 0 ]
expect "caps-compute: the container is not blamed" [ "$(finding caps-compute 1)" = ok ]

run icd-hidden "" "$both" VK_DRIVER_FILES=/nonexistent/nvidia_icd.json
expect "icd-hidden: gdrmap_open fails" [ "$(rc icd-hidden consumer.txt)" = 1 ]
expect "icd-hidden: names the missing manifest and where it looked" \
	says icd-hidden "no NVIDIA Vulkan driver manifest (nvidia_icd.json): looked in /nonexistent/nvidia_icd.json"
expect "icd-hidden: doctor fails the vulkan icd check" [ "$(finding icd-hidden 3)" = bad ]

printf '{"file_format_version": "1.0.1", "ICD": {"library_path": "libGLX_nvidia_absent.so.0", "api_version": "1.3.0"}}\n' \
	>"$out/nvidia_icd.json"
run icd-broken "" "$both" VK_DRIVER_FILES="$out/nvidia_icd.json"
expect "icd-broken: gdrmap_open fails" [ "$(rc icd-broken consumer.txt)" = 1 ]
expect "icd-broken: names the library that does not load" \
	says icd-broken "libGLX_nvidia_absent.so.0, named by $out/nvidia_icd.json, cannot work"
expect "icd-broken: doctor fails the vulkan icd library check" [ "$(finding icd-broken 4)" = bad ]

if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped" | tee "$out/summary.txt"
else
	echo "$passed passed, $failed failed" | tee "$out/summary.txt"
fi
[ $failed = 0 ]
