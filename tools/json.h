/* SPDX-License-Identifier: MIT */
/*
 * A streaming JSON writer: enough for the tools' reports, which are
 * written once, front to back, so no tree is built.  Keys are NULL inside
 * arrays.  Strings are escaped; non-finite numbers become null, so the
 * output always parses.
 */
#ifndef GDRMAP_TOOLS_JSON_H
#define GDRMAP_TOOLS_JSON_H

#include <stdbool.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];
	char closer[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f);
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val);
void json_int(struct json *j, const char *key, long long val);
void json_num(struct json *j, const char *key, double val);
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
/* Close whatever is still open and end the document with a newline. */
void json_finish(struct json *j);

#endif /* GDRMAP_TOOLS_JSON_H */
