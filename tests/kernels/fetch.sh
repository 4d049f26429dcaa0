# Having a resolved kernel ready (sourced by matrix.sh): its packages
# downloaded into its context's directory once, unpacked into the cache
# (the headers, made to point into the cache; of the image only the
# kernel), what building for it needs installed where it builds, and the
# cache pruned of kernels not used for a month.

# kl_fetch: resolve entry k_* and have it ready to build against (and with
# KL_IMAGE=1 to boot); sets kver kdir kroot vmlinuz kchroot kcc kpage.
kl_fetch() {
	kl_prepare "$k_ctx" "$k_arch"
	_res=$(mktemp "${TMPDIR:-/tmp}/gdrmap-kernel.XXXXXX")
	kl_locked "ctx-$k_ctx" kl_resolve_fetch "$_res" || { rm -f "$_res"; exit 1; }
	# kl_resolve_fetch ran in a subshell: read back what it found.
	. "$_res"
	rm -f "$_res"
	kroot=$kl_cache/kernels/$k_arch/$kver
	kl_locked "kernel-$k_arch-$kver" kl_unpack "$kroot" $kpkgs $kimage || exit 1
	touch "$kroot"		# last use (kl_prune)
	kdir=$kroot/root/usr/src/linux-headers-$kver
	vmlinuz=
	[ -z "$kimage" ] || vmlinuz=$kroot/root/boot/vmlinuz-$kver
	[ -z "$vmlinuz" ] || [ -f "$vmlinuz" ] || kl_die "no $vmlinuz in ${kimage%%=*}"
	kchroot=$(kl_chroot_of "$k_ctx")
	kcc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' \
		"$kdir/.config" 2>/dev/null)
	kcc=${kcc:-gcc}
	kpage=$(kl_page_size "$kdir/.config")
}

kl_resolve_fetch() {
	# What was resolved since the lists were last updated still holds.
	_memo=$kl_cache/resolved/$k_arch-$k_name-$KL_IMAGE
	if [ "$_memo" -nt "$(kl_lists_stamp "$k_ctx")" ]; then
		. "$_memo"
		_kd=$kl_cache/kernels/$k_arch/$kver
		if [ -e "$_kd/.headers" ] && { [ -z "$kimage" ] || [ -e "$_kd/.image" ]; }; then
			# shellcheck disable=SC2086
			kl_toolchain "$k_ctx" $ktools && cp "$_memo" "$1"
			return
		fi
	fi
	kl_resolve || {
		kl_say "no $k_name kernel ($k_series, $k_flavour) with all its packages in $k_ctx"
		return 1
	}
	# What is unpacked already is not fetched again.
	_kd=$kl_cache/kernels/$k_arch/$kver
	_get=
	[ -e "$_kd/.headers" ] || _get=$kpkgs
	[ -e "$_kd/.image" ] || _get="$_get $kimage"
	# shellcheck disable=SC2086
	kl_download "$k_ctx" $_get || return 1
	# shellcheck disable=SC2086
	kl_toolchain "$k_ctx" $ktools || return 1
	mkdir -p "${_memo%/*}"
	printf "kver='%s' kdebver='%s' kpkgs='%s' kimage='%s' ktools='%s'\n" \
		"$kver" "$kdebver" "$kpkgs" "$kimage" "$ktools" >"$_memo"
	cp "$_memo" "$1"
}

# Where a context keeps downloaded packages (host path).
kl_debdir() {
	_root=$(kl_chroot_of "$1")
	if [ -n "$_root" ]; then
		echo "$_root/var/cache/gdrmap-debs"
	else
		echo "$kl_cache/apt/$1-$kl_host_arch/debs"
	fi
}

# The .deb of "name[:arch]=version" in the context's download directory.
kl_deb_of() {
	_n=${2%%=*}
	_n=${_n%%:*}
	_v=$(echo "${2#*=}" | sed 's/:/%3a/')
	ls "$(kl_debdir "$1")/${_n}_${_v}_"*.deb 2>/dev/null | head -n 1
}

# kl_download CONTEXT name=version...: fetch those not downloaded before.
kl_download() {
	_c=$1
	shift
	_want=
	for p in "$@"; do
		[ -n "$(kl_deb_of "$_c" "$p")" ] || _want="$_want $p"
	done
	[ -n "$_want" ] || return 0
	_dir=$(kl_debdir "$_c")
	mkdir -p "$_dir"
	kl_say "downloading$_want"
	# apt says that root downloads unsandboxed: true, and no news.
	# shellcheck disable=SC2086
	if [ -n "$(kl_chroot_of "$_c")" ]; then
		kl_in_chroot "$(kl_chroot_of "$_c")" sh -c \
			'cd /var/cache/gdrmap-debs && apt-get download -q "$@"' sh $_want
	else
		(cd "$_dir" && kl_apt "$_c" apt-get download -q $_want)
	fi >"$_dir/download.log" 2>&1 || {
		cat "$_dir/download.log" >&2
		return 1
	}
}

# kl_unpack DIR name=version...: unpack the downloaded packages into DIR/root
# (of an image package only its /boot), once: DIR/.headers and DIR/.image
# say what is there.  Absolute paths of the packages are made to point into
# DIR/root.
kl_unpack() {
	_dir=$1
	shift
	_root=$_dir/root
	mkdir -p "$_root"
	for p in "$@"; do
		case ${p%%=*} in
		linux-image-*|linux-binary-*) _stamp=.image ;;
		*) _stamp=.headers ;;
		esac
		[ -e "$_dir/$_stamp" ] && continue
		_deb=$(kl_deb_of "$k_ctx" "$p")
		[ -n "$_deb" ] || kl_die "$p was not downloaded"
		case $_stamp in
		.image)
			# Only the kernel is wanted (the VM needs no module): it is
			# ./boot/vmlinuz-KVER, or from 7.x on
			# ./usr/lib/modules/KVER/vmlinuz[.unsigned].
			_m=$(dpkg-deb -c "$_deb" | awk '{ print $NF }' |
				grep -E '/vmlinuz[^/]*$' | head -n 1)
			[ -n "$_m" ] || kl_die "no vmlinuz in $_deb"
			mkdir -p "$_root/boot"
			dpkg-deb --fsys-tarfile "$_deb" | tar -x -O "$_m" >"$_root/boot/vmlinuz-$kver" ||
				kl_die "unpacking $_m of $_deb failed"
			touch "$_dir/.image"
			rm -f "$_deb"	# large, and never needed again
			;;
		*)
			dpkg-deb -x "$_deb" "$_root" || kl_die "unpacking $_deb failed" ;;
		esac
	done
	if [ ! -e "$_dir/.headers" ]; then
		_kdir=$_root/usr/src/linux-headers-$kver
		[ -f "$_kdir/Makefile" ] || kl_die "no headers in $_kdir"
		# "include /usr/src/...-common/Makefile" and 7.x's KBUILD_OUTPUT.
		sed -i "s|/usr/src/|$_root/usr/src/|g" "$_kdir/Makefile"
		touch "$_dir/.headers"
	fi
}

# Unpacked kernels unused for 30 days go, with the .debs of their version.
kl_prune() {
	find "$kl_cache/kernels" -mindepth 2 -maxdepth 2 -type d -mtime +30 2>/dev/null |
	while read -r _kd; do
		_v=${_kd##*/}
		kl_say "removing $_v from the cache (unused for 30 days)"
		rm -rf "$_kd"
		for _d in "$kl_cache"/chroot/*/var/cache/gdrmap-debs "$kl_cache"/apt/*/debs; do
			rm -f "$_d"/linux-*"${_v%-*}"*.deb
		done
	done
}
