#!/bin/sh
# Every environment variable the library, the gdrmap command and the
# Python package read is in docs/environment.md's tables, the one list
# the man pages and docs/install.md point at: a name read through
# getenv() or the diagnosis's diag_getenv(), a whole string literal that
# is a gdrmap, GDRCopy, Vulkan or XDG variable's name (lists of names
# read in a loop), and the Python package's os.environ.get() and *_ENV
# names.  And every name the table lists is read somewhere.
# Exit 0 pass, 1 fail.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
table=docs/environment.md
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if git ls-files >"$tmp/all" 2>/dev/null && [ -s "$tmp/all" ]; then :; else
	find lib tools common python/gdrmap -type f | sort >"$tmp/all"
fi
grep -E '^(lib|tools|common)/.*\.[ch]$' "$tmp/all" |
	xargs grep -ohE '(secure_)?getenv\("[A-Za-z_][A-Za-z0-9_]*"|diag_getenv\([a-z]+, "[A-Za-z_][A-Za-z0-9_]*"|"(GDRMAP|GDRCOPY|VK|XDG)_[A-Z0-9_]+"' \
	>"$tmp/c" || true
grep -E '^python/gdrmap/.*\.py$' "$tmp/all" |
	xargs grep -ohE 'environ\.get\("[A-Za-z_][A-Za-z0-9_]*"|ENV = "[A-Za-z_][A-Za-z0-9_]*"' \
	>"$tmp/py" || true
cat "$tmp/c" "$tmp/py" | grep -oE '"[^"]+"' | tr -d '"' | sort -u >"$tmp/read"
# The table's first cells: `NAME` or `NAME`, `NAME`.
grep -E '^\| `' "$table" | cut -d'|' -f2 | grep -oE '`[^`]+`' | tr -d '`' |
	sort -u >"$tmp/listed"

for v in $(comm -23 "$tmp/read" "$tmp/listed"); do
	failed=$((failed + 1))
	echo "FAIL: $v is read (lib/, tools/, common/ or python/gdrmap/) but not in $table: add it to the table, with what it does, its values, its default and who reads it"
done
for v in $(comm -13 "$tmp/read" "$tmp/listed"); do
	failed=$((failed + 1))
	echo "FAIL: $table lists $v, which nothing reads (any more): take it off"
done
[ -s "$tmp/read" ] || { failed=$((failed + 1)); echo "FAIL: found no variable read at all"; }
[ $failed = 0 ] && passed=$((passed + 1))
echo "$passed passed, $failed failed"
[ $failed = 0 ]
