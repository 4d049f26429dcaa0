#!/bin/sh
# Every page under man/manN/ formats with groff's warnings on and none
# given, is in the section its name says, every .so redirect points at a
# page that exists (relative to man/, as installed pages are to the
# manual's top), every function of gdrapi.h has a page, and, with man-db,
# the pages read from the tree as the README says (man -M man PAGE), the
# .so redirects included.  Exit 0 pass, 1 fail, 77 skip (no groff).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top/man"
command -v groff >/dev/null || { echo "SKIP: groff is not installed"; exit 77; }

bad=0 n=0
for p in man[1-8]/*; do
	n=$((n + 1))
	case $p in
	man[1-8]/*.[1-8]) [ "${p%%/*}" = "man${p##*.}" ] ||
		{ echo "$p: a section ${p##*.} page in ${p%%/*}"; bad=1; } ;;
	*) echo "$p: not a man page (NAME.SECTION)"; bad=1; continue ;;
	esac
	target=$(sed -n 's/^\.so \(man[1-8]\/.*\)/\1/p' "$p")
	if [ -n "$target" ]; then
		[ -f "$target" ] || { echo "$p: .so target $target does not exist"; bad=1; }
		continue
	fi
	out=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$p" 2>&1) || true
	if [ -n "$out" ]; then echo "$p:"; echo "$out" | sed 's/^/    /'; bad=1; fi
	grep -q '^\.SH NAME' "$p" || { echo "$p: no NAME section"; bad=1; }
	case $p in
	*.3) grep -q '^\.SH RETURN VALUE' "$p" || { echo "$p: no RETURN VALUE section"; bad=1; } ;;
	esac
done
stray=$(find . -maxdepth 1 -type f)
[ -z "$stray" ] || { echo "pages outside man/manN/ (man -M cannot find them): $stray"; bad=1; }

# No control character but tab and newline: a "\f" written through printf
# or echo becomes a form feed, which groff takes silently.
ctl=$(LC_ALL=C grep -lP '[\x00-\x08\x0b-\x1f\x7f]' man[1-8]/* 2>/dev/null) || true
[ -z "$ctl" ] || { echo "control characters in: $ctl"; bad=1; }

# Every function gdrapi.h declares has a page (itself or a redirect).
for f in $(sed -n 's/^[a-z].*[ *]\(gdr[a-z_0-9]*\)(.*/\1/p' ../include/gdrapi.h); do
	[ -f "man3/$f.3" ] || { echo "no man page for $f"; bad=1; }
done

# Read from the tree as a user would: a redirect shows its target.
if command -v man >/dev/null; then
	got=$(cd "$top" && MANWIDTH=80 man -M man -P cat gdr_close 2>&1) || true
	case $got in
	*"gdr_open,"*"gdr_close"*) ;;
	*) echo "man -M man gdr_close does not show gdr_open(3): $got"; bad=1 ;;
	esac
	got=$(cd "$top" && MANWIDTH=80 man -M man -P cat 1 gdrmap 2>&1) || true
	case $got in
	*"gdrmap - check a host"* | *"gdrmap \- check"* | *"gdrmap − check"*) ;;
	*) echo "man -M man 1 gdrmap: $(echo "$got" | head -n 5)"; bad=1 ;;
	esac
fi
[ $bad = 0 ] || { echo "man pages: problems above"; exit 1; }
echo "$n man pages format cleanly"
