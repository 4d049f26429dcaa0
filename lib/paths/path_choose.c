// SPDX-License-Identifier: MIT
/*
 * Choosing a path for a size class (path_choose.h): the measuring copies'
 * times, kept per path, and the choice made from them.
 *
 * A path's time is the first quartile of its five copies; two paths close
 * after GDR_TRIALS copies are measured on to GDR_TRIALS_MAX and judged by
 * their medians; a path far slower than the best is dropped; and a class
 * won by far by the mapping (or by DMA) decides every smaller (larger)
 * size too, so that those take no clock read at all.  Larger sizes may
 * have paths a class had not (threads from GDR_THREADS_MIN, the staged
 * path from GDR_STAGE_MIN): then DMA's win decides none of them.
 * lib/paths/path_auto.c says why.
 */
#include <stdio.h>

#include "base/internal.h"
#include "base/log.h"
#include "path_choose.h"

const char *const gdr_copy_path_names[GDR_NPATH] = {
	"auto", "mapping", "threads", "dma", "staged"
};

const char *const gdr_host_kind_names[GDR_HOST_KINDS] = {
	"any", "pageable", "pinned"
};

/* "copies of 4096-8191 bytes to device 0 (... mapping, ... host
 * memory)": class ci of t, as the log names it; in buf. */
static const char *class_name(const struct gdr_tune *t, int ci, char *buf,
			      size_t len)
{
	snprintf(buf, len,
		 "copies of %zu-%zu bytes %s device %d (%s mapping, %s host memory)",
		 (size_t)1 << ci, ((size_t)2 << ci) - 1,
		 t->to_gpu ? "to" : "from", t->dev,
		 gdr_mapping_type_name(t->type), gdr_host_kind_names[t->kind]);
	return buf;
}

/*
 * A path's time: the first quartile of its copies (the 2nd fastest of
 * 5).  Whatever disturbs a copy (the application's own work between
 * them, another tenant) only makes it slower, so a low order statistic
 * sees the path, a median sees the disturbance once three copies of five
 * had some; the fastest alone would reward luck.  Sorts v.
 */
static uint64_t quartile(uint64_t *v, int n)
{
	int i, k;

	for (i = 1; i < n; i++)
		for (k = i; k > 0 && v[k - 1] > v[k]; k--) {
			uint64_t x = v[k];

			v[k] = v[k - 1];
			v[k - 1] = x;
		}
	return v[n / 4];
}

/*
 * Five copies cannot tell apart two paths within a few tens of percent:
 * when the runner-up's quartile is within GDR_CLOSE of the best's, drop the
 * others and measure both on to GDR_TRIALS_MAX copies.  So too when the
 * best's median is slower than the runner-up's quartile: the best won on
 * its fast copies alone, as a copy engine whose copies come at two speeds
 * does (an H100's 1 MiB writes: 28 or 51 µs, about half each).  1 if it
 * did.
 */
static int close_contest(struct gdr_tune_class *c, const uint64_t *est,
			 const uint64_t *mid, int best, int possible)
{
	int p, second = 0;

	if (c->want)
		return 0;
	for (p = 1; p < GDR_NPATH; p++)
		if (p != best && (possible & (1 << p)) &&
		    !(c->dropped & (1 << p)) &&
		    (!second || est[p] < est[second]))
			second = p;
	if (!second || (est[second] * 100 > est[best] * GDR_CLOSE &&
			mid[best] <= est[second]))
		return 0;
	c->want = GDR_TRIALS_MAX;
	for (p = 1; p < GDR_NPATH; p++)
		if (p != best && p != second)
			c->dropped |= 1 << p;
	return 1;
}

static int wanted(const struct gdr_tune_class *c)
{
	return c->want ? c->want : GDR_TRIALS;
}

