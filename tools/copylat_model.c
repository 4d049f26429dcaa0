// SPDX-License-Identifier: MIT
/*
 * copylat's data model (copylat.h): the methods it times, and what a
 * row of results says (the fastest path, the ratios, the path per size),
 * which the text (copylat_text.c) and the JSON (copylat_json.c) report.
 */
#include <math.h>

#include "copylat.h"
#include "pathsum.h"
#include "paths.h"

const struct method_def methods[NMETHODS] = {
	[TO_MAP] = { "gdr_copy_to_mapping", true, -1 },
	[HTOD] = { "cuMemcpyHtoD", true, -1 },
	[FROM_MAP] = { "gdr_copy_from_mapping", false, -1 },
	[DTOH] = { "cuMemcpyDtoH", false, -1 },
	[TO_AUTO] = { "gdrmap_copy_to_mapping", true, GDRMAP_COPY_PATH_AUTO },
	[FROM_AUTO] = { "gdrmap_copy_from_mapping", false,
			GDRMAP_COPY_PATH_AUTO },
	[TO_VIA_MAP] = { "mapping", true, GDRMAP_COPY_PATH_MAPPING },
	[TO_VIA_THREADS] = { "threads", true, GDRMAP_COPY_PATH_THREADS },
	[TO_VIA_DMA] = { "dma", true, GDRMAP_COPY_PATH_DMA },
	[TO_VIA_STAGED] = { "staged", true, GDRMAP_COPY_PATH_STAGED },
	[FROM_VIA_MAP] = { "mapping", false, GDRMAP_COPY_PATH_MAPPING },
	[FROM_VIA_THREADS] = { "threads", false, GDRMAP_COPY_PATH_THREADS },
	[FROM_VIA_DMA] = { "dma", false, GDRMAP_COPY_PATH_DMA },
	[FROM_VIA_STAGED] = { "staged", false, GDRMAP_COPY_PATH_STAGED },
	[HTOD_ASYNC] = { "cuMemcpyHtoDAsync", true, -1 },
	[DTOH_ASYNC] = { "cuMemcpyDtoHAsync", false, -1 },
};

const char *const dir_names[2] = { "write", "read" };

bool row_has(const struct row *r, int m)
{
	return r->verified && (r->measured & (1u << m));
}

int row_fastest(const struct row *r, int d)
{
	int p, best = -1;

	for (p = GDRMAP_COPY_PATH_MAPPING; p <= GDRMAP_COPY_PATH_STAGED; p++)
		if (row_has(r, M_VIA(d, p)) &&
		    (best < 0 || r->st[M_VIA(d, p)].p50 <
				 r->st[M_VIA(d, best)].p50))
			best = p;
	return best;
}

double row_over_fastest(const struct row *r, int d)
{
	int p = row_fastest(r, d);

	if (p < 0 || !row_has(r, M_AUTO(d)))
		return NAN;
	return r->st[M_AUTO(d)].p50 / r->st[M_VIA(d, p)].p50;
}

int row_fastest_other(const struct row *r, int d)
{
	const int others[] = { M_GDR(d), M_CUDA(d), M_ASYNC(d) };
	int i, p = row_fastest(r, d), best = p < 0 ? -1 : M_VIA(d, p);

	for (i = 0; i < 3; i++)
		if (row_has(r, others[i]) &&
		    (best < 0 || r->st[others[i]].p50 < r->st[best].p50))
			best = others[i];
	return best;
}

const char *method_name(int m)
{
	return m < 0 || m >= NMETHODS ? "-" : methods[m].key;
}

/* gdrmap_copy_*'s p50 over method m's. */
static double over(const struct row *r, int d, int m)
{
	if (m < 0 || !row_has(r, M_AUTO(d)) || !row_has(r, m))
		return NAN;
	return r->st[M_AUTO(d)].p50 / r->st[m].p50;
}

double row_over_other(const struct row *r, int d)
{
	return over(r, d, row_fastest_other(r, d));
}

double row_over_gdr(const struct row *r, int d)
{
	return over(r, d, M_GDR(d));
}

double row_over_cuda(const struct row *r, int d)
{
	return over(r, d, M_CUDA(d));
}

void series_of(const struct copylat_run *run, int d, bool fastest,
	       struct series *s)
{
	int r;

	s->n = 0;
	for (r = 0; r < run->nrows && s->n < 64; r++) {
		const struct row *w = &run->rows[r];

		if (!w->verified)
			continue;
		s->size[s->n] = w->size;
		s->path[s->n++] = fastest ? row_fastest(w, d) : w->chosen[d];
	}
}

void sum_ratios(const struct copylat_run *run, int d, enum versus vs,
		struct ratio_sum *rs)
{
	int r;

	ratio_init(rs);
	for (r = 0; r < run->nrows; r++) {
		const struct row *w = &run->rows[r];

		if (vs == VS_SMALL && w->size <= SMALL_COPY)
			ratio_add(rs, w->size, row_over_gdr(w, d), 1.0);
		else if (vs != VS_SMALL)
			ratio_add(rs, w->size, vs == VS_OTHER ?
				  row_over_other(w, d) : row_over_fastest(w, d),
				  GOAL_RATIO);
	}
}
