// SPDX-License-Identifier: MIT
/*
 * copylat's text report (copylat.h, read from copylat_model.c's model):
 * the latency table of gdr_copy_* and cuMemcpy as it always was, then
 * per direction gdrmap_copy_* beside them with the path it took and,
 * with --paths, every path forced and how far gdrmap_copy_* is from the
 * fastest; then the crossovers.
 */
#include <math.h>
#include <stdio.h>

#include "copylat.h"
#include "pathsum.h"
#include "paths.h"

/* A p50 cell: the figure, "n/a" where the path cannot serve, else "-". */
static const char *cell(const struct row *r, int m, char *buf, size_t len)
{
	if (r->na & (1u << m))
		return "n/a";
	if (!row_has(r, m))
		return "-";
	return fmt_ns(r->st[m].p50, buf, len);
}

/* A row's size, and false after saying why when its data was wrong. */
static bool row_begin(FILE *f, const struct row *w)
{
	fprintf(f, "%9zu", w->size);
	if (!w->verified)
		fprintf(f, "  WRONG DATA: %s\n", w->why);
	return w->verified;
}

static const char *ratio_text(double x, char *buf, size_t len)
{
	if (isnan(x))
		return "-";
	snprintf(buf, len, "%.2fx", x);
	return buf;
}

static void print_basic(FILE *f, const struct copylat_run *run)
{
	static const char *const heads[4] = {
		"to mapping", "cuMemcpyHtoD", "from mapping", "cuMemcpyDtoH",
	};
	char a[32], b[32], d[32], c[40];
	int r, m;

	fprintf(f, "\nlatency of one call, p0 / p50 / p99\n%9s", "size");
	for (m = 0; m < 4; m++)
		fprintf(f, "  %-30s", heads[m]);
	fprintf(f, "\n");
	for (r = 0; r < run->nrows; r++) {
		const struct row *w = &run->rows[r];

		if (!row_begin(f, w))
			continue;
		for (m = 0; m < 4; m++) {
			snprintf(c, sizeof(c), "%s / %s / %s",
				 fmt_ns(w->st[m].p0, a, sizeof(a)),
				 fmt_ns(w->st[m].p50, b, sizeof(b)),
				 fmt_ns(w->st[m].p99, d, sizeof(d)));
			fprintf(f, "  %-30s", c);
		}
		fprintf(f, "\n");
	}
}

/* One direction: gdrmap_copy_* beside gdr_copy_* and cuMemcpy, p50. */
static void print_dir(FILE *f, const struct copylat_run *run, int d)
{
	char b[8][32];
	int r, p;

	fprintf(f, "\n%s: %s, p50 of one call; path: the one it takes now\n",
		d ? "reads" : "writes", methods[M_AUTO(d)].key);
	if (run->paths)
		fprintf(f, "async: %s on a private non-blocking stream + cuStreamSynchronize; /fastest: over the fastest path's p50; /other: over the fastest other way's (a path, gdr_copy, cuMemcpy or async)\n",
			methods[M_ASYNC(d)].key);
	fprintf(f, "%9s  %9s  %9s  %11s  %-9s", "size", "gdr_copy",
		"cuMemcpy", "gdrmap_copy", "path");
	if (run->paths)
		fprintf(f, "  %9s  %9s  %9s  %9s  %9s  %9s  %9s", "mapping",
			"threads", "dma", "staged", "async", "/fastest",
			"/other");
	fprintf(f, "  %9s\n", "/gdr_copy");
	for (r = 0; r < run->nrows; r++) {
		const struct row *w = &run->rows[r];

		if (!row_begin(f, w))
			continue;
		fprintf(f, "  %9s  %9s  %11s  %-9s",
			cell(w, M_GDR(d), b[0], sizeof(b[0])),
			cell(w, M_CUDA(d), b[1], sizeof(b[1])),
			cell(w, M_AUTO(d), b[2], sizeof(b[2])),
			path_chosen_name(w->chosen[d]));
		if (run->paths) {
			for (p = GDRMAP_COPY_PATH_MAPPING;
			     p <= GDRMAP_COPY_PATH_STAGED; p++)
				fprintf(f, "  %9s", cell(w, M_VIA(d, p), b[p + 2],
							  sizeof(b[0])));
			fprintf(f, "  %9s  %9s", cell(w, M_ASYNC(d), b[7],
						      sizeof(b[7])),
				ratio_text(row_over_fastest(w, d), b[0],
					   sizeof(b[0])));
			fprintf(f, "  %9s", ratio_text(row_over_other(w, d),
						       b[2], sizeof(b[2])));
		}
		fprintf(f, "  %9s\n",
			ratio_text(row_over_gdr(w, d), b[1], sizeof(b[1])));
	}
}

