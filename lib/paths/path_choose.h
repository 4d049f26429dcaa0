/* SPDX-License-Identifier: MIT */
/*
 * How gdrmap_copy_* choose a path for a size class (path_choose.c): the
 * measurements kept per GPU, mapping type, direction and host buffer kind, and the two
 * calls the copies make while a class is being measured.
 */
#ifndef GDRMAP_COPY_CHOOSE_H
#define GDRMAP_COPY_CHOOSE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrapi.h"
#include "base/internal.h"

#define GDR_NCLASS	48
#define GDR_TRIALS	5
/* Two paths this close after GDR_TRIALS (ratio of quartiles, in percent) are
 * measured on to GDR_TRIALS_MAX copies each before one is chosen. */
#define GDR_CLOSE	125
#define GDR_TRIALS_MAX 15
#define GDR_SLOWER	4
#define GDR_MARGIN	2
#define GDR_NPATH	5	/* indexed by GDRMAP_COPY_PATH_*; 0 unused */
/* A decided class with a rival is watched: one copy of it in
 * GDR_WATCH_EVERY, at random, is timed, and each GDR_WATCH copies timed
 * are compared with the rival (gdr_choose_watch). */
#define GDR_WATCH_EVERY	8
#define GDR_WATCH	8
#define GDR_REOPEN_MAX	6
/* Of a watched class's timed copies, one in rival_every goes by the
 * rival instead (from GDR_RIVAL_FIRST, doubling at each look that
 * confirms the choice, to GDR_RIVAL_LAST); each GDR_RIVAL copies so timed
 * are compared with the choice's last GDR_KEPT, and a rival found faster
 * by GDR_SWITCH (percent) at two looks in a row, its copies faster than
 * the choice's fast ones, takes its place (gdr_choose_watch_rival). */
#define GDR_RIVAL	4
#define GDR_RIVAL_FIRST	8
#define GDR_RIVAL_LAST	64
#define GDR_SWITCH	110
#define GDR_KEPT	16
/* A close contest's choice is confirmed soon: its next GDR_CONFIRM_AFTER
 * copies are each timed, by the choice, and the GDR_CONFIRM after them by
 * the choice and its rival in turn, which make the first two looks. */
#define GDR_CONFIRM_AFTER	8
#define GDR_CONFIRM		(4 * GDR_RIVAL)
#define GDR_CONFIRM_END		(GDR_CONFIRM_AFTER + GDR_CONFIRM)

struct gdr_tune_class {
	_Atomic int path;		/* the choice; 0 while measuring */
	uint8_t runs[GDR_NPATH];	/* copies made, the untimed first too */
	uint8_t dropped;		/* paths out of the running (bits) */
	uint8_t want;			/* timed copies wanted; 0: GDR_TRIALS */
	/* The runner-up at the choice; 0: none.  Read without the lock:
	 * a copy of a class without one is not worth timing. */
	_Atomic uint8_t rival;
	uint8_t reopened;		/* times measured again */
	/* Paths that serve larger copies but not this class's (bits): a
	 * DMA won by far then decides no larger size. */
	uint8_t larger;
	/* Timed copies per copy by the rival; read without the lock. */
	_Atomic uint8_t rival_every;
	uint8_t rseen;			/* the rival's timed copies */
	uint8_t rfaster;		/* looks in a row it was faster */
	/* Confirming copies handed out (GDR_CONFIRM_END: none left); read
	 * without the lock. */
	_Atomic uint32_t confirming;
	uint32_t seen;			/* copies of the choice timed since */
	uint64_t rival_ns;		/* the rival's time at the choice */
	uint64_t ns[GDR_NPATH][GDR_TRIALS_MAX];
	uint64_t watch[GDR_KEPT];	/* the choice's last timed copies */
	uint64_t rwatch[GDR_RIVAL];	/* the rival's, beside the choice */
};

struct gdr_tune {
	struct gdr_tune *next;
	int dev;			/* CUDA ordinal; -1: no DMA */
	gdr_mapping_type_t type;
	int to_gpu;
	int kind;			/* the host buffer's, GDR_HOST_KINDS */
	int forced;			/* GDRMAP_COPY_PATH; 0: measure */
	_Atomic size_t map_below;	/* smaller: the mapping, untimed */
	_Atomic size_t dma_from;	/* this or larger: DMA, untimed */
	pthread_mutex_t lock;
	struct gdr_tune_class c[GDR_NCLASS];
};

/* The names GDRMAP_COPY_PATH takes, by GDRMAP_COPY_PATH_* value. */
extern const char *const gdr_copy_path_names[GDR_NPATH];

/* The kinds of host buffer a tune is for (its kind field). */
#define GDR_HOST_ANY		0	/* where the kind makes no difference */
#define GDR_HOST_PAGEABLE	1
#define GDR_HOST_PINNED		2	/* cuMemHostAlloc, cuMemHostRegister */
extern const char *const gdr_host_kind_names[GDR_HOST_KINDS];

/*
 * The path for the next measuring copy of class ci (possible: the paths
 * that can serve it, as bits), or 0 once the class is decided (its path
 * in t->c[ci].path).  t->lock held.
 */
int gdr_choose_next(struct gdr_tune *t, int ci, int possible);

/* A measuring copy of class ci by path p took ns.  t->lock held. */
void gdr_choose_record(struct gdr_tune *t, int ci, int p, uint64_t ns,
		       int possible);

/*
 * A copy of decided class ci by path p, timed while watched, took ns.
 * When the choice's copies have become slower than its rival was
 * (GDR_CLOSE), the class is measured again.  t->lock held.
 */
void gdr_choose_watch(struct gdr_tune *t, int ci, int p, uint64_t ns);

/*
 * A copy of decided class ci (whose choice is p) by its rival q, timed
 * in the choice's place, took ns.  When the rival's copies are faster
 * than the choice's by GDR_SWITCH, q becomes the choice and p its rival.
 * t->lock held.
 */
void gdr_choose_watch_rival(struct gdr_tune *t, int ci, int p, int q,
			    uint64_t ns);

/*
 * For tests (path_auto.c; NULL in the library): what a measuring copy
 * cost (the path's model instead of the clock's word on the fake's
 * memcpy), the same for a watched copy of a decided class, and each copy
 * that comes to the choice.
 */
extern uint64_t (*gdr_copy_auto_cost)(int path, size_t n, int to_gpu,
				      uint64_t measured);
extern uint64_t (*gdr_copy_watch_cost)(int path, size_t n, int to_gpu,
				       uint64_t measured);
extern void (*gdr_copy_chooser_seen)(size_t n, int to_gpu);

#endif /* GDRMAP_COPY_CHOOSE_H */