/* Every path still running has its timed copies: choose; t->lock held. */
static void decide(struct gdr_tune *t, int ci, int possible)
{
	struct gdr_tune_class *c = &t->c[ci];
	uint64_t est[GDR_NPATH], mid[GDR_NPATH], best_other;
	int p, best = 0, rival = 0, n = wanted(c);
	char name[160], other[48];

	for (p = 1; p < GDR_NPATH; p++) {
		if (!(possible & (1 << p)) || (c->dropped & (1 << p)))
			continue;
		est[p] = quartile(c->ns[p], n);
		mid[p] = c->ns[p][n / 2];
		/* Fifteen copies each: the median bears seven disturbed
		 * ones, and it is the copy the caller typically gets. */
		if (c->want)
			est[p] = mid[p];
		if (!best || est[p] < est[best])
			best = p;
	}
	if (!best)
		best = GDRMAP_COPY_PATH_MAPPING;
	if (close_contest(c, est, mid, best, possible))
		return;
	/* The best time any other path made, dropped ones too. */
	best_other = UINT64_MAX;
	for (p = 1; p < GDR_NPATH; p++) {
		int k, runs = c->runs[p] - 1;

		if (p == best || runs < 1)
			continue;
		for (k = 0; k < runs && k < GDR_TRIALS_MAX; k++)
			if (c->ns[p][k] < best_other)
				best_other = c->ns[p][k];
	}
	if (best_other != UINT64_MAX &&
	    est[best] * GDR_MARGIN <= best_other) {
		size_t lo = (size_t)1 << ci, hi = lo << 1;

		if (best == GDRMAP_COPY_PATH_MAPPING &&
		    hi > atomic_load(&t->map_below))
			atomic_store(&t->map_below, hi);
		if (best == GDRMAP_COPY_PATH_DMA && !c->larger &&
		    lo < atomic_load(&t->dma_from))
			atomic_store(&t->dma_from, lo);
	} else {
		/* Not won by far: the runner-up is watched for. */
		for (p = 1; p < GDR_NPATH; p++)
			if (p != best && (possible & (1 << p)) &&
			    !(c->dropped & (1 << p)) &&
			    (!rival || est[p] < est[rival]))
				rival = p;
		c->rival_ns = rival ? est[rival] : 0;
		c->seen = 0;
		c->rseen = 0;
		c->rfaster = 0;
		atomic_store_explicit(&c->rival_every, GDR_RIVAL_FIRST,
				      memory_order_relaxed);
		/* A close contest is confirmed soon, beside the rival: its
		 * first copies can catch a path slow (on an H200, the
		 * staged path's 8 MiB pageable writes at 1.4x what they
		 * took in the table after, which threads then won).  Not
		 * at once: the copies just after a choice are slow by
		 * whichever path (on an H200, 4 MiB pageable writes by the
		 * staged path had a median of 164-209 us over the first
		 * four, 137-154 over the next), so they are the choice's
		 * alone, each timed, and the first look's median and first
		 * quartile, over these and the next, see past them. */
		atomic_store_explicit(&c->confirming,
				      c->want && rival ? 0 : GDR_CONFIRM_END,
				      memory_order_relaxed);
	}
	atomic_store_explicit(&c->rival, (uint8_t)rival, memory_order_relaxed);
	/* The runner-up's time too: a choice that a table later finds
	 * wrong shows what the measuring saw. */
	if (rival)
		snprintf(other, sizeof(other), "; runner-up %s, %llu ns",
			 gdr_copy_path_names[rival],
			 (unsigned long long)est[rival]);
	else
		other[0] = '\0';
	gdr_info("%s: %s, %llu ns (%s%s)",
		 class_name(t, ci, name, sizeof(name)),
		 gdr_copy_path_names[best], (unsigned long long)est[best],
		 c->want ? "median of 15" : "first quartile of 5", other);
	atomic_store_explicit(&c->path, best, memory_order_release);
}

/* The path for the next measuring copy of class ci, or 0 if decided. */
int gdr_choose_next(struct gdr_tune *t, int ci, int possible)
{
	struct gdr_tune_class *c = &t->c[ci];
	int p, pick = 0;

	if (atomic_load_explicit(&c->path, memory_order_relaxed))
		return 0;
	for (p = 1; p < GDR_NPATH; p++) {
		if (!(possible & (1 << p)) || (c->dropped & (1 << p)) ||
		    c->runs[p] > wanted(c))
			continue;
		if (!pick || c->runs[p] < c->runs[pick])
			pick = p;
	}
	if (!pick) {
		decide(t, ci, possible);
		/* A close contest goes on. */
		if (!atomic_load_explicit(&c->path, memory_order_relaxed))
			return gdr_choose_next(t, ci, possible);
	}
	return pick;
}

/* The fastest timed copy path q made in class c; UINT64_MAX if none. */
static uint64_t fastest(const struct gdr_tune_class *c, int q)
{
	uint64_t best = UINT64_MAX;
	int k;

	for (k = 0; k < c->runs[q] - 1 && k < GDR_TRIALS_MAX; k++)
		if (c->ns[q][k] < best)
			best = c->ns[q][k];
	return best;
}

