// SPDX-License-Identifier: MIT
/*
 * copylat's JSON (copylat.h): per size the four calls it always timed,
 * gdrmap_copy_* and, per direction, the path it took, every forced path
 * with --paths and the ratios; then the crossovers and the summaries of
 * the text form, so that a reader of the JSON needs no arithmetic.
 */
#include <math.h>

#include "copylat.h"
#include "pathsum.h"
#include "paths.h"

static void stats_or_null(struct json *j, const char *key,
			  const struct row *r, int m)
{
	if (row_has(r, m))
		stats_json(j, key, &r->st[m]);
	else
		json_null(j, key);
}

static void path_or_null(struct json *j, const char *key, int path)
{
	if (path == PATH_UNKNOWN)
		json_null(j, key);
	else
		json_str(j, key, path_chosen_name(path));
}

static void dir_json(struct json *j, const struct copylat_run *run,
		     const struct row *r, int d)
{
	int p;

	json_obj_begin(j, dir_names[d]);
	path_or_null(j, "path", r->chosen[d]);
	json_num(j, "over_gdr_copy", row_over_gdr(r, d));
	json_num(j, "over_cuMemcpy", row_over_cuda(r, d));
	if (run->paths) {
		json_obj_begin(j, "paths");
		for (p = GDRMAP_COPY_PATH_MAPPING;
		     p <= GDRMAP_COPY_PATH_STAGED; p++)
			stats_or_null(j, path_name(p), r, M_VIA(d, p));
		json_obj_end(j);
		path_or_null(j, "fastest_path", row_fastest(r, d));
		json_num(j, "over_fastest", row_over_fastest(r, d));
		p = row_fastest_other(r, d);
		if (p < 0)
			json_null(j, "fastest_other");
		else
			json_str(j, "fastest_other", method_name(p));
		json_num(j, "over_fastest_other", row_over_other(r, d));
	}
	json_obj_end(j);
}

static void row_json(struct json *j, const struct copylat_run *run,
		     const struct row *r)
{
	int m, d;

	json_obj_begin(j, NULL);
	json_int(j, "size", (long long)r->size);
	json_bool(j, "verified", r->verified);
	if (!r->verified) {
		json_str(j, "error", r->why);
		json_obj_end(j);
		return;
	}
	for (m = 0; m < 4; m++)
		stats_json(j, methods[m].key, &r->st[m]);
	stats_or_null(j, methods[TO_AUTO].key, r, TO_AUTO);
	stats_or_null(j, methods[FROM_AUTO].key, r, FROM_AUTO);
	if (run->paths) {
		stats_or_null(j, methods[HTOD_ASYNC].key, r, HTOD_ASYNC);
		stats_or_null(j, methods[DTOH_ASYNC].key, r, DTOH_ASYNC);
	}
	for (d = 0; d < 2; d++)
		dir_json(j, run, r, d);
	json_obj_end(j);
}

/* "crossovers": {"write": [{"size", "from", "to"}, ...], "read": [...]} */
static void crossovers_json(struct json *j, const char *key,
			    const struct copylat_run *run, bool fastest)
{
	struct crossover x[64];
	struct series s;
	int d, i, k;

	json_obj_begin(j, key);
	for (d = 0; d < 2; d++) {
		series_of(run, d, fastest, &s);
		k = path_crossovers(s.size, s.path, s.n, x, 64);
		json_arr_begin(j, dir_names[d]);
		for (i = 0; i < k; i++) {
			json_obj_begin(j, NULL);
			json_int(j, "size", (long long)x[i].size);
			json_str(j, "from", path_name(x[i].from));
			json_str(j, "to", path_name(x[i].to));
			json_obj_end(j);
		}
		json_arr_end(j);
	}
	json_obj_end(j);
}

/* "against": the fastest other way where gdrmap_copy_* fared worst. */
static void worst_other(struct json *j, const struct copylat_run *run, int d,
			const struct ratio_sum *rs)
{
	int r, m = -1;

	for (r = 0; rs->sizes && r < run->nrows; r++)
		if (run->rows[r].size == rs->worst_size)
			m = row_fastest_other(&run->rows[r], d);
	if (m < 0)
		json_null(j, "against");
	else
		json_str(j, "against", method_name(m));
}

static void ratios_json(struct json *j, const char *key,
			const struct copylat_run *run, enum versus vs)
{
	bool small = vs == VS_SMALL;
	struct ratio_sum rs;
	int d;

	json_obj_begin(j, key);
	if (small)
		json_int(j, "max_size", SMALL_COPY);
	else
		json_num(j, "ratio", GOAL_RATIO);
	for (d = 0; d < 2; d++) {
		sum_ratios(run, d, vs, &rs);
		json_obj_begin(j, dir_names[d]);
		json_int(j, "sizes", rs.sizes);
		if (!small)
			json_int(j, "within", rs.within);
		json_num(j, "worst_ratio", rs.worst);
		if (rs.sizes)
			json_int(j, "worst_size", (long long)rs.worst_size);
		else
			json_null(j, "worst_size");
		if (vs == VS_OTHER)
			worst_other(j, run, d, &rs);
		json_obj_end(j);
	}
	json_obj_end(j);
}

/* "not_available": [{"direction", "path", "from_size", "why"}, ...] */
static void na_json(struct json *j, const struct copylat_run *run)
{
	int m;

	json_arr_begin(j, "not_available");
	for (m = TO_VIA_MAP; run->na && m < NMETHODS; m++) {
		if (!run->na[m].why[0])
			continue;
		json_obj_begin(j, NULL);
		json_str(j, "direction", dir_names[!methods[m].write]);
		json_str(j, "path", methods[m].key);
		json_int(j, "from_size", (long long)run->na[m].size);
		json_str(j, "why", run->na[m].why);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void copylat_json(struct json *j, const struct copylat_run *run)
{
	int r;

	json_bool(j, "gdrmap_copy", run->calls);
	json_bool(j, "paths", run->paths);
	json_arr_begin(j, "results");
	for (r = 0; r < run->nrows; r++)
		row_json(j, run, &run->rows[r]);
	json_arr_end(j);
	crossovers_json(j, "crossovers", run, false);
	if (run->paths) {
		crossovers_json(j, "fastest_crossovers", run, true);
		ratios_json(j, "goal", run, VS_FASTEST);
		ratios_json(j, "goal_other", run, VS_OTHER);
	} else {
		json_null(j, "fastest_crossovers");
		json_null(j, "goal");
		json_null(j, "goal_other");
	}
	ratios_json(j, "small_copies", run, VS_SMALL);
	na_json(j, run);
}
