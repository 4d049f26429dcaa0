// SPDX-License-Identifier: MIT
/*
 * copylat's reports on a made-up run, without a GPU: the columns of
 * gdrmap_copy_* and of each forced path, "n/a" where a path cannot
 * serve, the path taken, the ratios, the crossovers and the goal line in
 * the text; the same in the JSON, read back with jsonq ($JSONQ, as make
 * check-tools sets it).  And the pure parts under them: sizes as text,
 * crossovers and runs of a series, ratio sums.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "copylat.h"
#include "pathsum.h"
#include "paths.h"

enum { MAP = GDRMAP_COPY_PATH_MAPPING, THR = GDRMAP_COPY_PATH_THREADS,
       DMA = GDRMAP_COPY_PATH_DMA };

static void test_pathsum(void)
{
	static const size_t sz[] = { 8, 16, 1024, 2048, 4096, 1 << 20,
				     64 << 20 };
	const int p1[] = { MAP, MAP, MAP, PATH_UNKNOWN, DMA, THR, THR };
	const int none[] = { PATH_UNKNOWN, GDRMAP_COPY_PATH_AUTO };
	struct crossover x[8];
	struct ratio_sum rs;
	char buf[256];
	int k;

	CHECK(!strcmp(fmt_size(8, buf, sizeof(buf)), "8"), "%s", buf);
	CHECK(!strcmp(fmt_size(4096, buf, sizeof(buf)), "4K"), "%s", buf);
	CHECK(!strcmp(fmt_size(64 << 20, buf, sizeof(buf)), "64M"), "%s", buf);
	CHECK(!strcmp(fmt_size(3000, buf, sizeof(buf)), "3000"), "%s", buf);
	CHECK(!strcmp(fmt_size(1536, buf, sizeof(buf)), "1536"), "%s", buf);

	k = path_crossovers(sz, p1, 7, x, 8);
	CHECK(k == 2, "two crossovers, got %d", k);
	CHECK(k >= 1 && x[0].size == 4096 && x[0].from == MAP &&
	      x[0].to == DMA, "first at 4K, mapping -> dma (the unknown "
	      "2K passed over): %zu %d %d", x[0].size, x[0].from, x[0].to);
	CHECK(k >= 2 && x[1].size == 1 << 20 && x[1].from == DMA &&
	      x[1].to == THR, "second at 1M, dma -> threads");
	CHECK(path_crossovers(sz, p1, 7, x, 1) == 1, "max is kept");
	CHECK(path_crossovers(sz, none, 2, x, 8) == 0, "none known: none");

	path_runs(buf, sizeof(buf), sz, p1, 7);
	CHECK(!strcmp(buf, "mapping 8-1K, dma 4K, threads 1M-64M"), "%s", buf);
	path_runs(buf, sizeof(buf), sz, none, 2);
	CHECK(!strcmp(buf, "-"), "no path: '%s'", buf);
	path_runs(buf, 12, sz, p1, 7);
	CHECK(strlen(buf) < 12, "cut to the buffer: '%s'", buf);

	ratio_init(&rs);
	CHECK(rs.sizes == 0 && isnan(rs.worst), "empty");
	ratio_add(&rs, 8, 1.05, 1.1);
	ratio_add(&rs, 16, NAN, 1.1);
	ratio_add(&rs, 32, 1.3, 1.1);
	ratio_add(&rs, 64, 1.1, 1.1);
	CHECK(rs.sizes == 3 && rs.within == 2, "%d sizes, %d within",
	      rs.sizes, rs.within);
	CHECK(rs.worst == 1.3 && rs.worst_size == 32, "worst %g at %zu",
	      rs.worst, rs.worst_size);
}

/* A row with p50s given per method (0: not measured, -1: n/a). */
static void row(struct row *w, size_t size, int chosen_w, int chosen_r,
		const double p50[NMETHODS])
{
	int m;

	memset(w, 0, sizeof(*w));
	w->size = size;
	w->verified = true;
	w->chosen[0] = chosen_w;
	w->chosen[1] = chosen_r;
	for (m = 0; m < NMETHODS; m++) {
		if (p50[m] < 0) {
			w->na |= 1u << m;
		} else if (p50[m] > 0) {
			w->measured |= 1u << m;
			w->st[m].n = 10;
			w->st[m].p0 = p50[m] - 1;
			w->st[m].p50 = p50[m];
			w->st[m].p99 = p50[m] + 1;
			w->st[m].max = p50[m] + 2;
			w->st[m].mean = p50[m];
		}
	}
}

