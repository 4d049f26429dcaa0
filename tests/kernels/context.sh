# The kernel matrix's apt contexts (sourced by matrix.sh): each context of
# kernels.conf is a set of Debian suites, used through private apt lists on
# the host when the host is of its first suite, else inside a chroot of
# that suite made once with mmdebstrap.  Both live in the cache and are
# shared by every tree on the machine, under locks.

# The archives: this machine's apt sources' (GDRMAP_DEBIAN_MIRROR and
# GDRMAP_DEBIAN_SECURITY_MIRROR override them), looked up when a context's
# sources are first written.
. "$top/scripts/debian-mirror.sh"
kl_mirror= kl_security_mirror=

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

# kl_locked NAME COMMAND...: run COMMAND (a shell function too) holding the
# cache lock NAME; runs of several trees share the cache.
kl_locked() {
	mkdir -p "$kl_cache/locks" || kl_die "cannot create $kl_cache"
	_l=$kl_cache/locks/$1.lock
	shift
	(flock 9 || exit 1; "$@") 9>"$_l"
}

# The build directory, absolute (it is mounted in chroots).
kl_abs_o() {
	_o=${O:-build}
	case $_o in /*) ;; *) _o=$top/$_o ;; esac
	mkdir -p "$_o" && (cd "$_o" && pwd)
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

# The file whose time says when the context's package lists were updated.
kl_lists_stamp() {
	_root=$(kl_chroot_of "$1")
	if [ -n "$_root" ]; then
		echo "$_root/.lists-updated"
	else
		echo "$kl_cache/apt/$1-$kl_host_arch/.lists-updated"
	fi
}

# kl_prepare CONTEXT [ARCH]: make the context usable (its chroot made, its
# sources written, packages of ARCH known) and its lists fresh.  Under the
# context's lock.
kl_prepare() {
	kl_locked "ctx-$1" kl_prepare_locked "$1" "${2:-$kl_host_arch}"
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
