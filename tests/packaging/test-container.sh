#!/bin/sh
# The container recipe (packaging/container/) without Docker, as root:
#   1. a Debian 12 root file system from Debian's archive
#      (packaging/rootfs.sh: minbase as debian:12-slim is, plus the
#      Dockerfile's RUNTIME_PACKAGES; a first run downloads it: minutes;
#      later runs unpack the tarball cached in ~/.cache/gdrmap-rootfs);
#   2. the .debs built from this tree (build-debs.sh, or those in
#      GDRMAP_DEBS) installed into it with dpkg, and the consumer
#      (packaging/container/consumer.c) compiled here and copied in;
#   3. in a chroot made to look like a container (/.dockerenv) on a GPU
#      machine (an NVIDIA GPU in its /sys/bus/pci) whose GPU was not
#      passed in, `gdrmap doctor` and the consumer, with the Vulkan loader
#      and without, with NVIDIA_DRIVER_CAPABILITIES granting graphics and
#      not: each case must name exactly its causes, doctor as [fail]
#      checks and exit 1, the consumer with the same words (the library
#      runs the same diagnosis) and exit 1; and, without the made-up GPU
#      and outside a container, doctor must only warn and exit 0.
# Exit 0 pass, 1 fail, 77 skip (not root, no mmdebstrap).  -k keeps the
# work directory.  The root file system's packages come from the Debian
# archive of this machine's apt sources; GDRMAP_DEBIAN_MIRROR overrides it.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
O=${O:-$top/build}
jsonq=$O/tests/tools/jsonq
chroot=$(command -v chroot)
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES LD_LIBRARY_PATH || true
name=container
. "$top/tests/packaging/roottest.sh"
[ -x "$jsonq" ] || die "$jsonq is missing: make tools first"

if [ -n "${GDRMAP_DEBS:-}" ]; then
	debs=$GDRMAP_DEBS
else
	step "build the packages (build-debs.sh)"
	debs=$work/debs
	"$top/packaging/build-debs.sh" "$debs" >"$work/build.out" 2>&1 ||
		{ cat "$work/build.out"; die "building the packages"; }
fi
for p in libvulkan1 libglvnd0 libegl1; do
	expect "libgdrapi2 recommends $p" sh -c \
		"dpkg-deb -f $debs/libgdrapi2_*.deb Recommends | grep -qw $p"
done

step "install libgdrapi2 and gdrmap-tools into it (dpkg), and the consumer"
mkdir -p "$root/tmp/debs"
cp "$debs"/libgdrapi2_*.deb "$debs"/gdrmap-tools_*.deb "$root/tmp/debs/"
chroot "$root" sh -c 'dpkg -i /tmp/debs/*.deb' >"$work/dpkg.log" 2>&1 ||
	{ cat "$work/dpkg.log"; die "dpkg -i in the root file system"; }
cc -std=c11 -Wall -Wextra -Werror -I"$top/include" -o "$root/usr/local/bin/consumer" \
	"$top/packaging/container/consumer.c" -L"$O/lib" -lgdrapi ||
	die "compiling the consumer"
# NCCL, aws-ofi-nccl and older NVSHMEM dlopen("libgdrapi.so"): the
# runtime package alone must answer that name.
cc -std=c11 -Wall -Wextra -Werror -I"$top/include" -I"$top/tests/common" \
	-o "$root/usr/local/bin/dlopen_check" "$top/tests/abi/dlopen_check.c" -ldl ||
	die "compiling dlopen_check"
step "the runtime package alone answers dlopen(\"libgdrapi.so\") and (\"libgdrapi.so.2\")"
dl_rc=0
chroot "$root" /usr/local/bin/dlopen_check >"$work/dlopen.out" 2>&1 || dl_rc=$?
expect "dlopen_check in the root file system (exit $dl_rc): $(tail -3 "$work/dlopen.out")" [ $dl_rc = 0 ]

# A container on a GPU machine whose GPU it was not given.
fake_gpu() {
	: >"$root/.dockerenv"
	mkdir -p "$root/sys/bus/pci/devices/0000:65:00.0"
	echo 0x10de >"$root/sys/bus/pci/devices/0000:65:00.0/vendor"
	echo 0x030200 >"$root/sys/bus/pci/devices/0000:65:00.0/class"
}

# run CASE VAR=VALUE...: doctor (text and JSON) and the consumer in the
# chroot, with only these variables set.
run() {
	name=$1
	shift
	for what in doctor doctor.json consumer; do
		case $what in
		doctor) cmd="gdrmap doctor" ;;
		doctor.json) cmd="gdrmap doctor --json" ;;
		consumer) cmd=consumer ;;
		esac
		# shellcheck disable=SC2086
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root "$@" \
			"$chroot" "$root" $cmd >"$work/$name.$what" \
			2>"$work/$name.$what.err" && rc=0 || rc=$?
		echo $rc >"$work/$name.$what.rc"
	done
	"$jsonq" "$work/$name.doctor.json" || bad "$name: doctor --json is not valid JSON"
}

