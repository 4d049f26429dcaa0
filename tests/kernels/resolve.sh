# Which kernel an entry of the matrix is (sourced by matrix.sh): the
# newest one of its series and flavour in its context's package lists
# whose headers, kbuild and (KL_IMAGE=1) image packages are all there at
# its version, with the host packages that building against it needs.

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

# Sets kpkgs and ktools from the dependencies of headers package $1; fails
# when apt cannot install it at kdebver.  apt resolves which kernel
# packages it needs at which versions (the -common headers, kbuild, 7.x's
# linux-base-KVER, as their Depends say: "=" or ">="), simulating an
# install (-s) with the context's lists.  The tools are read from the
# kernel packages' own Depends, one level, by hand: apt's whole closure
# would also bring the image's dependencies (6.12's headers depend on the
# image: initramfs-tools, udev...) and, for another architecture's
# kernel, that architecture's native compiler, where the host needs its
# cross compiler (kl_tool_for).
kl_deps() {
	_inst=$(kl_apt "$k_ctx" apt-get -s -q --no-install-recommends install \
		"$1=$kdebver" 2>/dev/null | sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1=\2/p' | tr '\n' ' ')
	case " $_inst " in *" $1=$kdebver "*) ;; *) return 1 ;; esac
	kpkgs="$1=$kdebver" ktools=make
	for p in $_inst; do
		case ${p%%=*} in
		"$1") ;;
		linux-headers-[0-9]*|linux-kbuild-[0-9]*|linux-base-[0-9]*)
			kpkgs="$kpkgs $p" ;;
		esac
	done
	for p in $kpkgs; do
		# "a (>= 1), b | c, d:any" -> one name per line, first alternatives.
		for dep in $(kl_apt "$k_ctx" apt-cache show "$p" 2>/dev/null |
			sed -n 's/^Depends: //p' | head -n 1 | tr ',' '\n' |
			sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/ //g'); do
			case $dep in
			# The kernel packages (above) and the image (kl_image
			# finds it where it is wanted).
			linux-headers-[0-9]*|linux-kbuild-[0-9]*|linux-base-[0-9]*) ;;
			linux-image-*|linux-binary-*|linux-modules-*) ;;
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
