#!/bin/sh
# scripts/deps.sh on a machine whose dpkg was interrupted, as root, in
# the Debian 12 root file system of packaging/rootfs.sh (offline):
#   1. nothing missing, dpkg clean: exit 0, dpkg not run;
#   2. dpkg killed while it configured a package (that package left
#      half-configured, libc-bin's ldconfig trigger pending, the journal
#      in /var/lib/dpkg/updates, so apt-get would refuse to install):
#      as an ordinary user it fails and says to run dpkg --configure -a;
#      as root it finishes dpkg's work and exits 0 with both packages
#      installed and nothing left to audit;
#   3. the same with a maintainer script that keeps failing: exit 1,
#      naming the package, never a loop or an apt-get run.
# Exit 0 pass, 1 fail, 77 skip (not root, no mmdebstrap).  -k keeps the
# work directory.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
name=deps
. "$top/tests/packaging/roottest.sh"

cp "$top/scripts/deps.sh" "$root/deps.sh"
# apt-get would need the network: make any call of it a failure that
# shows, so that a case passing through it cannot pass.
printf '#!/bin/sh\necho "apt-get $*: called" >&2\nexit 100\n' >"$root/usr/local/bin/apt-get"
chmod +x "$root/usr/local/bin/apt-get"

pkg=hostname
# shellcheck disable=SC2016
status() { chroot "$root" dpkg-query -W -f='${Status}' "$1"; }
deps() { # deps.sh OUT-NAME [chroot options]: its exit status in $rc
	out=$work/$1.out; shift
	rc=0
	env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root \
		chroot "$@" "$root" sh /deps.sh $pkg libc-bin >"$out" 2>&1 || rc=$?
}
has() { grep -q -- "$2" "$work/$1.out" || { cat "$work/$1.out" >&2; return 1; }; }
journal() { # dpkg's journal of an unfinished run holds files named by numbers
	for f in "$root"/var/lib/dpkg/updates/[0-9]*; do [ -e "$f" ] && return 0; done
	return 1
}
clean() { [ -z "$(chroot "$root" dpkg --audit)" ] && ! journal; }

# Leave $pkg unpacked, with a postinst that kills dpkg (its parent) the
# first time after it has pulled libc-bin's ldconfig trigger: what a
# machine image saved, or a session killed, in the middle of an install
# leaves behind.  $1 = postinst's exit status on the later runs.
interrupt() {
	awk -v p="$pkg" 'BEGIN { RS = ""; ORS = "\n\n" }
		$0 ~ "^Package: " p "\n" { sub(/\nStatus: install ok installed\n/, "\nStatus: install ok unpacked\n") }
		{ print }' "$root/var/lib/dpkg/status" >"$work/status" &&
		cat "$work/status" >"$root/var/lib/dpkg/status"
	rm -f "$root/tmp/killed"
	cat >"$root/var/lib/dpkg/info/$pkg.postinst" <<-EOF
	#!/bin/sh
	if [ ! -e /tmp/killed ]; then
		: >/tmp/killed
		dpkg-trigger --no-await ldconfig
		kill -KILL \$PPID
		sleep 5
	fi
	exit $1
	EOF
	chmod +x "$root/var/lib/dpkg/info/$pkg.postinst"
	chroot "$root" dpkg --configure $pkg >"$work/kill.out" 2>&1 || true
	if [ "$(status $pkg)" != "install ok half-configured" ] || ! journal; then
		die "could not leave dpkg interrupted: $pkg is '$(status $pkg)'; $(cat "$work/kill.out")"
	fi
}

deps clean
expect "nothing missing: deps.sh exits 0 (it exited $rc)" [ $rc = 0 ]
expect "nothing missing: deps.sh prints nothing" [ ! -s "$work/clean.out" ]

interrupt 0
expect "the interrupted state pulled libc-bin's trigger" \
	[ "$(status libc-bin)" = "install ok triggers-pending" ]
deps user --userspec=65534:65534
expect "as a user: deps.sh fails (it exited $rc)" [ $rc = 1 ]
expect "as a user: deps.sh says to finish dpkg's work" has user "sudo dpkg --configure -a"
expect "as a user: deps.sh names the package" has user "packages: $pkg libc-bin"
expect "as a user: dpkg's state is untouched" [ "$(status $pkg)" = "install ok half-configured" ]
deps root
expect "as root: deps.sh exits 0 (it exited $rc)" [ $rc = 0 ]
expect "as root: deps.sh says what it did" has root "dpkg was interrupted before; finishing its work"
expect "as root: $pkg is configured" [ "$(status $pkg)" = "install ok installed" ]
expect "as root: libc-bin's trigger has run" [ "$(status libc-bin)" = "install ok installed" ]
expect "as root: dpkg has nothing left to audit and no journal" clean

interrupt 1
deps broken
expect "a postinst that fails: deps.sh fails (it exited $rc)" [ $rc = 1 ]
expect "a postinst that fails: deps.sh names it" has broken "$pkg"
expect "a postinst that fails: deps.sh says what failed" has broken "dpkg --configure -a failed"
expect "a postinst that fails: deps.sh did not go on to apt-get" sh -c "! grep -q 'apt-get.*called' '$work/broken.out'"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
