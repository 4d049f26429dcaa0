#!/bin/sh
# Every page under man/ formats with groff's warnings on and none given,
# every .so redirect points at a page that exists, and every function of
# gdrapi.h has a page.  Exit 0 pass, 1 fail, 77 skip (no groff).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top/man"
command -v groff >/dev/null || { echo "SKIP: groff is not installed"; exit 77; }

bad=0 n=0
for p in *.[1-8]; do
	n=$((n + 1))
	target=$(sed -n 's/^\.so man[1-8]\///p' "$p")
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

# No control character but tab and newline: a "\f" written through printf
# or echo becomes a form feed, which groff takes silently.
ctl=$(LC_ALL=C grep -lP '[\x00-\x08\x0b-\x1f\x7f]' ./*.[1-8] 2>/dev/null)
[ -z "$ctl" ] || { echo "control characters in: $ctl"; bad=1; }

# Every function gdrapi.h declares has a page (itself or a redirect).
for f in $(sed -n 's/^[a-z].*[ *]\(gdr[a-z_0-9]*\)(.*/\1/p' ../include/gdrapi.h); do
	[ -f "$f.3" ] || { echo "no man page for $f"; bad=1; }
done
[ $bad = 0 ] || { echo "man pages: problems above"; exit 1; }
echo "$n man pages format cleanly"