/*
 * Four sizes: writes go mapping -> dma at 4K, reads mapping -> threads
 * at 1K; threads cannot write (n/a), staged serves writes of 4K only; at
 * 4K reads gdrmap_copy_* is 1.5x the fastest path; 1M moved wrong data.
 * The fastest other way: the mapping at 8, cuMemcpy*Async at 1K reads
 * (2100 / 1800 = 1.17x) and at 4K (3270 / 2500 = 1.31x, 9000 / 2800 =
 * 3.21x).  No ratio sits on a limit: 3270 / 3000 is 1.09, not 1.1.
 *   methods: TO_MAP HTOD FROM_MAP DTOH TO_AUTO FROM_AUTO
 *            TO_VIA_MAP TO_VIA_THREADS TO_VIA_DMA TO_VIA_STAGED
 *            FROM_VIA_MAP FROM_VIA_THREADS FROM_VIA_DMA FROM_VIA_STAGED
 *            HTOD_ASYNC DTOH_ASYNC
 */
static struct row rows[4];
static struct na_note notes[NMETHODS];

static void make_rows(void)
{
	static const double r8[NMETHODS] = {
		100, 2000, 200, 2000, 105, 210, 100, -1, 5000, -1, 200, 900,
		5000, -1, 1800, 1800 };
	static const double r1k[NMETHODS] = {
		200, 2000, 4000, 2000, 200, 2100, 200, -1, 5000, -1, 4000,
		2000, 6000, -1, 1900, 1800 };
	static const double r4k[NMETHODS] = {
		8000, 3000, 16000, 3000, 3270, 9000, 8000, -1, 3000, 4000,
		16000, 6000, 7000, -1, 2500, 2800 };

	row(&rows[0], 8, MAP, MAP, r8);
	row(&rows[1], 1024, MAP, THR, r1k);
	row(&rows[2], 4096, DMA, THR, r4k);
	memset(&rows[3], 0, sizeof(rows[3]));
	rows[3].size = 1 << 20;
	rows[3].chosen[0] = rows[3].chosen[1] = PATH_UNKNOWN;
	snprintf(rows[3].why, sizeof(rows[3].why), "wrong data: made up");
	notes[TO_VIA_THREADS].size = 8;
	snprintf(notes[TO_VIA_THREADS].why, sizeof(notes[0].why),
		 "threads only read");
}

static char *report(const struct copylat_run *run, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct json j;

	if (!f)
		exit(1);
	if (json) {
		json_init(&j, f);
		json_obj_begin(&j, NULL);
		copylat_json(&j, run);
		json_finish(&j);
	} else {
		copylat_text(f, run);
	}
	fclose(f);
	return text;
}

/* The line of the text that starts with the size, in the table whose
 * title starts with title. */
static const char *line_of(const char *text, const char *title,
			   const char *size, char *buf, size_t len)
{
	const char *t = strstr(text, title), *p, *e;

	buf[0] = 0;
	if (!t)
		return buf;
	for (p = t; (p = strchr(p, '\n')) != NULL; ) {
		p++;
		while (*p == ' ')
			p++;
		if (!strncmp(p, size, strlen(size)) && p[strlen(size)] == ' ') {
			e = strchr(p, '\n');
			snprintf(buf, len, "%.*s", (int)(e ? e - p : (long)strlen(p)),
				 p);
			break;
		}
	}
	return buf;
}

