// SPDX-License-Identifier: MIT
/*
 * gdrmap apiperf: what the API's set-up calls cost, one sample per call:
 * gdr_pin_buffer, gdr_map, gdr_get_info, gdr_unmap, gdr_unpin_buffer, in
 * that order, N cycles on one allocation.  With the module-free backends a
 * pin is an import of the whole allocation, so its cost follows the
 * allocation's size, not the pinned size.  Each cycle reads 8 bytes
 * through its fresh mapping and checks them against what cuMemcpy wrote.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "session.h"
#include "stats.h"

enum op { PIN, MAP, INFO, UNMAP, UNPIN, NOPS };

static const char *const op_names[NOPS] = {
	"pin", "map", "get_info", "unmap", "unpin",
};
static const char *const op_calls[NOPS] = {
	"gdr_pin_buffer", "gdr_map_v2", "gdr_get_info", "gdr_unmap",
	"gdr_unpin_buffer",
};

static uint64_t pattern(size_t word)
{
	return 0x9e3779b97f4a7c15ULL * (word + 1);
}

/* One cycle; 0, or the errno of the call that failed (*failed names it). */
static int cycle(struct session *s, struct gpubuf *b, size_t off,
		 long it, double **v, long *bad, enum op *failed)
{
	const struct opts *o = s->o;
	unsigned long addr = (unsigned long)b->base + off;
	/* Whole 8-byte words of the pattern inside the pinned range. */
	size_t first = (off + 7) & ~(size_t)7;
	size_t words = off + o->size > first ? (off + o->size - first) / 8 : 0;
	size_t word, at;
	gdr_info_t info;
	gdr_mh_t mh;
	void *map;
	uint64_t got;
	double t0;
	int err;

#define TIMED(op, call)							\
	do {								\
		t0 = now_ns();						\
		err = (call);						\
		v[op][it] = now_ns() - t0;				\
		if (err) {						\
			*failed = op;					\
			return err;					\
		}							\
	} while (0)

	TIMED(PIN, gdr_pin_buffer(s->g, addr, o->size, 0, 0, &mh));
	TIMED(MAP, gdr_map_v2(s->g, mh, &map, o->size, o->map_flags));
	TIMED(INFO, gdr_get_info(s->g, mh, &info));
	/* A different word every cycle, read through this cycle's mapping. */
	if (words) {
		word = (size_t)it * 7919 % words;
		at = first + word * 8;
		if (gdr_copy_from_mapping(mh, &got, (char *)map +
					  (b->base + at - info.va), 8) ||
		    got != pattern(at / 8))
			(*bad)++;
	}
	TIMED(UNMAP, gdr_unmap(s->g, mh, map, o->size));
	TIMED(UNPIN, gdr_unpin_buffer(s->g, mh));
#undef TIMED
	return 0;
}

int cmd_apiperf(int argc, char **argv)
{
	struct histogram h[NOPS];
	struct stats st[NOPS];
	double *v[NOPS] = { NULL };
	struct session s;
	struct opts o;
	struct gpubuf b;
	uint64_t *ref = NULL;
	size_t total, i;
	long it, bad = 0, checked;
	enum op failed = PIN;
	int ret, k;
	char a[32], c[32], d[32];

	ret = opts_parse(CMD_APIPERF, argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	total = (o.offset + o.size + 7) & ~(size_t)7;
	/* cycle() reads a whole aligned word when the range holds one. */
	checked = o.offset + o.size >= ((o.offset + 7) & ~(size_t)7) + 8 ?
		  o.iters : 0;

	ret = session_open(&s, &o);
	if (ret)
		goto close;
	/* The allocation only: this command pins and maps by itself. */
	memset(&b, 0, sizeof(b));
	ret = gpu_alloc(&s, total, &b.base);
	if (ret)
		goto close;
	ref = malloc(total);
	for (k = 0; k < NOPS; k++)
		v[k] = malloc((size_t)o.iters * sizeof(double));
	if (!ref || !v[NOPS - 1] || !v[0] || !v[1] || !v[2] || !v[3]) {
		ret = fail(&o, EXIT_CANNOT, "out of memory");
		goto free_all;
	}
	for (i = 0; i < total / 8; i++)
		ref[i] = pattern(i);
	if (s.cu->MemcpyHtoD(b.base, ref, total) != CUDA_SUCCESS ||
	    s.cu->CtxSynchronize() != CUDA_SUCCESS) {
		ret = fail(&o, EXIT_CANNOT, "cuMemcpyHtoD failed");
		goto free_all;
	}
	if (!o.json)
		session_print_header(&s, NULL);

	for (it = 0; it < o.iters; it++) {
		ret = cycle(&s, &b, o.offset, it, v, &bad, &failed);
		if (ret) {
			ret = fail(&o, EXIT_CANNOT, "cycle %ld: %s: %s", it,
				   op_calls[failed], strerror(ret));
			goto free_all;
		}
	}
	for (k = 0; k < NOPS; k++) {
		histogram_build(&h[k], v[k], (size_t)o.iters);
		stats_compute(&st[k], v[k], (size_t)o.iters);
	}

	if (o.json) {
		struct json j;

		session_json_begin(&j, &s, NULL, "ns");
		json_int(&j, "size", (long long)o.size);
		json_int(&j, "offset", (long long)o.offset);
		json_int(&j, "iters", o.iters);
		json_obj_begin(&j, "ops");
		for (k = 0; k < NOPS; k++) {
			json_obj_begin(&j, op_names[k]);
			json_str(&j, "call", op_calls[k]);
			stats_json_fields(&j, &st[k]);
			histogram_json(&j, &h[k]);
			json_obj_end(&j);
		}
		json_obj_end(&j);
		json_int(&j, "reads_checked", checked);
		json_int(&j, "reads_wrong", bad);
		json_bool(&j, "verified", bad == 0);
		json_finish(&j);
	} else {
		printf("\n%ld cycles of %zu bytes at offset %zu; p0 / p50 / p99 / max\n",
		       o.iters, o.size, o.offset);
		for (k = 0; k < NOPS; k++) {
			printf("  %-17s %s / %s / %s / ", op_calls[k],
			       fmt_ns(st[k].p0, a, sizeof(a)),
			       fmt_ns(st[k].p50, c, sizeof(c)),
			       fmt_ns(st[k].p99, d, sizeof(d)));
			printf("%s\n", fmt_ns(st[k].max, a, sizeof(a)));
			histogram_print(&h[k], 50);
		}
		printf("  data read through each mapping: %s\n",
		       bad ? "WRONG" : "verified");
	}
	if (bad)
		fprintf(stderr, "gdrmap apiperf: %ld of %ld reads through a fresh mapping returned wrong data\n",
			bad, o.iters);
	ret = bad ? EXIT_WRONG : EXIT_OK;
free_all:
	for (k = 0; k < NOPS; k++)
		free(v[k]);
	free(ref);
	gpu_free(&s, b.base);
close:
	session_close(&s, NULL);
	return ret;
}
