#!/bin/sh
# A newcomer's first hour on a fresh Debian 12 machine, as root: the
# commands of README.md, python/README.md and docs/containers.md that need
# no GPU, typed as the documents write them, in a fresh Debian 12 minbase
# root file system (what debian:12 is; packaging/rootfs.sh, cached) with a
# copy of the tree:
#   1. README's two commands: apt-get install make (its first line), then
#      make demo: it installs what it needs, builds into a log (no compiler
#      lines on the terminal, a log that is not empty), boots the VM and
#      shows doctor, copylat and pplat on the simulated GPU;
#      the first step of make check and make check-all on that machine:
#      every package scripts/deps.sh lists installs there (apt-get -s: the
#      packages are installed for real by CI's own make check-all);
#   2. README's quick start, the steps that need no GPU: apt-get build-dep
#      ./packaging, packaging/build-debs.sh, apt-get install dkms
#      linux-headers-$(uname -r) ./build/deb/*.deb (DKMS builds gdrdrv),
#      usermod -aG video $USER, gdrmap doctor (exit 0: no GPU) and gdrmap
#      copylat (exit 1, saying there is no GPU); sudo as the README writes
#      it (a GPU host's user has it: installed first).  modprobe is not run
#      (a chroot would load into this machine's kernel): the module DKMS
#      built is looked for instead;
#   3. python/README.md: python3 -m venv, pip install ./python (offline
#      once the venv exists), the installed package against the installed
#      library, and PYTHONPATH=python from the tree.
# The chroot's uname -r says the newest Debian 12 kernel (this machine's
# may not be Debian's).  Downloads are cached between runs (the VM's
# kernels in ~/.cache/gdrmap-vm, apt's packages in
# ~/.cache/gdrmap-rootfs/apt-archives); with them a run takes a few
# minutes on 2 cores.  docker build needs Docker: test-dockerignore.sh,
# test-container.sh and test-newer-glibc.sh check what it would do.
# Exit 0 pass, 1 fail, 77 skip (not root, no mmdebstrap).  -k keeps the
# work directory.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES LD_LIBRARY_PATH || true
name=newcomer roottest_own_roots=1
. "$top/tests/packaging/roottest.sh"
cache=${XDG_CACHE_HOME:-$HOME/.cache}
vmcache=${GDRMAP_VM_CACHE:-$cache/gdrmap-vm}
apt_cache=$cache/gdrmap-rootfs/apt-archives

step "a fresh Debian 12 root (minbase, nothing added)"
fresh=$work/fresh
make_root "$fresh" -p ""
src=/root/gdrmap
mkdir -p "$fresh$src" "$apt_cache/partial" "$vmcache"
# The tree as a clone has it: tracked files (and new ones not ignored).
if [ -d "$top/.git" ] || [ -f "$top/.git" ]; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 tar -cf - --no-recursion) | tar -C "$fresh$src" -xf -
else
	tar -C "$top" --exclude=./build --exclude='./build-*' -cf - . | tar -C "$fresh$src" -xf -
fi
cp /etc/resolv.conf "$fresh/etc/resolv.conf" 2>/dev/null || true
cp /etc/hostname /etc/hosts "$fresh/etc/" 2>/dev/null || true
# The apt sources a Debian 12 installation (or the debian:12 image) has:
# the release, its updates and its security archive, from this machine's
# archives (scripts/debian-mirror.sh); mmdebstrap wrote the release only.
. "$top/scripts/debian-mirror.sh"
mirror=$(debian_mirror) || die "no Debian archive"
security=$(debian_security_mirror 2>/dev/null) || security=
rm -f "$fresh/etc/apt/sources.list"
{
	printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror"
	[ -z "$security" ] ||
		printf '\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$security"
} >"$fresh/etc/apt/sources.list.d/debian.sources"
[ -n "$security" ] || echo "    (this machine's apt sources name no security archive: the root has none either)"