static void test_text(void)
{
	struct copylat_run run = { rows, 4, true, true, notes };
	char *t, l[512];

	t = report(&run, false);
	CHECK(strstr(t, "latency of one call, p0 / p50 / p99"),
	      "the table of gdr_copy_* and cuMemcpy is still there:\n%s", t);
	CHECK(strstr(t, "writes: gdrmap_copy_to_mapping") &&
	      strstr(t, "reads: gdrmap_copy_from_mapping"), "a table per way");
	CHECK(strstr(t, "     size   gdr_copy   cuMemcpy  gdrmap_copy  path "
			"        mapping    threads        dma     staged  "
			"    async   /fastest     /other  /gdr_copy\n"),
	      "the columns, in order:\n%s", t);
	line_of(t, "writes:", "8", l, sizeof(l));
	CHECK(strstr(l, "100 ns") && strstr(l, "105 ns") &&
	      strstr(l, "mapping") && strstr(l, "n/a") &&
	      strstr(l, "5000 ns") && strstr(l, "1.05x"),
	      "write row of 8: '%s'", l);
	line_of(t, "reads:", "4096", l, sizeof(l));
	CHECK(strstr(l, "threads") && strstr(l, "6000 ns") &&
	      strstr(l, "1.50x") && strstr(l, "0.56x") && strstr(l, "3.21x") &&
	      strstr(l, "2800 ns"),
	      "read row of 4K: 9000 / 6000 = 1.50x, 9000 / 16000 = 0.56x, "
	      "9000 / 2800 = 3.21x: '%s'", l);
	line_of(t, "writes:", "4096", l, sizeof(l));
	CHECK(strstr(l, "4000 ns") && strstr(l, "1.09x") && strstr(l, "1.31x"),
	      "write row of 4K: staged 4000, 1.09x, 1.31x: '%s'", l);
	line_of(t, "reads:", "1048576", l, sizeof(l));
	CHECK(strstr(l, "WRONG DATA: wrong data: made up"), "wrong row: '%s'", l);
	CHECK(strstr(t, "path gdrmap_copy_* took: write: mapping 8-1K, dma 4K;"
			" read: mapping 8, threads 1K-4K\n"), "runs:\n%s", t);
	CHECK(strstr(t, "  crossovers: write at 4K (mapping -> dma); read at "
			"1K (mapping -> threads)\n"), "crossovers:\n%s", t);
	CHECK(strstr(t, "fastest forced path: write: mapping 8-1K, dma 4K; "
			"read: mapping 8, threads 1K-4K\n"), "fastest:\n%s", t);
	CHECK(strstr(t, "within 1.1x of the fastest path's: write 3 of 3 sizes "
			"(worst 1.09x at 4K); read 2 of 3 sizes (worst 1.50x "
			"at 4K)"), "goal line:\n%s", t);
	CHECK(strstr(t, "within 1.1x of the fastest other way's: write 2 of 3 "
			"sizes (worst 1.31x at 4K, against cuMemcpyHtoDAsync); "
			"read 1 of 3 sizes (worst 3.21x at 4K, against "
			"cuMemcpyDtoHAsync)"), "other-way goal line:\n%s", t);
	CHECK(strstr(t, "small copies (<= 1K), gdrmap_copy_* p50 over "
			"gdr_copy_*'s: write worst 1.05x at 8; read worst "
			"1.05x at 8"), "small copies:\n%s", t);
	CHECK(strstr(t, "n/a, from the first size where a path could not "
			"serve, and why:\n  write threads from 8: threads only "
			"read\n"), "why n/a:\n%s", t);
	free(t);

	run.paths = false;
	t = report(&run, false);
	CHECK(!strstr(t, "mapping    threads") && !strstr(t, "/fastest") &&
	      !strstr(t, "fastest forced") && !strstr(t, "within 1.1x") &&
	      !strstr(t, "async"),
	      "without --paths no forced path:\n%s", t);
	CHECK(strstr(t, "gdrmap_copy  path") && strstr(t, "/gdr_copy"),
	      "without --paths gdrmap_copy_* still:\n%s", t);
	free(t);

	run.calls = false;
	t = report(&run, false);
	CHECK(strstr(t, "gdrmap_copy_*: not in this libgdrapi.so.2") &&
	      !strstr(t, "writes:"), "a library without them:\n%s", t);
	free(t);
}

/* jsonq FILE [PATH], its output's first line into buf; -1 if it failed. */
static int jq(const char *jsonq, const char *file, const char *path,
	      char *buf, size_t len)
{
	char cmd[1024];
	FILE *p;
	int rc;

	snprintf(cmd, sizeof(cmd), "'%s' '%s' %s%s%s", jsonq, file,
		 path ? "'" : "", path ? path : "", path ? "'" : "");
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (!fgets(buf, (int)len, p))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	rc = pclose(p);
	return rc ? -1 : 0;
}

