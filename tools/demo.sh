#!/bin/sh
# The demo (`make demo`): gdrmap doctor, copylat and pplat on this
# machine's GPU; without a GPU, on the simulated GPU in the test VM (QEMU,
# no KVM needed), where every figure is labelled as simulated.  The JSON
# of each run, and plots where gnuplot is installed, land in OUTDIR.
#
# usage: tools/demo.sh [OUTDIR]          (default: $O/demo, O=build)
# Environment: O (build directory), DEMO_VM=1 forces the VM even with a
# GPU, GDRMAP_VM_SERIES (6.1) picks the VM's kernel, DEMO_ARGS adds
# options to copylat (e.g. "-s 1M").
# The Debian packages it needs are installed first (scripts/deps.sh
# --demo, and --demo-vm before the VM; as root, else it says what to
# install); each step's output goes to a log in OUTDIR.
set -eu

die() { echo "demo: $*" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
O=${O:-build}
out=${1:-$O/demo}
mkdir -p "$out"
out=$(cd "$out" && pwd)
gdrmap=$O/tools/gdrmap
jsonq=$O/tests/tools/jsonq
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 ))s] $*"; }

scripts/deps.sh --demo || die "the packages above are needed to build"
step "building the library and the gdrmap command (make tools; log: $out/build.log)"
make O="$O" tools >"$out/build.log" 2>&1 ||
	{ tail -20 "$out/build.log"; die "build failed (log: $out/build.log)"; }