/* Record a measuring copy; t->lock held. */
void gdr_choose_record(struct gdr_tune *t, int ci, int p, uint64_t ns,
		       int possible)
{
	struct gdr_tune_class *c = &t->c[ci];
	uint64_t best = UINT64_MAX, f;
	int q;

	if (atomic_load_explicit(&c->path, memory_order_relaxed) ||
	    c->runs[p] > wanted(c))
		return;
	if (c->runs[p] > 0)
		c->ns[p][c->runs[p] - 1] = ns;
	c->runs[p]++;
	/* Drop every path whose best copy is far slower than the best. */
	for (q = 1; q < GDR_NPATH; q++)
		if ((f = fastest(c, q)) < best)
			best = f;
	for (q = 1; q < GDR_NPATH; q++)
		if (c->runs[q] > 2 && (f = fastest(c, q)) > best * GDR_SLOWER)
			c->dropped |= 1 << q;
	gdr_choose_next(t, ci, possible);
}

/*
 * A choice is made from a few copies in a few milliseconds; what the
 * paths cost can change after it (the copy engine shared with other work,
 * the helpers' CPUs busy, a GPU clocking down).  Watched copies of the
 * choice whose first quartile has grown past its rival's time at the
 * choice, by GDR_CLOSE, measure the class again: the choice and its rival
 * afresh, while the paths that lost by far stay out.  A class measured
 * again thus costs its caller copies about as slow as its own, not those
 * of a path that lost by far: on an H200, 16 MiB pageable writes from
 * Python whose class was measured again with every path had a median of
 * 1.30 ms, threads (the choice) alone 0.56, the staged path (its rival)
 * 0.60, the mapping 1.45 and DMA 2.05.
 * Each time it happens the next look waits twice as many copies, so that
 * two paths that trade places on noise cost a few measuring rounds, not
 * one per window.
 */
void gdr_choose_watch(struct gdr_tune *t, int ci, int p, uint64_t ns)
{
	struct gdr_tune_class *c = &t->c[ci];
	int rival = atomic_load_explicit(&c->rival, memory_order_relaxed);
	uint64_t w[GDR_WATCH], now;
	char name[160];
	int k;

	/* Only a choice the class's own copies take: not one that a
	 * neighbour won by far (map_below, dma_from), which serves them.
	 * auto_copy looked without the lock; what holds now is here. */
	if (!rival ||
	    atomic_load_explicit(&c->path, memory_order_relaxed) != p ||
	    (size_t)2 << ci <= atomic_load(&t->map_below) ||
	    (size_t)1 << ci >= atomic_load(&t->dma_from))
		return;
	c->watch[c->seen++ % GDR_KEPT] = ns;
	/* Not while a close choice is confirmed: its first copies are
	 * slow by whichever path (decide), and the rival is timed beside
	 * them, a better word than its time at the choice. */
	if (c->seen % GDR_WATCH ||
	    c->seen < (uint32_t)GDR_WATCH << c->reopened ||
	    atomic_load_explicit(&c->confirming, memory_order_relaxed) <
	    GDR_CONFIRM_END)
		return;
	for (k = 0; k < GDR_WATCH; k++)
		w[k] = c->watch[(c->seen - GDR_WATCH + k) % GDR_KEPT];
	now = quartile(w, GDR_WATCH);
	if (now * 100 <= c->rival_ns * GDR_CLOSE)
		return;
	gdr_info("%s: %s now takes %llu ns, %s took %llu when it was chosen: measuring again",
		 class_name(t, ci, name, sizeof(name)),
		 gdr_copy_path_names[p], (unsigned long long)now,
		 gdr_copy_path_names[rival],
		 (unsigned long long)c->rival_ns);
	for (k = 0; k < GDR_NPATH; k++)
		c->runs[k] = 0;
	c->dropped = (uint8_t)~((1u << p) | (1u << rival));
	c->want = 0;
	atomic_store_explicit(&c->rival, 0, memory_order_relaxed);
	c->seen = 0;
	if (c->reopened < GDR_REOPEN_MAX)
		c->reopened++;
	atomic_store_explicit(&c->path, 0, memory_order_release);
}

/* The median of n times (the upper one); sorts v. */
static uint64_t median(uint64_t *v, int n)
{
	quartile(v, n);
	return v[n / 2];
}

/* The median of the last copies of c's choice that the watch timed (at
 * most GDR_KEPT), and in *fast their first quartile; 0 while fewer than
 * GDR_RIVAL. */
