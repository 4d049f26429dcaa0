#!/bin/sh
# Print the directory holding the NVIDIA driver's nv-p2p.h to build gdrdrv
# for kernel release $1 against, or nothing when there is none.
#   - $NVIDIA_SRC if set: that directory, its nvidia/ or its kernel-open/nvidia/
#   - else the /usr/src/nvidia-* (or nvidia-current-*) source whose version
#     is that of the nvidia.ko installed for $1, if any
#   - else the newest /usr/src/nvidia-* source.
# NVIDIA_SRC_ROOT replaces /usr/src (for tests).
set -eu
kver=${1:-$(uname -r)}
root=${NVIDIA_SRC_ROOT:-/usr/src}

p2p_dir() {
	for d in "$1" "$1/nvidia" "$1/kernel-open/nvidia" "$1/kernel/nvidia"; do
		if [ -f "$d/nv-p2p.h" ]; then echo "$d"; return 0; fi
	done
	return 1
}

if [ -n "${NVIDIA_SRC:-}" ]; then
	p2p_dir "$NVIDIA_SRC" || {
		echo "find-nvidia-src: no nv-p2p.h under NVIDIA_SRC=$NVIDIA_SRC" >&2; exit 1; }
	exit 0
fi

want=$(modinfo -k "$kver" -F version nvidia 2>/dev/null || true)
if [ -n "$want" ]; then
	for d in "$root/nvidia-$want" "$root/nvidia-current-$want"; do
		[ -d "$d" ] && p2p_dir "$d" && exit 0
	done
fi
for d in $(ls -d "$root"/nvidia-* 2>/dev/null | sort -V -r); do
	p2p_dir "$d" && exit 0
done
exit 0
