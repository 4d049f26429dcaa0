/* SPDX-License-Identifier: MIT */
/*
 * doctor's checks: each a name, a verdict and one line of advice, added
 * in order to the list every part of doctor is handed (checks.c).
 */
#ifndef GDRMAP_TOOLS_CHECKS_H
#define GDRMAP_TOOLS_CHECKS_H

enum verdict { V_OK, V_WARN, V_FAIL };

/* "ok", "warn", "fail": as the text report and the JSON name them. */
extern const char *const verdict_names[];

struct check {
	char name[48];
	enum verdict v;
	char msg[400];
	char advice[400];
};

#define MAX_CHECKS 96

struct checks {
	struct check c[MAX_CHECKS];
	int n;
};

/* Append a check (advice NULL: none); past MAX_CHECKS it is dropped. */
__attribute__((format(printf, 5, 6)))
void check_add(struct checks *cs, const char *name, enum verdict v,
	       const char *advice, const char *fmt, ...);

#endif /* GDRMAP_TOOLS_CHECKS_H */
