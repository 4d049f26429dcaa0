#!/bin/sh
# Fetch one Debian 12 kernel (image + headers) into a cache directory and
# unpack it there, so that modules can be built for it and it can be booted
# in QEMU without touching the host's /boot or /lib/modules.
#
# usage: fetch-kernel.sh SERIES CACHEDIR      (SERIES: 6.1 or 6.12)
# Prints the shell assignments KVER=... ROOT=... KDIR=... VMLINUZ=... on
# stdout; everything else goes to stderr.
#
# The newest kernel of the series that apt knows is used, with the image,
# headers and kbuild packages all of one version.  An unpacked tree is
# reused as long as its stamp file is there.
set -eu

die() { echo "fetch-kernel: $*" >&2; exit 1; }

[ $# = 2 ] || die "usage: $0 SERIES CACHEDIR"
series=$1 cache=$2
case $series in
6.1) img_re='^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' ;;
6.12) img_re='^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' ;;
*) die "unknown kernel series '$series' (6.1 and 6.12 are known)" ;;
esac
for t in apt-cache apt-get dpkg-deb; do
	command -v $t >/dev/null || die "$t not found: this needs a Debian host"
done

# Runs of several trees share the cache: one fetch at a time.
mkdir -p "$cache" || die "cannot create $cache"
if command -v flock >/dev/null; then
	exec 9>"$cache/.lock"
	flock 9 || die "cannot lock $cache/.lock"
fi

candidate() {
	apt-cache show --no-all-versions "$1" 2>/dev/null |
		sed -n 's/^Version: //p' | head -n 1
}

# Newest first; take the first whose companion packages exist at the same
# version (a mirror can list an image before its headers).  Sets kver, ver
# and kbuild; fails when apt's lists have no such kernel.
resolve() {
	kver= ver=
	for img in $(apt-cache pkgnames "linux-image-$series" |
		     grep -E "$img_re" | sort -rV); do
		k=${img#linux-image-}
		k=${k%-unsigned}
		v=$(candidate "$img")
		case $series in
		6.1) kbuild=linux-kbuild-6.1 ;;
		*) kbuild=linux-kbuild-${k%-amd64} ;;
		esac
		ok=1
		for p in "linux-headers-$k" "linux-headers-${k%-amd64}-common"; do
			[ "$(candidate "$p")" = "$v" ] || ok=0
		done
		# linux-kbuild-6.1 is one name across ABIs: ask for the version.
		apt-cache show "$kbuild=$v" >/dev/null 2>&1 || ok=0
		if [ $ok = 1 ]; then
			kver=$k ver=$v
			return 0
		fi
		echo "fetch-kernel: skipping $img $v: headers or kbuild missing at that version" >&2
	done
	return 1
}

# Download and unpack kver into the cache, unless it is there already.
unpack() {
	dir=$cache/$kver
	root=$dir/root
	kdir=$root/usr/src/linux-headers-$kver
	[ -e "$dir/.unpacked" ] && return 0
	echo "fetch-kernel: fetching $kver ($ver) into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir/debs" "$root"
	# apt warns that root downloads unsandboxed: true, and no news.
	if ! (cd "$dir/debs" && apt-get download -q \
		"linux-image-$kver-unsigned=$ver" "linux-headers-$kver=$ver" \
		"linux-headers-${kver%-amd64}-common=$ver" "$kbuild=$ver" \
		>"$dir/apt.log" 2>&1); then
		cat "$dir/apt.log" >&2
		return 1
	fi
	grep -v -e '^W: Download is performed unsandboxed' -e '^Get:' \
		"$dir/apt.log" >&2 || true
	for deb in "$dir"/debs/*.deb; do
		case $deb in
		# The VM needs no module of the image (nvsim uses only PCI,
		# which is built in): take the kernel alone.
		*/linux-image-*)
			dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" ./boot ;;
		*)
			dpkg-deb -x "$deb" "$root" ;;
		esac || die "unpacking $deb failed"
	done
	# The packages' absolute links and include point into /usr/src of the
	# host: make them relative to the unpacked tree.
	mod=$root/lib/modules/$kver
	ln -sfn "../../../usr/src/linux-headers-$kver" "$mod/build"
	ln -sfn "../../../usr/src/linux-headers-${kver%-amd64}-common" \
		"$mod/source"
	sed -i "s|^include /usr/src/|include $root/usr/src/|" "$kdir/Makefile"
	[ -f "$root/boot/vmlinuz-$kver" ] || die "no vmlinuz in the image package"
	rm -rf "$dir/debs"
	touch "$dir/.unpacked"
}

# Lists missing on a fresh machine, or stale (the security archive keeps
# only the newest kernel): root updates them once and tries again.
if ! { resolve && unpack; }; then
	[ "$(id -u)" = 0 ] ||
		die "no $series kernel could be fetched: run apt-get update first (bookworm and bookworm-security in sources)"
	echo "fetch-kernel: updating apt's lists and trying again" >&2
	apt-get update -qq >&2 || die "apt-get update failed"
	resolve || die "no $series kernel with image, headers and kbuild at one version in apt's lists (bookworm and bookworm-security in sources?)"
	unpack || die "apt-get download of $kver failed"
fi

echo "KVER=$kver"
echo "ROOT=$root"
echo "KDIR=$kdir"
echo "VMLINUZ=$root/boot/vmlinuz-$kver"
