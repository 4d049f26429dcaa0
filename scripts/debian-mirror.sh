# shellcheck shell=sh
# Sourced: where this machine gets Debian's packages from, for the scripts
# that fetch packages of their own (packaging/rootfs.sh, tests/kernels).
# A site with its own mirror, a proxy that rewrites the archive's address
# or an offline mirror has it in its apt sources already, so they are
# read from there; nothing in the tree names an archive host.
#
#   debian_mirror           the Debian archive: $GDRMAP_DEBIAN_MIRROR, else
#                           the first apt source of a Debian suite
#   debian_security_mirror  the security archive: $GDRMAP_DEBIAN_SECURITY_MIRROR,
#                           else the first apt source of a SUITE-security
#   apt_source_entries FILE...  "TYPE URI SUITE" for every enabled entry of
#                           these sources files (one-line .list and deb822
#                           .sources forms), one line per URI and suite
#   apt_source_files        the machine's sources files, as apt reads them
#                           (Dir::Etc::sourcelist and sourceparts)
#
# Each prints the URI (no trailing slash) and returns 0, or says on stderr
# what to set and returns 1.  DEBIAN_MIRROR_SOURCES (files) replaces the
# machine's sources, for tests.

apt_source_files() {
	_list=/etc/apt/sources.list _parts=/etc/apt/sources.list.d
	if command -v apt-config >/dev/null 2>&1; then
		eval "$(apt-config shell _list Dir::Etc::sourcelist/f \
			_parts Dir::Etc::sourceparts/d 2>/dev/null)"
	fi
	[ -f "$_list" ] && echo "$_list"
	for _f in "${_parts%/}"/*.list "${_parts%/}"/*.sources; do
		[ -f "$_f" ] && echo "$_f"
	done
	return 0
}

apt_source_entries() {
	for _f in "$@"; do
		case $_f in
		*.sources) _form=deb822 ;;
		*) _form=line ;;
		esac
		awk -v form=$_form '
		function emit(types, uris, suites,   t, u, s, nt, nu, ns, i, j, k) {
			nt = split(types, t); nu = split(uris, u); ns = split(suites, s)
			for (i = 1; i <= nt; i++)
				for (j = 1; j <= nu; j++)
					for (k = 1; k <= ns; k++) {
						sub(/\/+$/, "", u[j])
						print t[i], u[j], s[k]
					}
		}
		function flush() {
			if (types != "" && uris != "" && suites != "" && enabled !~ /^[Nn][Oo]$/)
				emit(types, uris, suites)
			types = uris = suites = enabled = key = ""
		}
		form == "line" {
			sub(/#.*/, "")
			if ($1 != "deb" && $1 != "deb-src")
				next
			type = $1
			$1 = ""
			line = $0
			# [ option=value ... ] between the type and the URI
			if (line ~ /^ *\[/)
				sub(/^ *\[[^]]*\]/, "", line)
			n = split(line, w)
			if (n >= 2)
				emit(type, w[1], w[2])
			next
		}
		# deb822: paragraphs of "Field: value", continued by lines that
		# start with a blank; "#" lines are comments.
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ {
			if (key == "types") types = types " " $0
			else if (key == "uris") uris = uris " " $0
			else if (key == "suites") suites = suites " " $0
			next
		}
		{
			key = tolower(substr($0, 1, index($0, ":") - 1))
			value = substr($0, index($0, ":") + 1)
			if (key == "types") types = value
			else if (key == "uris") uris = value
			else if (key == "suites") suites = value
			else if (key == "enabled") { enabled = value; gsub(/[ \t]/, "", enabled) }
		}
		END { if (form == "deb822") flush() }' "$_f"
	done
}

# Debian's suites by name: the aliases, the release names, and this
# machine's own release when it is Debian (so that a release newer than
# this list is known on itself).
debian_suite() {
	_base=${1%-updates}
	_base=${_base%-backports-sloppy}
	_base=${_base%-backports}
	_base=${_base%-proposed-updates}
	case $_base in
	oldoldstable | oldstable | stable | testing | unstable | sid | experimental | \
	buster | bullseye | bookworm | trixie | forky | duke) return 0 ;;
	esac
	_id= _codename=
	if [ -r /etc/os-release ]; then
		# shellcheck disable=SC1091
		_id=$(. /etc/os-release && echo "${ID:-}")
		_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	fi
	[ "$_id" = debian ] && [ -n "$_codename" ] && [ "$_base" = "$_codename" ]
}

_debian_sources() {
	if [ -n "${DEBIAN_MIRROR_SOURCES:-}" ]; then
		# shellcheck disable=SC2086
		apt_source_entries $DEBIAN_MIRROR_SOURCES
	else
		# shellcheck disable=SC2046
		apt_source_entries $(apt_source_files)
	fi
}

debian_mirror() {
	if [ -n "${GDRMAP_DEBIAN_MIRROR:-}" ]; then
		echo "${GDRMAP_DEBIAN_MIRROR%/}"
		return 0
	fi
	_found=$(_debian_sources | while read -r _t _u _s; do
		[ "$_t" = deb ] || continue
		case $_u in cdrom:*) continue ;; esac
		case $_s in *-security | */updates) continue ;; esac
		debian_suite "$_s" || continue
		echo "$_u"
		break
	done)
	if [ -z "$_found" ]; then
		echo "no Debian archive among this machine's apt sources ($(apt_source_files | tr '\n' ' ')): set GDRMAP_DEBIAN_MIRROR to a Debian mirror's URL" >&2
		return 1
	fi
	echo "$_found"
}

debian_security_mirror() {
	if [ -n "${GDRMAP_DEBIAN_SECURITY_MIRROR:-}" ]; then
		echo "${GDRMAP_DEBIAN_SECURITY_MIRROR%/}"
		return 0
	fi
	_found=$(_debian_sources | while read -r _t _u _s; do
		[ "$_t" = deb ] || continue
		case $_s in
		*-security) debian_suite "${_s%-security}" || continue ;;
		*/updates) debian_suite "${_s%/updates}" || continue ;;
		*) continue ;;
		esac
		echo "$_u"
		break
	done)
	if [ -z "$_found" ]; then
		echo "no Debian security archive among this machine's apt sources ($(apt_source_files | tr '\n' ' ')): set GDRMAP_DEBIAN_SECURITY_MIRROR to its URL" >&2
		return 1
	fi
	echo "$_found"
}
