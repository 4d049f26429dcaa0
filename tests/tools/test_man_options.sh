#!/bin/sh
# gdrmap(1) is where the command's options are written down (tools/README.md
# points there): every long option a subcommand's --help lists is in the
# page's OPTIONS section, and every option that section describes is one
# some subcommand (or gdrmap itself: --help, --version) takes.
. "$(dirname "$0")/harness.sh"
page=${GDRMAP_MAN:-$(dirname "$0")/../../man/man1/gdrmap.1}
[ -f "$page" ] || { echo "SKIP: no $page"; exit 77; }

# The options of the OPTIONS section, as "--name" (roff writes \-\-name).
sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$page" | sed 's/\\-/-/g' |
	grep -o -e '--[a-z][a-z-]*' | sort -u >"$OUT/man"
expect "gdrmap(1) has an OPTIONS section naming options" [ -s "$OUT/man" ]

: >"$OUT/help"
for cmd in doctor copylat copybw apiperf pplat; do
	run_rc "help-$cmd" "$GDRMAP" "$cmd" --help
	expect "gdrmap $cmd --help exits 0 (got $rc)" [ "$rc" = 0 ]
	grep -o -e '--[a-z][a-z-]*' "$OUT/help-$cmd.out" | sort -u |
	while read -r o; do
		echo "$o" >>"$OUT/help"
		grep -qx -e "$o" "$OUT/man" || echo "$cmd $o" >>"$OUT/undocumented"
	done
done
echo --version >>"$OUT/help"
sort -u "$OUT/help" -o "$OUT/help"
expect "every option of the subcommands' --help is in gdrmap(1): $(cat "$OUT/undocumented" 2>/dev/null | tr '\n' ' ')" \
	[ ! -s "$OUT/undocumented" ]
extra=$(grep -vx -F -f "$OUT/help" "$OUT/man" | tr '\n' ' ')
expect "gdrmap(1) describes no option the command lacks: $extra" [ -z "$extra" ]
done_tests