# in_root LOG COMMAND: COMMAND (sh -c, from the tree's top) in the root,
# with /proc, /dev, /sys and the download caches mounted, in a private
# mount namespace; its output in $work/LOG.out, its status in $rc.
in_root() {
	_log=$work/$1.out
	shift
	rc=0
	unshare --mount --propagation private sh -c '
		r=$1 apt_cache=$2 vmcache=$3 cmd=$4
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		mount --rbind /sys "$r/sys"
		mkdir -p "$r/var/cache/apt/archives" "$r/root/.cache/gdrmap-vm"
		mount --bind "$apt_cache" "$r/var/cache/apt/archives"
		mount --bind "$vmcache" "$r/root/.cache/gdrmap-vm"
		exec chroot "$r" env -i HOME=/root USER=root LOGNAME=root TERM=dumb \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive sh -c "cd '"$src"' && $cmd"' \
		sh "$fresh" "$apt_cache" "$vmcache" "$*" >"$_log" 2>&1 || rc=$?
}
# ran LOG WHAT: the command's exit status was 0, or show its output.
ran() {
	if [ $rc = 0 ]; then ok; else bad "$2 (exit $rc): $(tail -n 15 "$work/$1.out")"; fi
}
has() { grep -q -- "$2" "$work/$1.out" || { bad "$1: no '$2' in: $(tail -n 8 "$work/$1.out")"; return 1; }; ok; }
hasnt() { ! grep -q -- "$2" "$work/$1.out" || { bad "$1: '$2' in: $(grep -m3 -- "$2" "$work/$1.out")"; return 1; }; ok; }

