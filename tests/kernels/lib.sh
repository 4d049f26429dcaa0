# Shell library of the kernel matrix (sourced; see tests/kernels/README.md):
# the kernels of kernels.conf, their apt contexts (private apt lists on the
# host, or a chroot of another suite made with mmdebstrap), resolving the
# newest kernel of an entry, fetching and unpacking its packages into the
# cache, and running commands where its modules build.
#
# The caller sets `top` (the tree) and `kl_prog` (its name, for messages);
# GDRMAP_VM_CACHE moves the cache (default ~/.cache/gdrmap-vm).  Nothing of
# the host's apt configuration, /boot or /lib/modules is changed; only a
# kernel whose suite is the host's own may install its compiler on the host
# (as scripts/deps.sh does).

kl_die() { echo "${kl_prog:-kernels}: $*" >&2; exit 1; }
kl_t0=$(date +%s)
kl_say() { echo "${kl_prog:-kernels}: [$(($(date +%s) - kl_t0))s] $*" >&2; }

kl_conf=$top/tests/kernels/kernels.conf
kl_cache=${GDRMAP_VM_CACHE:-${HOME:-/tmp}/.cache/gdrmap-vm}
# The archives: this machine's apt sources' (GDRMAP_DEBIAN_MIRROR and
# GDRMAP_DEBIAN_SECURITY_MIRROR override them), looked up when a context's
# sources are first written.
. "$top/scripts/debian-mirror.sh"
kl_mirror= kl_security_mirror=
# Lists updated less than this many seconds ago are used as they are: one
# update per `make check`, so "newest" is resolved on every run.
kl_lists_max_age=${GDRMAP_APT_MAX_AGE:-1800}
kl_host_arch=$(dpkg --print-architecture 2>/dev/null) ||
	kl_die "dpkg not found: this needs a Debian host"
kl_host_suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
export LC_ALL=C DEBIAN_FRONTEND=noninteractive

# kl_kernel NAME ARCH: the entry's fields as k_name k_arch k_flavour k_ctx
# k_series k_vm; fails when kernels.conf has no such kernel.
kl_kernel() {
	# shellcheck disable=SC2046
	set -- $(awk -v n="$1" -v a="$2" '$1 == "kernel" && $2 == n && $3 == a {
		print $2, $3, $4, $5, $6, $7; exit }' "$kl_conf")
	[ $# = 6 ] || return 1
	k_name=$1 k_arch=$2 k_flavour=$3 k_ctx=$4 k_series=$5 k_vm=$6
}

# kl_names ARCH [VM...]: the kernel names of ARCH (whose VM field is one of VM).
kl_names() {
	awk -v a="$1" -v vm=" ${2:-} ${3:-} ${4:-} " '$1 == "kernel" && $3 == a &&
		(vm ~ /^ *$/ || index(vm, " " $7 " ")) { print $2 }' "$kl_conf"
}

kl_suites() {
	awk -v c="$1" '$1 == "context" && $2 == c { $1 = $2 = ""; print; exit }' "$kl_conf"
}

# The chroot a context builds in, or nothing when the host is of its suite.
kl_chroot_of() {
	_ctx=$1
	# shellcheck disable=SC2046
	set -- $(kl_suites "$_ctx")
	[ "$1" = "$kl_host_suite" ] || echo "$kl_cache/chroot/$_ctx-$kl_host_arch"
}

# kl_sources CONTEXT: its sources.list lines; fails (saying which variable
# to set) when the machine's apt sources name no Debian archive.  A
# machine that takes no security updates (no SUITE-security source, as in
# a root file system fresh from debootstrap or mmdebstrap) gets the
# context's other suites only, and is told so.
kl_sources() {
	for s in $(kl_suites "$1"); do
		case $s in
		*-security)
			[ -n "$kl_security_mirror" ] ||
				kl_security_mirror=$(debian_security_mirror 2>/dev/null) || {
				kl_say "$s left out: this machine's apt sources name no Debian security archive (GDRMAP_DEBIAN_SECURITY_MIRROR=URL adds it)"
				continue
			}
			echo "deb $kl_security_mirror $s main" ;;
		*)
			[ -n "$kl_mirror" ] || kl_mirror=$(debian_mirror) || return 1
			echo "deb $kl_mirror $s main" ;;
		esac
	done
}

# kl_locked NAME COMMAND...: run COMMAND (a shell function too) holding the
# cache lock NAME; runs of several trees share the cache.
kl_locked() {
	mkdir -p "$kl_cache/locks" || kl_die "cannot create $kl_cache"
	_l=$kl_cache/locks/$1.lock
	shift
	(flock 9 || exit 1; "$@") 9>"$_l"
}