static void print_crossovers(FILE *f, const struct series *s)
{
	struct crossover x[64];
	char a[24];
	int k, i;

	k = path_crossovers(s->size, s->path, s->n, x, 64);
	if (!k)
		fprintf(f, "none");
	for (i = 0; i < k; i++)
		fprintf(f, "%s%s (%s -> %s)", i ? ", " : "",
			fmt_size(x[i].size, a, sizeof(a)), path_name(x[i].from),
			path_name(x[i].to));
}

/* The fastest other way at the row of size n, for the summary. */
static const char *other_at(const struct copylat_run *run, int d, size_t n)
{
	int r;

	for (r = 0; r < run->nrows; r++)
		if (run->rows[r].size == n)
			return method_name(row_fastest_other(&run->rows[r], d));
	return "-";
}

static void print_summary(FILE *f, const struct copylat_run *run)
{
	struct series s;
	struct ratio_sum rs;
	char buf[512], a[24];
	int d, fastest, vs;

	for (fastest = 0; fastest <= (run->paths ? 1 : 0); fastest++) {
		fprintf(f, "\n%s", fastest ? "fastest forced path:" :
					     "path gdrmap_copy_* took:");
		for (d = 0; d < 2; d++) {
			series_of(run, d, fastest, &s);
			path_runs(buf, sizeof(buf), s.size, s.path, s.n);
			fprintf(f, "%s %s: %s", d ? ";" : "", dir_names[d], buf);
		}
		fprintf(f, "\n  crossovers:");
		for (d = 0; d < 2; d++) {
			series_of(run, d, fastest, &s);
			fprintf(f, "%s %s at ", d ? ";" : "", dir_names[d]);
			print_crossovers(f, &s);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
	for (vs = VS_FASTEST; run->paths && vs <= VS_OTHER; vs++) {
		fprintf(f, "gdrmap_copy_* p50 within %.1fx of the fastest %s:",
			GOAL_RATIO, vs == VS_OTHER ? "other way's" : "path's");
		for (d = 0; d < 2; d++) {
			sum_ratios(run, d, vs, &rs);
			fprintf(f, "%s %s %d of %d sizes", d ? ";" : "",
				dir_names[d], rs.within, rs.sizes);
			if (rs.sizes)
				fprintf(f, " (worst %.2fx at %s%s%s)", rs.worst,
					fmt_size(rs.worst_size, a, sizeof(a)),
					vs == VS_OTHER ? ", against " : "",
					vs == VS_OTHER ? other_at(run, d,
						rs.worst_size) : "");
		}
		fprintf(f, "\n");
	}
	fprintf(f, "small copies (<= %s), gdrmap_copy_* p50 over gdr_copy_*'s:",
		fmt_size(SMALL_COPY, a, sizeof(a)));
	for (d = 0; d < 2; d++) {
		sum_ratios(run, d, VS_SMALL, &rs);
		fprintf(f, "%s %s ", d ? ";" : "", dir_names[d]);
		if (rs.sizes)
			fprintf(f, "worst %.2fx at %s", rs.worst,
				fmt_size(rs.worst_size, a, sizeof(a)));
		else
			fprintf(f, "-");
	}
	fprintf(f, "\n");
}

/* Why each n/a: the library's reason, from the first size it gave it. */
static void print_na(FILE *f, const struct copylat_run *run)
{
	char a[24];
	int m, first = 1;

	for (m = TO_VIA_MAP; run->na && m < NMETHODS; m++) {
		if (!run->na[m].why[0])
			continue;
		if (first)
			fprintf(f, "n/a, from the first size where a path could not serve, and why:\n");
		first = 0;
		fprintf(f, "  %s %s from %s: %s\n",
			dir_names[!methods[m].write], methods[m].key,
			fmt_size(run->na[m].size, a, sizeof(a)), run->na[m].why);
	}
}

void copylat_text(FILE *f, const struct copylat_run *run)
{
	print_basic(f, run);
	if (!run->calls) {
		fprintf(f, "\ngdrmap_copy_*: not in this libgdrapi.so.2 (not gdrmap's?), not timed\n");
		return;
	}
	print_dir(f, run, 0);
	print_dir(f, run, 1);
	print_summary(f, run);
	print_na(f, run);
}
