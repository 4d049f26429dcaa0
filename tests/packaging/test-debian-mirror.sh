#!/bin/sh
# scripts/debian-mirror.sh: the Debian archive and the security archive
# are read from the machine's apt sources, in both forms apt reads
# (one-line sources.list and deb822 .sources), through apt's own
# Dir::Etc settings; GDRMAP_DEBIAN_MIRROR and GDRMAP_DEBIAN_SECURITY_MIRROR
# override them; a machine whose sources name no Debian archive gets an
# error naming the variable to set; the kernel matrix's sources and the
# root file system use what it finds; and the tree names no archive host.
# Exit 0 pass, 1 fail, 77 skip (no apt-config).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
command -v apt-config >/dev/null || { echo "SKIP: apt-config is missing (not a Debian machine)"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gdrmap-mirror.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
# is WHAT GOT WANT
is() { if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi; }

unset GDRMAP_DEBIAN_MIRROR GDRMAP_DEBIAN_SECURITY_MIRROR DEBIAN_MIRROR_SOURCES
# A machine of its own: apt reads $tmp/NAME/etc/apt (APT_CONFIG).
machine() {
	d=$tmp/$1
	mkdir -p "$d/etc/apt/sources.list.d"
	printf 'Dir::Etc "%s/etc/apt";\n' "$d" >"$d/apt.conf"
	APT_CONFIG=$d/apt.conf
	export APT_CONFIG
}
# lookup: debian_mirror and debian_security_mirror in a fresh shell, as
# the scripts call them: "MIRROR SECURITY RC-OF-EACH", errors in $tmp/err.
lookup() {
	sh -c '. "$1/scripts/debian-mirror.sh"
		m=$(debian_mirror); a=$?
		s=$(debian_security_mirror); b=$?
		echo "${m:--} ${s:--} $a$b"' sh "$top" 2>"$tmp/err"
}

# The deb822 form Debian 12 installs, with a signing key inline (its
# continuation lines) and a disabled paragraph first.
machine deb822
cat >"$d/etc/apt/sources.list.d/debian.sources" <<'EOF'
# a comment
Types: deb
URIs: http://old.example/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb-src deb
URIs: http://mirror.example/debian/ http://second.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NdOOHwPIJlgPu6JDcKw/NwQ3jdhJCTqsOMJ5ehSLwOU2U
 -----END PGP PUBLIC KEY BLOCK-----

Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main
EOF
is "deb822: archive, security archive" "$(lookup)" \
	"http://mirror.example/debian http://security.example/debian-security 00"
is "deb822: every enabled entry, one per URI and suite" \
	"$(. "$top/scripts/debian-mirror.sh"; apt_source_entries "$d/etc/apt/sources.list.d/debian.sources" | tr '\n' ';')" \
	"deb-src http://mirror.example/debian bookworm;deb-src http://mirror.example/debian bookworm-updates;deb-src http://second.example/debian bookworm;deb-src http://second.example/debian bookworm-updates;deb http://mirror.example/debian bookworm;deb http://mirror.example/debian bookworm-updates;deb http://second.example/debian bookworm;deb http://second.example/debian bookworm-updates;deb http://security.example/debian-security bookworm-security;"

# The one-line form, with options, comments, a source-only line, another
# vendor's repository first, the older security suite name and a stable
# alias; sources.list.d files after sources.list, as apt reads them.
machine oneline
cat >"$d/etc/apt/sources.list" <<'EOF'
# deb http://commented.example/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] https://vendor.example/apt cloud-sdk-bookworm main
deb-src http://src.example/debian bookworm main
deb [ arch=amd64,arm64 ] file:/srv/mirror/debian/ stable main # the local mirror
EOF
echo 'deb http://sec.example/debian-security bookworm/updates main' \
	>"$d/etc/apt/sources.list.d/security.list"
echo 'deb http://later.example/debian bookworm main' \
	>"$d/etc/apt/sources.list.d/later.list"
is "one-line: options, comments, aliases, old security suite" "$(lookup)" \
	"file:/srv/mirror/debian http://sec.example/debian-security 00"

# Only other distributions' and vendors' archives: an error that says
# what to set, for each archive.
machine other
cat >"$d/etc/apt/sources.list.d/ubuntu.sources" <<'EOF'
Types: deb
URIs: http://archive.example/ubuntu
Suites: noble noble-updates noble-security
Components: main
EOF
echo 'deb https://vendor.example/node nodistro main' >"$d/etc/apt/sources.list.d/node.list"
is "no Debian archive: both fail" "$(lookup)" "- - 11"
for v in GDRMAP_DEBIAN_MIRROR GDRMAP_DEBIAN_SECURITY_MIRROR; do
	grep -q "set $v to" "$tmp/err" && ok || bad "no Debian archive: the error names $v: $(cat "$tmp/err")"
done
grep -q "sources.list.d/ubuntu.sources" "$tmp/err" && ok ||
	bad "no Debian archive: the error names the files read: $(cat "$tmp/err")"

# The variables override the sources.
is "the variables override" "$(GDRMAP_DEBIAN_MIRROR=http://env.example/debian/ \
	GDRMAP_DEBIAN_SECURITY_MIRROR=http://env.example/sec lookup)" \
	"http://env.example/debian http://env.example/sec 00"

# The kernel matrix writes its contexts' sources from them.
machine deb822
got=$(top=$top kl_prog=test sh -c '. "$top/tests/kernels/matrix.sh"; kl_sources trixie' 2>&1 | tr '\n' ';')
is "tests/kernels: trixie's sources" "$got" \
	"deb http://mirror.example/debian trixie main;deb http://security.example/debian-security trixie-security main;deb http://mirror.example/debian trixie-backports main;"
# A machine without a security source (a fresh debootstrap): the
# security suite is left out, and said so.
machine nosecurity
echo 'deb http://mirror.example/debian bookworm main' >"$d/etc/apt/sources.list"
got=$(top=$top kl_prog=test sh -c '. "$top/tests/kernels/matrix.sh"; kl_sources trixie' 2>"$tmp/err" | tr '\n' ';')
is "tests/kernels without a security archive: trixie's sources" "$got" \
	"deb http://mirror.example/debian trixie main;deb http://mirror.example/debian trixie-backports main;"
grep -q "trixie-security left out.*GDRMAP_DEBIAN_SECURITY_MIRROR" "$tmp/err" && ok ||
	bad "tests/kernels without a security archive: says so: $(cat "$tmp/err")"
machine other
got=$(top=$top kl_prog=test sh -c '. "$top/tests/kernels/matrix.sh"; kl_sources sid' 2>&1)
case $got in
*GDRMAP_DEBIAN_MIRROR*) ok ;;
*) bad "tests/kernels without a Debian archive: '$got'" ;;
esac

# packaging/rootfs.sh takes its mirror from the same place (it stops
# before mmdebstrap when there is none).
if command -v mmdebstrap >/dev/null; then
	mkdir "$tmp/root"
	out=$(HOME=$tmp/home "$top/packaging/rootfs.sh" "$tmp/root" 2>&1)
	case $out in
	*"set GDRMAP_DEBIAN_MIRROR"*) ok ;;
	*) bad "rootfs.sh without a Debian archive: '$out'" ;;
	esac
fi
unset APT_CONFIG

# No archive host is written into the tree (results of runs included).
hosts='deb\.debian\.org|security\.debian\.org|ftp[0-9]*(\.[a-z]+)?\.debian\.org|snapshot\.debian\.org|(archive|security|ports)\.ubuntu\.com'
if [ -d "$top/.git" ] && command -v git >/dev/null; then
	found=$(cd "$top" && git grep -nIE "$hosts" -- . 2>/dev/null)
else
	found=$(grep -rnIE "$hosts" "$top" --exclude-dir=.git --exclude-dir=build 2>/dev/null)
fi
[ -z "$found" ] && ok || bad "archive hosts named in the tree: $found"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
