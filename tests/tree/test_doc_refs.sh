#!/bin/sh
# Every document the tree names is in the tree, and the code explains
# itself without an issue tracker:
#   - each Markdown file a tracked file mentions is a file of the tree
#     (what scripts write, such as out/mpi/pingpong.md, is named by a
#     path that ends in a results file's name; "$dir/x.md" and DIR/x.md
#     are not names);
#   - no source file (code, make fragments, scripts) says "issue N" or
#     points at a facts sheet or reference outside the tree: what the code
#     relies on is written down in docs/ or bench/results/ instead.
# Exit 0 pass, 1 fail.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if git ls-files >"$tmp/all" 2>/dev/null && [ -s "$tmp/all" ]; then :; else
	find . -path ./build -prune -o -path './build-*' -prune -o -path ./.git -prune \
		-o -type f -print | sed 's|^\./||' | sort >"$tmp/all"
fi
# Text worth reading: not the fuzzer's corpus, not recorded output.
grep -v -e '^tests/libfuzzer/corpus/' "$tmp/all" |
	grep -v -E '\.(png|svg|json|csv|log|rc|err|out|gz)$' >"$tmp/text"
sed 's|.*/||' "$tmp/all" | sort -u >"$tmp/names"

while read -r f; do
	[ -f "$f" ] || continue
	grep -o -E '[$}]?[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b' "$f" 2>/dev/null | sort -u |
	while read -r ref; do
		case $ref in '$'* | '}'*) continue ;; esac
		# A placeholder directory (DIR/x.md, OUT/x.md) names no file.
		echo "$ref" | grep -qE '(^|/)[A-Z][A-Z_]*/' && continue
		grep -qxF "${ref##*/}" "$tmp/names" || echo "$f: $ref"
	done
done <"$tmp/text" >"$tmp/missing"
if [ -s "$tmp/missing" ]; then
	failed=$((failed + 1))
	echo "FAIL: documents named but not in the tree (write what is needed into docs/ in the tree's own words, and point there):"
	sed 's/^/    /' "$tmp/missing"
else
	passed=$((passed + 1))
fi

# Source: everything but documentation, recorded results and this test,
# which names what it looks for.
grep -v -E '\.md$|^bench/results/|^LICENSE$|(^|/)debian/changelog$|^tests/tree/test_doc_refs\.sh$' \
	"$tmp/text" >"$tmp/src"
: >"$tmp/cites"
while read -r f; do
	[ -f "$f" ] || continue
	grep -n -i -E '\bissues? #?[0-9]+|facts sheet|shared/reference|/work/shared' "$f" 2>/dev/null |
		sed "s|^|$f:|" >>"$tmp/cites" || true
done <"$tmp/src"
# Files that still cite one, each with why it is not fixed yet
# (tests/tree/pending-cites): allowed, until the citation goes.
pending=tests/tree/pending-cites
grep -v '^#' "$pending" | awk 'NF { print $1 }' >"$tmp/pending"
grep -v -F -f "$tmp/pending" "$tmp/cites" >"$tmp/new" || true
if [ -s "$tmp/new" ]; then
	failed=$((failed + 1))
	echo "FAIL: source that cites an issue number or a document outside the tree (say the fact, or point at docs/):"
	sed 's/^/    /' "$tmp/new"
else
	passed=$((passed + 1))
fi
while read -r f; do
	if grep -q "^$f:" "$tmp/cites"; then
		echo "(pending: $(grep "^$f:" "$tmp/cites" | head -n 1))"
	else
		failed=$((failed + 1))
		echo "FAIL: $pending names $f, which cites nothing outside the tree any more: take it off the list"
	fi
done <"$tmp/pending"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