# finding CASE NAME STATE: the module-free finding NAME is STATE, and the
# text report and the consumer say it as they should.
finding() {
	c=$1 name=$2 want=$3 i=0 got=
	for n in "nvidia devices" container "vulkan loader" "vulkan icd" \
		"vulkan icd library" "vulkan gpu"; do
		if [ "$n" = "$name" ]; then
			got=$("$jsonq" "$work/$c.doctor.json" ".module_free.findings[$i].state")
			msg=$("$jsonq" "$work/$c.doctor.json" ".module_free.findings[$i].message")
		fi
		i=$((i + 1))
	done
	expect "$c: $name is $want (is $got: $msg)" [ "$got" = "$want" ]
	case $want in
	bad)
		expect "$c: doctor fails '$name'" grep -qF "[fail] $name " "$work/$c.doctor"
		expect "$c: the consumer names '$name': $msg" grep -qF -- "$msg" "$work/$c.consumer" ;;
	ok)
		expect "$c: doctor passes '$name'" grep -qF "[ok  ] $name " "$work/$c.doctor"
		expect "$c: the consumer does not name '$name'" sh -c \
			"! grep -qF -- \"\$1\" \"\$2\"" sh "$msg" "$work/$c.consumer" ;;
	esac
}

# exits CASE DOCTOR CONSUMER: their exit statuses.
exits() {
	expect "$1: doctor exits $2 (got $(cat "$work/$1.doctor.rc"))" [ "$(cat "$work/$1.doctor.rc")" = "$2" ]
	expect "$1: doctor --json exits $2 too" [ "$(cat "$work/$1.doctor.json.rc")" = "$2" ]
	expect "$1: the consumer exits $3 (got $(cat "$work/$1.consumer.rc"))" [ "$(cat "$work/$1.consumer.rc")" = "$3" ]
	expect "$1: the consumer says why gdrmap_open failed" grep -q "^gdrmap_open failed (" "$work/$1.consumer"
}

fake_gpu
step "with the loader: graphics granted, not granted, left unset"
run loader-graphics NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics
exits loader-graphics 1 1
finding loader-graphics "nvidia devices" bad
finding loader-graphics container ok
finding loader-graphics "vulkan loader" ok
finding loader-graphics "vulkan icd" bad
finding loader-graphics "vulkan icd library" unknown
expect "loader-graphics: the devices fix is --gpus all" grep -q 'docker run --gpus all' "$work/loader-graphics.doctor"
expect "loader-graphics: the ICD search is listed" \
	grep -q 'looked in /root/.config/vulkan/icd.d, /etc/xdg/vulkan/icd.d, /etc/vulkan/icd.d, /root/.local/share/vulkan/icd.d, /usr/local/share/vulkan/icd.d, /usr/share/vulkan/icd.d (VK_DRIVER_FILES and VK_ICD_FILENAMES unset, VK_ADD_DRIVER_FILES unset)' \
	"$work/loader-graphics.consumer"
expect "loader-graphics: the GPU on the bus fails the cuda check" grep -q '^\[fail\] cuda ' "$work/loader-graphics.doctor"

run loader-compute NVIDIA_DRIVER_CAPABILITIES=compute,utility
exits loader-compute 1 1
finding loader-compute container bad
finding loader-compute "vulkan loader" ok
finding loader-compute "vulkan icd" bad
expect "loader-compute: the fix grants graphics" \
	grep -q 'NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics; where graphics cannot be granted, load gdrdrv on the host' \
	"$work/loader-compute.consumer"

run loader-unset
exits loader-unset 1 1
finding loader-unset container bad
expect "loader-unset: unset is the runtime's default" \
	grep -q "NVIDIA_DRIVER_CAPABILITIES unset: the NVIDIA runtime's default compute,utility" "$work/loader-unset.doctor"

step "a manifest whose library is not there"
mkdir -p "$root/opt/nvidia"
printf '{"file_format_version": "1.0.1", "ICD": {"library_path": "libGLX_nvidia.so.0", "api_version": "1.4.312"}}\n' \
	>"$root/opt/nvidia/nvidia_icd.json"
run manifest NVIDIA_DRIVER_CAPABILITIES=all VK_DRIVER_FILES=/opt/nvidia/nvidia_icd.json
exits manifest 1 1
finding manifest "vulkan icd" ok
finding manifest "vulkan icd library" bad
finding manifest container ok
expect "manifest: names the missing library" \
	grep -q 'libGLX_nvidia.so.0, named by /opt/nvidia/nvidia_icd.json, cannot work: libGLX_nvidia.so.0: cannot open shared object file' \
	"$work/manifest.consumer"

step "without the loader (dpkg --purge libvulkan1)"
chroot "$root" dpkg --purge libvulkan1 >"$work/purge.log" 2>&1 ||
	{ cat "$work/purge.log"; die "purging libvulkan1"; }
run noloader-graphics NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics
exits noloader-graphics 1 1
finding noloader-graphics "vulkan loader" bad
finding noloader-graphics container ok
finding noloader-graphics "vulkan icd" bad
finding noloader-graphics "nvidia devices" bad
expect "noloader-graphics: the fix installs libvulkan1" grep -q 'apt-get install libvulkan1' "$work/noloader-graphics.consumer"

run noloader-compute NVIDIA_DRIVER_CAPABILITIES=compute,utility
exits noloader-compute 1 1
finding noloader-compute "vulkan loader" bad
finding noloader-compute container bad
finding noloader-compute "vulkan icd" bad

step "no GPU and not a container: warnings only"
rm -rf "$root/.dockerenv" "$root/sys/bus"
run nogpu
exits nogpu 0 1
expect "nogpu: no check fails" sh -c "! grep -q '^\[fail\]' '$work/nogpu.doctor'"
expect "nogpu: the loader's absence warns" grep -q '^\[warn\] vulkan loader ' "$work/nogpu.doctor"
finding nogpu container ok
expect "nogpu: not a container" grep -q 'not in a container' "$work/nogpu.doctor"

for f in "$work"/*.doctor "$work"/*.consumer; do
	[ $failed = 0 ] && break
	echo "--- $(basename "$f")"; cat "$f"
done
step "done"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
