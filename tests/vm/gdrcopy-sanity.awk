# The table of tests/vm/gdrcopy-sanity.sh from its VM's serial log: the
# GCS-RESULT lines of tests/vm/gdrcopy-sanity-init.  One row per case, one
# column per pairing (DRIVER+LIBRARY) and gdrdrv mode (p1 persistent, p0
# callback); "*" marks a case after which the kernel log was not clean.
# Every pairing but the first (the reference) must give the reference's
# verdict with a clean log: the closing line counts those that did
# (passed), those that did not (failed), and those that did not where the
# file `expected` explains why for that pairing's library (skipped).
# variables: configs, modes (space separated), kver, gv (GDRCopy version),
# expected (lines "DRIVER+LIBRARY CASE WHY", either side may be "*")
BEGIN {
	while ((getline line < expected) > 0) {
		if (line ~ /^#/ || line !~ /[^ ]/) continue
		split(line, f, " ")
		why = line
		sub(/^[^ ]+ +[^ ]+ +/, "", why)
		known[f[1] SUBSEP f[2]] = why
	}
}
# Why the expected file says pairing p may differ in case t, or "".
function explained(p, t,    d, l) {
	d = p; sub(/\+.*/, "", d)
	l = p; sub(/^[^+]*\+/, "", l)
	if ((p SUBSEP t) in known) return known[p SUBSEP t]
	if (("*+" l SUBSEP t) in known) return known["*+" l SUBSEP t]
	if ((d "+*" SUBSEP t) in known) return known[d "+*" SUBSEP t]
	return ""
}
$1 == "GCS-RESULT" {
	key = $2 SUBSEP $3 SUBSEP $4
	v[key] = $5 ($7 == "clean" ? "" : "*")
	if (!($4 in seen)) { seen[$4] = 1; cases[++ncases] = $4 }
}
END {
	nc = split(configs, cfg, " ")
	nm = split(modes, md, " ")
	printf "GDRCopy %s sanity, Linux %s: verdict per case (p1 = use_persistent_mapping=1, p0 = 0)\n\n", gv, kver
	printf "| case |"
	for (c = 1; c <= nc; c++) for (m = 1; m <= nm; m++) printf " %s p%s |", cfg[c], md[m]
	printf "\n|---|"
	for (c = 1; c <= nc; c++) for (m = 1; m <= nm; m++) printf "---|"
	printf "\n"
	pass = 0; fail = 0; skip = 0; diffs = ""
	for (i = 1; i <= ncases; i++) {
		t = cases[i]
		printf "| %s |", t
		for (c = 1; c <= nc; c++) for (m = 1; m <= nm; m++) {
			key = cfg[c] SUBSEP md[m] SUBSEP t
			r = (key in v) ? v[key] : "missing"
			printf " %s |", r
			if (c == 1) continue
			ref = cfg[1] SUBSEP md[m] SUBSEP t
			want = (ref in v) ? v[ref] : "missing"
			sub(/\*$/, "", want)
			why = explained(cfg[c], t)
			if (r == want && r != "missing") pass++
			else if (r !~ /\*$/ && r != "missing" && why != "") {
				skip++
				diffs = diffs sprintf("EXPECTED: %s, %s p%s: %s, %s gives %s (%s)\n", t, cfg[c], md[m], r, cfg[1], want, why)
			} else {
				fail++
				diffs = diffs sprintf("DIFFERENT: %s, %s p%s: %s, %s gives %s\n", t, cfg[c], md[m], r, cfg[1], want)
			}
		}
		printf "\n"
	}
	if (ncases == 0) { fail++; diffs = "FAIL: no results in the log\n" }
	printf "\n%s", diffs
	printf "%d passed, %d failed, %d skipped\n", pass, fail, skip
}