static uint64_t choice_now(const struct gdr_tune_class *c, uint64_t *fast)
{
	uint64_t w[GDR_KEPT];
	int k, n = c->seen < GDR_KEPT ? (int)c->seen : GDR_KEPT;

	if (n < GDR_RIVAL)
		return 0;
	for (k = 0; k < n; k++)
		w[k] = c->watch[k];
	*fast = quartile(w, n);
	return w[n / 2];
}

/*
 * The watch above sees the choice grow slower than the rival was; it
 * cannot see a rival that was measured slower than it is, in a few
 * copies disturbed by something else (on an H200, 32 KiB pageable writes
 * went to threads at 2.2 us because the mapping's copies at the choice
 * had a median over 2.1 us; beside them in a table it took 1.58).  So
 * the rival is timed too, among the watched copies and in their place,
 * most often just after the choice and ever more rarely while the choice
 * holds; those copies cost their caller at most what the rival costs
 * now, and a rival found to have lost by far is timed no more.  Timed
 * beside the choice's own copies, through the same caller's work, a
 * rival faster by GDR_SWITCH is a better word than the choice's few
 * copies at the start: it takes the choice's place.  Medians, as in a
 * close contest, and two guards against a few copies of a path whose
 * copies come at two speeds:
 * - the rival's median must be faster than the choice's fast copies
 *   (the first quartile of its last GDR_KEPT): a copy engine fast six
 *   copies in ten has a slow median of eight copies in a row from half
 *   the places in its pattern (test_copy_auto_two_speeds);
 * - two looks in a row must find the rival faster, each of fresh
 *   copies; the first one makes the next come sooner
 *   (test_copy_auto_confirm).
 * A close contest's choice has its first two looks soon (decide).
 */
void gdr_choose_watch_rival(struct gdr_tune *t, int ci, int p, int q,
			    uint64_t ns)
{
	struct gdr_tune_class *c = &t->c[ci];
	uint64_t r[GDR_RIVAL], now, fast, theirs;
	int k, every = atomic_load_explicit(&c->rival_every,
					    memory_order_relaxed);
	char name[160];

	if (atomic_load_explicit(&c->path, memory_order_relaxed) != p ||
	    atomic_load_explicit(&c->rival, memory_order_relaxed) != q)
		return;
	c->rwatch[c->rseen++ % GDR_RIVAL] = ns;
	if (c->rseen % GDR_RIVAL || !(now = choice_now(c, &fast)))
		return;
	for (k = 0; k < GDR_RIVAL; k++)
		r[k] = c->rwatch[k];
	theirs = median(r, GDR_RIVAL);
	/* Each look, so that a choice a table finds wrong shows what its
	 * looks saw. */
	if (gdr_log_enabled(GDR_LOG_DEBUG))
		gdr_dbg("%s: look: %s median %llu, first quartile %llu; %s median %llu",
			class_name(t, ci, name, sizeof(name)),
			gdr_copy_path_names[p], (unsigned long long)now,
			(unsigned long long)fast, gdr_copy_path_names[q],
			(unsigned long long)theirs);
	/* Lost by far now: its copies would cost the caller too much to
	 * go on timing (the choice's own watch still looks). */
	if (theirs >= now * GDR_MARGIN) {
		atomic_store_explicit(&c->rival_every, 0,
				      memory_order_relaxed);
		return;
	}
	/* A look that confirms the choice: the next comes later. */
	if (theirs * GDR_SWITCH >= now * 100 || theirs >= fast) {
		c->rfaster = 0;
		if (every < GDR_RIVAL_LAST)
			atomic_store_explicit(&c->rival_every,
					      (uint8_t)(every * 2),
					      memory_order_relaxed);
		return;
	}
	/* Found faster: looked at again soon, and it takes over when
	 * that look agrees. */
	if (++c->rfaster < 2) {
		atomic_store_explicit(&c->rival_every, GDR_RIVAL_FIRST,
				      memory_order_relaxed);
		return;
	}
	gdr_info("%s: %s takes %llu ns (first quartile %llu), %s beside it %llu at two looks: %s serves them",
		 class_name(t, ci, name, sizeof(name)),
		 gdr_copy_path_names[p], (unsigned long long)now,
		 (unsigned long long)fast, gdr_copy_path_names[q],
		 (unsigned long long)theirs, gdr_copy_path_names[q]);
	c->rival_ns = now;
	c->seen = 0;
	c->rseen = 0;
	c->rfaster = 0;
	atomic_store_explicit(&c->rival, (uint8_t)p, memory_order_relaxed);
	atomic_store_explicit(&c->path, q, memory_order_release);
}
