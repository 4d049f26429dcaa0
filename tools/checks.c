// SPDX-License-Identifier: MIT
/* doctor's list of checks (checks.h). */
#include <stdarg.h>
#include <stdio.h>

#include "checks.h"

const char *const verdict_names[] = { "ok", "warn", "fail" };

void check_add(struct checks *cs, const char *name, enum verdict v,
	       const char *advice, const char *fmt, ...)
{
	struct check *c;
	va_list ap;

	if (cs->n >= MAX_CHECKS)
		return;
	c = &cs->c[cs->n++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->v = v;
	snprintf(c->advice, sizeof(c->advice), "%s", advice ? advice : "");
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
}