step "README: make demo on a machine without make (then apt-get install make)"
block2=$(awk '$0 == "## The two commands" { f = 1; next } f && /^```sh/ { b = 1; next }
	b && /^```/ { exit } b' "$top/README.md" | sed 's/[[:space:]]*#.*//' | grep . | tr '\n' ';')
expect "README's two commands are make demo and make check-all ($block2)" [ "$block2" = "make demo;make check-all;" ]
expect "README says to install make first" grep -qF 'apt-get install make' "$top/README.md"
in_root nomake "make demo"
expect "make demo without make fails at once (exit $rc)" [ $rc != 0 ]
in_root make "apt-get update -qq && apt-get install -y -qq make"
ran make "apt-get install make"
t=$(date +%s)
in_root demo "make demo"
demo_s=$(( $(date +%s) - t ))
ran demo "make demo"
has demo "installing what make demo needs"
has demo "SIMULATED GPU"
has demo "copylat (p50 ns per call"
has demo "pplat (round trip"
hasnt demo "^cc \|^gcc "
expect "make demo: build/demo/build.log holds the build" [ -s "$fresh$src/build/demo/build.log" ]
for f in doctor copylat pplat; do
	expect "make demo: build/demo/$f.json" [ -s "$fresh$src/build/demo/$f.json" ]
done
echo "    make demo took ${demo_s}s"

step "README: the packages of make check and make check-all (scripts/deps.sh --list, apt-get -s)"
in_root checkdeps 'pkgs=$(sh scripts/deps.sh --list) && [ -n "$pkgs" ] && apt-get install -s -qq $pkgs >/dev/null'
ran checkdeps "every package of scripts/deps.sh --list (make check-all's, make check's among them) installs on Debian 12"

step "README quick start: its commands, as written"
# A GPU host's user has sudo; the chroot's uname -r is Debian 12's kernel.
in_root kernel 'apt-get install -y -qq sudo >/dev/null && kver=$(apt-cache depends linux-headers-amd64 | sed -n "s/.*Depends: linux-headers-\(.*-amd64\)$/\1/p" | head -n 1) && test -n "$kver" && printf "#!/bin/sh\n[ \"\$1\" = -r ] && { echo %s; exit 0; }\nexec /bin/uname \"\$@\"\n" "$kver" >/usr/local/bin/uname && chmod +x /usr/local/bin/uname && uname -r'
ran kernel "sudo and the uname shim"
kver=$(tail -n 1 "$work/kernel.out")
# The commands of README's quick start block, comments cut, each run as
# it is written (apt-get gets -y; modprobe is not run in a chroot).
block() { # the ```sh block after the heading $1 in file $2
	awk -v h="$1" '$0 == h { f = 1; next } f && /^```sh/ { b = 1; next }
		b && /^```/ { exit } b' "$2"
}
block "## Quick start on a GPU host" "$top/README.md" | sed 's/[[:space:]]*#.*//' | grep . >"$work/quickstart.cmds"
expect "README's quick start has its commands" [ "$(wc -l <"$work/quickstart.cmds")" -ge 6 ]
t=$(date +%s)
n=0
while IFS= read -r cmd; do
	n=$((n + 1))
	case $cmd in
	*modprobe*) echo "    not run in a chroot: $cmd"; continue ;;
	esac
	run=$(echo "$cmd" | sed 's/apt-get install /apt-get install -y /; s/apt-get build-dep /apt-get build-dep -y /')
	in_root "quick$n" "$run" </dev/null
	cp "$work/quick$n.out" "$work/$(echo "$cmd" | sed 's/^sudo //' | cut -d' ' -f1-2 | tr -c 'a-z0-9\n' '_').out"
	case $cmd in
	"gdrmap copylat"*)
		expect "$cmd without a GPU exits 1 (got $rc)" [ $rc = 1 ]
		has "quick$n" "no GPU: libcuda.so.1" ;;
	*) ran "quick$n" "README: $cmd" ;;
	esac
done <"$work/quickstart.cmds"
expect "build-debs.sh: no -dbgsym among build/deb/*.deb" sh -c "! ls '$fresh$src'/build/deb/*-dbgsym_* 2>/dev/null"
for p in libgdrapi2 libgdrapi-dev gdrmap-tools gdrmap-dkms gdrmap python3-gdrmap; do
	expect "$p is installed" sh -c "chroot '$fresh' dpkg-query -W -f='\${Status}' $p | grep -q 'ok installed'"
done
expect "no -dbgsym package was installed" sh -c "! chroot '$fresh' dpkg-query -W -f='\${Package}\n' | grep -q dbgsym"
expect "DKMS built gdrdrv for $kver" sh -c "ls '$fresh'/lib/modules/'$kver'/updates/dkms/gdrdrv.ko* >/dev/null 2>&1"
expect "usermod put root in video" sh -c "chroot '$fresh' id -nG root | grep -qw video"
has gdrmap_doctor "^\[warn\] cuda "
hasnt gdrmap_doctor "/\.\./"
echo "    quick start took $(( $(date +%s) - t ))s"

step "README and python/README.md: a venv, pip install ./python, the package"
venv=$(sed -n 's/.*`\(python3 -m venv [^`]*pip install \.\/python\)`.*/\1/p' "$top/python/README.md" | head -n 1)
expect "python/README.md gives the venv command" [ -n "$venv" ]
expect "README.md gives the same one" grep -qF "$venv" "$top/README.md"
in_root venv "apt-get install -y -qq python3-venv >/dev/null && PIP_NO_INDEX=1 && export PIP_NO_INDEX && $venv"
ran venv "$venv (offline)"
in_root pyuse 'cd / && ~/venv/bin/python -c "import gdrmap; print(gdrmap.library_path())"'
ran pyuse "the installed package"
has pyuse "^/usr/lib/x86_64-linux-gnu/libgdrapi.so.2"
in_root pytree 'PYTHONPATH=python python3 -c "import gdrmap; print(gdrmap.library_path())"'
ran pytree "PYTHONPATH=python from the tree"
has pytree "$src/build/lib/libgdrapi.so.2"

for f in "$work"/*.out; do
	[ $failed = 0 ] && break
	echo "--- $(basename "$f")"; tail -n 20 "$f"
done
step "done"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