# Summaries of the JSON, for the terminal.
show_copylat() {
	f=$1
	echo "copylat (p50 ns per call; $("$jsonq" "$f" .device.name), $("$jsonq" "$f" .backend) backend):"
	printf '%10s %14s %14s %14s %14s\n' size to-mapping cuMemcpyHtoD from-mapping cuMemcpyDtoH
	n=$("$jsonq" "$f" .results#) i=0
	while [ $i -lt "$n" ]; do
		r=".results[$i]"
		printf '%10s %14.0f %14.0f %14.0f %14.0f\n' $("$jsonq" "$f" $r.size \
			$r.gdr_copy_to_mapping.p50 $r.cuMemcpyHtoD.p50 \
			$r.gdr_copy_from_mapping.p50 $r.cuMemcpyDtoH.p50)
		i=$((i + 1))
	done
}

show_pplat() {
	f=$1
	echo "pplat (round trip, ns; $("$jsonq" "$f" .responder) answers):"
	for m in mapping htod hostflag; do
		printf '  %-9s %-28s p0 %8.0f  p50 %8.0f  p99 %8.0f\n' $m \
			"$("$jsonq" "$f" .modes.$m.signal_call)" \
			$("$jsonq" "$f" .modes.$m.p0 .modes.$m.p50 .modes.$m.p99)
	done
}

finish() {
	sim=$("$jsonq" "$out/copylat.json" .simulated 2>/dev/null || echo false)
	[ "$sim" = true ] && echo "*** SIMULATED GPU: none of these figures is performance data ***"
	show_copylat "$out/copylat.json"
	show_pplat "$out/pplat.json"
	if command -v gnuplot >/dev/null; then
		JSONQ=$jsonq bench/plot.sh -o "$out" "$out/copylat.json" \
			"$out/pplat.json" || true
	else
		echo "(no gnuplot: apt-get install gnuplot-nox for plots)"
	fi
	step "done: results in $out"
}

"$gdrmap" doctor --json >"$out/doctor-probe.json" 2>/dev/null || true
gpu=$("$jsonq" "$out/doctor-probe.json" .gpu_present 2>/dev/null || echo false)
rm -f "$out/doctor-probe.json"

if [ "$gpu" = true ] && [ -z "${DEMO_VM:-}" ]; then
	step "on this machine's GPU"
	"$gdrmap" doctor | tee "$out/doctor.txt" || true
	"$gdrmap" doctor --json >"$out/doctor.json" || true
	step "copylat"
	# shellcheck disable=SC2086
	"$gdrmap" copylat --json ${DEMO_ARGS:-} >"$out/copylat.json" ||
		die "copylat failed (exit $?): $(cat "$out/copylat.json")"
	step "pplat"
	"$gdrmap" pplat --json >"$out/pplat.json" ||
		die "pplat failed (exit $?): $(cat "$out/pplat.json")"
	finish
	exit 0
fi

# No GPU: the test VM with the simulated GPU.
step "no GPU here: the test VM with the simulated GPU"
scripts/deps.sh --demo-vm || die "the packages above are needed for the VM"
for t in qemu-system-x86_64 busybox cpio; do
	command -v $t >/dev/null ||
		die "$t not found: apt-get install qemu-system-x86 busybox-static cpio"
done
series=${GDRMAP_VM_SERIES:-6.1}
cache=${GDRMAP_VM_CACHE:-$HOME/.cache/gdrmap-vm}
step "the Debian $series kernel for the VM (downloaded once into $cache; log: $out/kernel.log)"
kvars=$(tests/vm/fetch-kernel.sh "$series" "$cache" 2>"$out/kernel.log") ||
	{ tail -20 "$out/kernel.log"; die "could not get the $series kernel for the VM (log: $out/kernel.log)"; }
eval "$kvars"
export KNAME KARCH KDIR KCC
work=$out/vm
mkdir -p "$work"
step "building gdrdrv and the simulated GPU for ${KVER:-$KNAME} (log: $out/vm-build.log)"
O=$O tests/vm/build.sh "$work" >"$out/vm-build.log" 2>&1 ||
	{ tail -20 "$out/vm-build.log"; die "building the VM's modules failed (log: $out/vm-build.log)"; }

stage=$work/initramfs
rm -rf "$stage"
mkdir -p "$stage/vm" "$stage/lib/gdrmap" "$stage/usr/lib/gdrmap" "$stage/usr/bin"
cp "$work"/out/*.ko "$stage/lib/gdrmap/"
cp -P "$work"/out/lib/* "$stage/usr/lib/gdrmap/"
cp "$gdrmap" "$stage/usr/bin/gdrmap"
cat >"$stage/init" <<'EOI'
#!/bin/busybox sh
/bin/busybox --install -s /bin
# tests/vm/boot.sh takes this line as the sign that init started.
echo DEMO-INIT
export PATH=/bin:/sbin:/usr/bin LD_LIBRARY_PATH=/usr/lib/gdrmap
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
insmod /lib/gdrmap/nvsim.ko && insmod /lib/gdrmap/gdrdrv.ko ||
	echo "DEMO: loading the modules failed"
# Each run's JSON between markers, for the host to cut out.
run() {
	name=$1
	shift
	echo "DEMO-JSON-BEGIN $name"
	gdrmap "$@" --json
	echo "DEMO-JSON-END $name $?"
}
echo DEMO-DOCTOR-BEGIN
gdrmap doctor
run doctor doctor
run copylat copylat -s 1M -w 200 -r 200
run pplat pplat -n 2000
echo "DEMO-DONE"
poweroff -f
EOI
chmod +x "$stage/init"
tests/vm/mkinitramfs.sh "$stage" "$work/initramfs.cpio.gz" ||
	die "packing the VM's initramfs failed"
step "VM running (QEMU, without KVM; log: $work/serial.log)"
# Booted as the test suite's VM is (tests/vm/boot.sh), with one GPU.
tests/vm/boot.sh -g 1 -t 900 "$VMLINUZ" "$work/initramfs.cpio.gz" \
	"$work/serial.log" DEMO-INIT || true
tr -d '\r' <"$work/serial.log" >"$work/serial.txt"
grep -q DEMO-DONE "$work/serial.txt" || die "the VM did not finish: see $work/serial.log"
awk '/DEMO-JSON-BEGIN/ { exit } f { print } /DEMO-DOCTOR-BEGIN/ { f = 1 }' \
	"$work/serial.txt" >"$out/doctor.txt"
cat "$out/doctor.txt"
for name in doctor copylat pplat; do
	awk -v n="$name" '$1 == "DEMO-JSON-END" && $2 == n { f = 0 }
		f { print } $1 == "DEMO-JSON-BEGIN" && $2 == n { f = 1 }' \
		"$work/serial.txt" >"$out/$name.json"
	"$jsonq" "$out/$name.json" >/dev/null ||
		die "$name in the VM gave no valid JSON: see $work/serial.log"
done
finish