static void test_json_report(void)
{
	static const struct { const char *path, *want; } t[] = {
		{ ".gdrmap_copy", "true" },
		{ ".paths", "true" },
		{ ".results#", "4" },
		{ ".results[0].gdr_copy_to_mapping.p50", "100" },
		{ ".results[0].gdrmap_copy_to_mapping.p50", "105" },
		{ ".results[0].write.path", "mapping" },
		{ ".results[0].write.paths.threads", "null" },
		{ ".results[0].write.paths.dma.p50", "5000" },
		{ ".results[0].write.fastest_path", "mapping" },
		{ ".results[0].write.over_fastest", "1.05" },
		{ ".results[0].write.over_gdr_copy", "1.05" },
		{ ".results[0].write.over_cuMemcpy", "0.0525" },
		{ ".results[0].write.paths.staged", "null" },
		{ ".results[0].write.fastest_other", "mapping" },
		{ ".results[0].cuMemcpyHtoDAsync.p50", "1800" },
		{ ".results[1].read.fastest_other", "cuMemcpyDtoHAsync" },
		{ ".results[2].write.paths.staged.p50", "4000" },
		{ ".results[2].write.fastest_other", "cuMemcpyHtoDAsync" },
		{ ".results[2].read.path", "threads" },
		{ ".results[2].read.over_fastest", "1.5" },
		{ ".results[2].write.path", "dma" },
		{ ".results[3].verified", "false" },
		{ ".results[3].error", "wrong data: made up" },
		{ ".crossovers.write#", "1" },
		{ ".crossovers.write[0].size", "4096" },
		{ ".crossovers.write[0].from", "mapping" },
		{ ".crossovers.write[0].to", "dma" },
		{ ".crossovers.read[0].size", "1024" },
		{ ".crossovers.read[0].to", "threads" },
		{ ".fastest_crossovers.read#", "1" },
		{ ".fastest_crossovers.read[0].size", "1024" },
		{ ".goal.ratio", "1.1" },
		{ ".goal.write.within", "3" },
		{ ".goal.read.within", "2" },
		{ ".goal.read.worst_ratio", "1.5" },
		{ ".goal.read.worst_size", "4096" },
		{ ".goal_other.ratio", "1.1" },
		{ ".goal_other.write.within", "2" },
		{ ".goal_other.write.against", "cuMemcpyHtoDAsync" },
		{ ".goal_other.read.within", "1" },
		{ ".goal_other.read.worst_size", "4096" },
		{ ".goal_other.read.against", "cuMemcpyDtoHAsync" },
		{ ".small_copies.max_size", "1024" },
		{ ".small_copies.write.worst_size", "8" },
		{ ".not_available#", "1" },
		{ ".not_available[0].direction", "write" },
		{ ".not_available[0].path", "threads" },
		{ ".not_available[0].from_size", "8" },
		{ ".not_available[0].why", "threads only read" },
	};
	struct copylat_run run = { rows, 4, true, true, notes };
	const char *jsonq = getenv("JSONQ");
	char file[] = "/tmp/copylat-report-XXXXXX", got[256];
	char *text;
	size_t i;
	FILE *f;
	int fd;

	if (!jsonq || access(jsonq, X_OK)) {
		SKIP("no $JSONQ to read the JSON back with");
		return;
	}
	text = report(&run, true);
	fd = mkstemp(file);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		CHECK(0, "cannot write %s", file);
		free(text);
		return;
	}
	fputs(text, f);
	fclose(f);
	CHECK(!jq(jsonq, file, NULL, got, sizeof(got)), "valid JSON:\n%s", text);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int rc = jq(jsonq, file, t[i].path, got, sizeof(got));

		CHECK(!rc && !strcmp(got, t[i].want), "%s = '%s', want '%s'",
		      t[i].path, rc ? "(missing)" : got, t[i].want);
	}
	unlink(file);
	free(text);

	/* Without --paths: no forced figures, but null where the text has
	 * nothing to say. */
	run.paths = false;
	text = report(&run, true);
	CHECK(strstr(text, "\"paths\": false") &&
	      strstr(text, "\"goal\": null") &&
	      strstr(text, "\"goal_other\": null") &&
	      !strstr(text, "Async") &&
	      strstr(text, "\"fastest_crossovers\": null") &&
	      !strstr(text, "\"over_fastest\""), "without --paths:\n%s", text);
	free(text);
}

int main(void)
{
	test_pathsum();
	make_rows();
	test_text();
	test_json_report();
	return test_done();
}
