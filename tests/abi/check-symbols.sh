#!/bin/sh
# The shared library's dynamic interface: SONAME, exported symbols (the
# API and nothing else) with their versions, and its dependencies.
# usage: check-symbols.sh path/to/libgdrapi.so.2.N
set -u
lib=$1
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libgdrapi.so.2 ] && ok || bad "SONAME is '$soname', want libgdrapi.so.2"

want="gdr_close@@GDRAPI_2.0
gdr_copy_from_mapping@@GDRAPI_2.0
gdr_copy_to_mapping@@GDRAPI_2.0
gdr_driver_get_version@@GDRAPI_2.0
gdr_get_attribute@@GDRAPI_2.5
gdr_get_callback_flag@@GDRAPI_2.0
gdr_get_info@@GDRAPI_2.0
gdr_get_info_v2@@GDRAPI_2.4
gdr_get_mapping_type_string@@GDRAPI_2.5
gdr_map@@GDRAPI_2.0
gdr_map_v2@@GDRAPI_2.5
gdr_open@@GDRAPI_2.0
gdr_pin_buffer@@GDRAPI_2.0
gdr_pin_buffer_v2@@GDRAPI_2.5
gdr_runtime_get_version@@GDRAPI_2.0
gdr_unmap@@GDRAPI_2.0
gdr_unpin_buffer@@GDRAPI_2.0
gdrmap_copy_from_mapping@@GDRMAP_0.1
gdrmap_copy_from_mapping_via@@GDRMAP_0.1
gdrmap_copy_path@@GDRMAP_0.1
gdrmap_copy_path_host@@GDRMAP_0.2
gdrmap_copy_to_mapping@@GDRMAP_0.1
gdrmap_copy_to_mapping_via@@GDRMAP_0.1
gdrmap_last_error@@GDRMAP_0.1
gdrmap_mem_alloc@@GDRMAP_0.1
gdrmap_mem_free@@GDRMAP_0.1
gdrmap_open@@GDRMAP_0.1"
have=$(nm -D --defined-only --with-symbol-versions "$lib" |
	awk '$2 ~ /^[TtWiDdBbRr]$/ && $3 !~ /^GDR(API|MAP)_/ { print $3 }' | sort)
if [ "$have" = "$want" ]; then
	ok
else
	bad "exported symbols differ from the API:"
	printf '%s\n' "$want" >/tmp/gdrmap-sym-want.$$
	printf '%s\n' "$have" >/tmp/gdrmap-sym-have.$$
	diff /tmp/gdrmap-sym-want.$$ /tmp/gdrmap-sym-have.$$ | sed 's/^/    /'
	rm -f /tmp/gdrmap-sym-want.$$ /tmp/gdrmap-sym-have.$$
fi

# gdrmap's version nodes: none newer than this release (gdrapi.h's
# GDRMAP_VERSION_*, the packages' version), and the Debian symbols file
# lists exactly the library's nodes.
top=$(cd "$(dirname "$0")/../.." && pwd)
release=$(sed -n 's/^#define GDRMAP_VERSION_MAJOR[[:space:]]*//p' "$top/include/gdrapi.h").$(sed -n \
	's/^#define GDRMAP_VERSION_MINOR[[:space:]]*//p' "$top/include/gdrapi.h")
nodes=$(nm -D --defined-only --with-symbol-versions "$lib" |
	sed -n 's/.*@@\{0,1\}\(GDR[A-Z]*_[0-9.]*\)$/\1/p' | sort -u)
for n in $nodes; do
	case $n in
	GDRMAP_*)
		v=${n#GDRMAP_}
		newest=$(printf '%s\n%s\n' "$v" "$release" | sort -V | tail -n 1)
		[ "$newest" = "$release" ] && ok ||
			bad "symbol version $n is newer than this release, $release (gdrapi.h): add the symbols to GDRMAP_$release" ;;
	esac
done
debian=$(sed -n 's/^ (symver)\([^ ]*\) .*/\1/p' "$top/packaging/debian/libgdrapi2.symbols" | sort -u)
[ "$debian" = "$nodes" ] && ok ||
	bad "packaging/debian/libgdrapi2.symbols lists $(echo $debian), the library has $(echo $nodes)"

# Only the C library (GDRCopy's library needs nothing else either).
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
	grep -v '^libc\.so\.6$' | grep -v '^ld-linux' | tr '\n' ' ')
[ -z "$needed" ] && ok || bad "unexpected dependencies: $needed"

echo "$pass passed, $fail failed"
[ $fail = 0 ]