# kl_in_chroot ROOT COMMAND...: run COMMAND in the chroot ROOT with /proc
# (objtool reads it), the tree, the build directory and the cache mounted at
# their own paths, in a private mount namespace: nothing stays mounted.
# With KL_OVERLAY=DIR the chroot is an overlay whose changes go to DIR and
# vanish with it (the cached chroot is not changed).
kl_in_chroot() {
	_r=$1
	shift
	set -- "$_r" "${KL_OVERLAY:-}" "$top" "$kl_cache" "$(kl_abs_o)" -- "$@"
	unshare --mount --propagation private sh -eu -c '
		root=$1 ov=$2; shift 2
		if [ -n "$ov" ]; then
			mkdir -p "$ov/upper" "$ov/work" "$ov/root"
			mount -t overlay overlay \
				-o "lowerdir=$root,upperdir=$ov/upper,workdir=$ov/work" "$ov/root"
			root=$ov/root
		fi
		while [ "$1" != -- ]; do
			mkdir -p "$root$1" && mount --bind "$1" "$root$1"; shift
		done
		shift
		mount -t proc proc "$root/proc"
		exec chroot "$root" "$@"' kl-chroot "$@"
}

# The build directory, absolute (it is mounted in chroots).
kl_abs_o() {
	_o=${O:-build}
	case $_o in /*) ;; *) _o=$top/$_o ;; esac
	mkdir -p "$_o" && (cd "$_o" && pwd)
}

# kl_apt CONTEXT COMMAND ARGS...: an apt-get/apt-cache command on the
# context's package lists: inside its chroot, or on the host with lists,
# caches and state of its own (the host's sources are never used).
kl_apt() {
	_c=$1
	shift
	_root=$(kl_chroot_of "$_c")
	if [ -n "$_root" ] && [ "$1" = apt-cache ]; then
		chroot "$_root" "$@"	# reads only: no mounts needed
		return
	elif [ -n "$_root" ]; then
		kl_in_chroot "$_root" "$@"
		return
	fi
	_d=$kl_cache/apt/$_c-$kl_host_arch
	_cmd=$1
	shift
	# shellcheck disable=SC2046
	"$_cmd" -o Dir::Etc::SourceList="$_d/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o Dir::Etc::PreferencesParts=/dev/null \
		-o Dir::State::Lists="$_d/lists" -o Dir::State::status="$_d/status" \
		-o Dir::Cache="$_d/cache" -o Acquire::Languages=none \
		-o Acquire::Check-Valid-Until=false \
		-o APT::Architecture="$kl_host_arch" \
		$(for a in $(cat "$_d/arches" 2>/dev/null); do
			echo "-o APT::Architectures::=$a"; done) "$@"
}

# kl_prepare CONTEXT [ARCH]: make the context usable (its chroot made, its
# sources written, packages of ARCH known) and its lists fresh.  Under the
# context's lock.
kl_prepare() {
	kl_locked "ctx-$1" kl_prepare_locked "$1" "${2:-$kl_host_arch}"
}

# kl_write_sources CONTEXT FILE STAMP: the context's sources into FILE; the
# lists are stale (STAMP removed) when they change, as when another
# machine's sources (a chroot's, sharing this cache) wrote them last.
kl_write_sources() {
	_src=$(kl_sources "$1") || kl_die "no archive for the suites of $1"
	if [ "$_src" != "$(cat "$2" 2>/dev/null)" ]; then
		printf '%s\n' "$_src" >"$2"
		rm -f "$3"
	fi
}

kl_prepare_locked() {
	_c=$1 _arch=$2
	_root=$(kl_chroot_of "$_c")
	if [ -n "$_root" ] && [ "$(id -u)" != 0 ]; then
		kl_say "$_c's kernels build in a chroot of $(kl_suites "$_c"), which needs root"
		exit 77
	fi
	if [ -n "$_root" ]; then
		[ -e "$_root/.ready" ] || kl_make_chroot "$_c" "$_root"
		_stamp=$(kl_lists_stamp "$_c")
		kl_write_sources "$_c" "$_root/etc/apt/sources.list" "$_stamp"
		if [ "$_arch" != "$kl_host_arch" ] &&
		   ! chroot "$_root" dpkg --print-foreign-architectures | grep -qx "$_arch"; then
			chroot "$_root" dpkg --add-architecture "$_arch"
			rm -f "$_stamp"
		fi
	else
		_d=$kl_cache/apt/$_c-$kl_host_arch
		mkdir -p "$_d/lists/partial" "$_d/cache/archives/partial" "$_d/debs"
		touch "$_d/status" "$_d/arches"
		_stamp=$(kl_lists_stamp "$_c")
		kl_write_sources "$_c" "$_d/sources.list" "$_stamp"
		if ! grep -qx "$_arch" "$_d/arches"; then
			echo "$_arch" >>"$_d/arches"
			rm -f "$_stamp"
		fi
	fi
	if [ -n "$(find "$_stamp" -newermt "@$(($(date +%s) - kl_lists_max_age))" 2>/dev/null)" ]; then
		return 0
	fi
	kl_say "updating the package lists of $_c"
	kl_apt "$_c" apt-get update -qq >"$kl_cache/locks/ctx-$_c.log" 2>&1 || {
		cat "$kl_cache/locks/ctx-$_c.log" >&2
		kl_die "apt-get update for $_c ($(kl_suites "$_c")) failed"
	}
	touch "$_stamp"
}

# A minimal chroot of the context's first suite: apt and make; each
# kernel's compiler and tools are added by kl_toolchain.  The package
# lists are kept (they are the context's lists).
kl_make_chroot() {
	_c=$1 _root=$2
	command -v mmdebstrap >/dev/null ||
		kl_die "mmdebstrap not found: apt-get install mmdebstrap"
	# shellcheck disable=SC2046
	set -- $(kl_suites "$_c")
	_suite=$1
	_src=$(kl_sources "$_c") || kl_die "no archive for the suites of $_c"
	set --
	while read -r line; do set -- "$@" "$line"; done <<EOF
$_src
EOF
	kl_say "making a $_suite chroot in $_root (minutes, once)"
	rm -rf "$_root.new"
	mkdir -p "$(dirname "$_root")"
	# Debian's keys, named: on a host of another distribution (Ubuntu's
	# debian-archive-keyring) mmdebstrap does not find them by itself.
	_keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -f "$_keyring" ] || _keyring=
	mmdebstrap --variant=apt --include=make --skip=cleanup/apt/lists \
		${_keyring:+--keyring="$_keyring"} \
		--hook-dir=/usr/share/mmdebstrap/hooks/eatmydata \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--aptopt='Acquire::Languages "none"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		"$_suite" "$_root.new" "$@" >"$kl_cache/locks/ctx-$_c.log" 2>&1 || {
		tail -n 30 "$kl_cache/locks/ctx-$_c.log" >&2
		rm -rf "$_root.new"
		kl_die "mmdebstrap of $_suite failed"
	}
	rm -rf "$_root"
	mv "$_root.new" "$_root"
	touch "$_root/.ready" "$_root/.lists-updated"
}

# Prints the candidate version of package $2 in context $1 (empty if none).
kl_version() {
	kl_apt "$1" apt-cache show --no-all-versions "$2" 2>/dev/null |
		sed -n 's/^Version: //p' | head -n 1
}

# kl_resolve: the newest kernel of entry k_* that has its image (with
# KL_IMAGE=1) and every package its headers need at its version: sets
# kver (release), kdebver (Debian version), kpkgs ("name=version" of the
# headers and the kernel packages they depend on), kimage ("name=version"
# or empty) and ktools (the other packages the headers and kbuild need:
# compiler, pahole, libraries).
kl_resolve() {
	_q=
	[ "$k_arch" = "$kl_host_arch" ] || _q=:$k_arch
	for rest in $(kl_apt "$k_ctx" apt-cache pkgnames linux-headers- |
		sed -n "s/^linux-headers-\(.*\)-$k_flavour\(:$k_arch\)\{0,1\}\$/\1/p" |
		awk -v s="$k_series" '{ r = $0; gsub(/deb/, "", r) }
			r ~ /^[0-9][0-9.+~-]*$/ && (s == "newest" || index($0, s ".") == 1)' |
		sort -u -r -V); do
		kver=$rest-$k_flavour
		kdebver=$(kl_version "$k_ctx" "linux-headers-$kver$_q")
		[ -n "$kdebver" ] || continue
		if kl_deps "linux-headers-$kver$_q" && kl_image; then
			return 0
		fi
		kl_say "skipping $kver ($kdebver): a package it needs is missing at that version"
	done
	return 1
}

# Sets kpkgs and ktools from the dependencies of headers package $1 (and of
# the kernel packages among them); fails when one is not at kdebver.
kl_deps() {
	kpkgs="$1=$kdebver" ktools=make
	_todo=$1
	while [ -n "$_todo" ]; do
		set -- $_todo
		_p=$1
		shift
		_todo=$*
		# "a (>= 1), b | c, d:any" -> one name per line, first alternatives.
		for dep in $(kl_apt "$k_ctx" apt-cache show --no-all-versions "$_p" 2>/dev/null |
			sed -n 's/^Depends: //p' | tr ',' '\n' |
			sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/ //g'); do
			case $dep in
			# The image itself (6.12 headers depend on it): not
			# for building; kl_image finds it where it is wanted.
			linux-image-*|linux-binary-*|linux-modules-*) ;;
			linux-headers-[0-9]*|linux-kbuild-[0-9]*|linux-base-[0-9]*)
				_v=$(kl_version "$k_ctx" "$dep")
				# kbuild may be newer than the headers (">="), never older.
				dpkg --compare-versions "$_v" ge "$kdebver" 2>/dev/null || return 1
				case " $kpkgs " in *" $dep="*) ;; *)
					kpkgs="$kpkgs $dep=$_v"
					_todo="$_todo $dep" ;;
				esac ;;
			*)
				dep=$(kl_tool_for "$dep")
				case " $ktools " in *" $dep "*) ;; *) ktools="$ktools $dep" ;; esac ;;
			esac
		done
	done
}

# The package that gives the host what headers' dependency $1 gives a
# native build: the same, but for another architecture's kernel its
# compiler is Debian's cross compiler (gcc-12 or gcc-16-for-host of arm64:
# gcc-12-aarch64-linux-gnu, gcc-16-aarch64-linux-gnu), which the headers'
# CROSS_COMPILE names.  kbuild's own tools and libraries run on the host.
kl_tool_for() {
	case $k_arch:$1 in
	"$kl_host_arch":*) echo "$1" ;;
	*:gcc-[0-9]*)
		_n=${1#gcc-}
		echo "gcc-${_n%-for-host}-$(dpkg-architecture -a "$k_arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)" ;;
	*) echo "$1" ;;
	esac
}

# Sets kimage to the package holding the kernel image of kver (7.x:
# linux-binary-unsigned-KVER; before: linux-image-KVER-unsigned), when
# KL_IMAGE=1.
kl_image() {
	kimage=
	[ "${KL_IMAGE:-0}" = 1 ] || return 0
	for p in "linux-binary-unsigned-$kver" "linux-image-$kver-unsigned" "linux-image-$kver"; do
		if [ "$(kl_version "$k_ctx" "$p$_q")" = "$kdebver" ]; then
			kimage=$p$_q=$kdebver
			return 0
		fi
	done
	return 1
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

# kl_toolchain CONTEXT PACKAGE...: make sure the packages are installed where
# the context builds (its chroot, or the host: as root, with the host's own
# apt, as scripts/deps.sh does).
kl_toolchain() {
	_c=$1
	shift
	_root=$(kl_chroot_of "$_c")
	_missing=
	for p in "$@"; do
		if [ -n "$_root" ]; then
			chroot "$_root" dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null
		else
			dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null
		fi | grep -q 'ok installed$' || _missing="$_missing $p"
	done
	[ -n "$_missing" ] || return 0
	kl_say "installing$_missing${_root:+ in $_root}"
	# shellcheck disable=SC2086
	if [ -n "$_root" ]; then
		kl_in_chroot "$_root" apt-get install -y -q --no-install-recommends \
			-o Dpkg::Options::=--force-unsafe-io $_missing
	elif [ "$(id -u)" = 0 ]; then
		apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends $_missing
	else
		kl_die "missing on this host:$_missing (sudo apt-get install$_missing)"
	fi >"$kl_cache/locks/ctx-$_c.log" 2>&1 || {
		tail -n 30 "$kl_cache/locks/ctx-$_c.log" >&2
		kl_die "installing$_missing failed"
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

# The file whose time says when the context's package lists were updated.
kl_lists_stamp() {
	_root=$(kl_chroot_of "$1")
	if [ -n "$_root" ]; then
		echo "$_root/.lists-updated"
	else
		echo "$kl_cache/apt/$1-$kl_host_arch/.lists-updated"
	fi
}

# The CPU page size of a kernel config: 4K, 16K or 64K.
kl_page_size() {
	_s=$(sed -n 's/^CONFIG_PAGE_SHIFT=//p' "$1" 2>/dev/null)
	if [ -z "$_s" ]; then
		if grep -q '^CONFIG_ARM64_64K_PAGES=y' "$1" 2>/dev/null; then _s=16
		elif grep -q '^CONFIG_ARM64_16K_PAGES=y' "$1" 2>/dev/null; then _s=14
		else _s=12
		fi
	fi
	echo "$(( (1 << _s) / 1024 ))K"
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
