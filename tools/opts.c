// SPDX-License-Identifier: MIT
/* The option table and its parser (opts.h). */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "gdrapi.h"
#include "opts.h"

const char *const cmd_names[CMD_COUNT] = {
	"doctor", "copylat", "copybw", "apiperf", "pplat",
};
const char *const alloc_names[] = { "vmm", "cumemalloc", "auto" };
const char *const map_flag_names[] = { "default", "wc", "cache", "device" };
const char *const host_kind_names[] = { "pinned", "pinned", "registered",
					"pageable" };

#define B(c)	(1u << (c))
#define MEASURE	(B(CMD_COPYLAT) | B(CMD_COPYBW) | B(CMD_APIPERF) | B(CMD_PPLAT))
#define ALL	(MEASURE | B(CMD_DOCTOR))

enum {
	OPT_JSON = 256, OPT_COLD, OPT_MODE, OPT_RESPONDER, OPT_PATHS, OPT_HOST,
};

/* Limits, in the help and in the errors alike. */
#define DEVICE_MAX	1023
#define ITERS_MAX	10000000	/* samples are kept in memory: 8 bytes each */
#define THREADS_MAX	1024
#define BYTES_MAX	(1ULL << 40)	/* sizes and offsets: 1 TiB (1024G) */
#define STR_(x)	#x
#define STR(x)	STR_(x)

struct opt_def {
	const char *name;
	int id;			/* the short letter, or OPT_* */
	const char *arg;	/* NULL: a flag */
	unsigned cmds;
	const char *help[CMD_COUNT];	/* per subcommand; [0] if same */
	const char *accepts;	/* what a value must be, for errors */
};

#define SIZE_FORM "decimal or 0x hex, with an optional K, M or G (binary) suffix"

static const struct opt_def defs[] = {
	{ "help", 'h', NULL, ALL, { "show this help and exit" }, NULL },
	{ "json", OPT_JSON, NULL, ALL,
	  { "print one JSON document on stdout instead of text" }, NULL },
	{ "device", 'd', "GPU", ALL,
	  { [CMD_DOCTOR] = "look at this CUDA device only (default: all)",
	    [CMD_COPYLAT] = "CUDA device ordinal (default 0)" },
	  "a CUDA device ordinal, from 0 to " STR(DEVICE_MAX) },
	{ "cpus", 'C', "LIST", MEASURE,
	  { [CMD_COPYLAT] = "CPUs to run on, e.g. 2, 0-3,8 or all (default: the GPU's local CPUs from sysfs, CPU 0 last); the copies run on the first, gdrmap_copy_*'s read helpers on any",
	    [CMD_COPYBW] = "CPUs for the copy threads, e.g. 2, 0-3,8 or all (default: the GPU's local CPUs from sysfs, CPU 0 last); thread N runs on the Nth, round robin; gdrmap_copy_*'s read helpers may use any",
	    [CMD_APIPERF] = "CPUs to run on, e.g. 2, 0-3,8 or all (default: the GPU's local CPUs from sysfs, CPU 0 last); the calls run on the first",
	    [CMD_PPLAT] = "CPUs to run on, e.g. 2, 0-3,8 or all (default: the GPU's local CPUs from sysfs, CPU 0 last); the CPU side runs on the first, a CPU responder on the second" },
	  "a list of CPUs this process may run on, e.g. 2, 0-3,8, or all" },
	{ "alloc", 'a', "KIND", MEASURE,
	  { "GPU memory: vmm (gdrmap_mem_alloc, every backend), cumemalloc (gdrdrv and dmabuf backends only), or auto (default: vmm, else cumemalloc where the backend pins it)" },
	  "vmm, cumemalloc or auto" },
	{ "map-type", 'M', "TYPE", MEASURE,
	  { "mapping type asked of gdr_map_v2: default, wc, cache or device" },
	  "default, wc, cache or device" },
	{ "size", 's', "BYTES", B(CMD_COPYLAT) | B(CMD_COPYBW) | B(CMD_APIPERF),
	  { [CMD_COPYLAT] = "largest copy (default 16M); sizes go in powers of two",
	    [CMD_COPYBW] = "GPU buffer size (default 64M)",
	    [CMD_APIPERF] = "bytes pinned and mapped per cycle (default 64K)" },
	  "a size from 1 byte to 1024G: " SIZE_FORM },
	{ "min-size", 'm', "BYTES", B(CMD_COPYLAT),
	  { [CMD_COPYLAT] = "smallest copy (default 1)" },
	  "a size from 1 byte to 1024G: " SIZE_FORM },
	{ "copy-size", 'c', "BYTES", B(CMD_COPYBW),
	  { [CMD_COPYBW] = "bytes per copy (default: the buffer size less the offset)" },
	  "a size from 1 byte to 1024G: " SIZE_FORM },
	{ "offset", 'o', "BYTES", B(CMD_COPYLAT) | B(CMD_COPYBW) | B(CMD_APIPERF),
	  { [CMD_COPYLAT] = "offset of every copy into the mapping (default 0)",
	    [CMD_COPYBW] = "offset of the copy into the buffer (default 0)",
	    [CMD_APIPERF] = "offset of the pinned range into its allocation (default 0)" },
	  "a size from 0 to 1024G: " SIZE_FORM },
	{ "write-iters", 'w', "N", B(CMD_COPYLAT) | B(CMD_COPYBW),
	  { [CMD_COPYLAT] = "copies to the GPU per size and method, 1 to " STR(ITERS_MAX) " (default 1000; fewer for large sizes)",
	    [CMD_COPYBW] = "copies to the GPU, 1 to " STR(ITERS_MAX) " (default 20)" },
	  "a whole number from 1 to " STR(ITERS_MAX) " (each sample is kept in memory)" },
	{ "read-iters", 'r', "N", B(CMD_COPYLAT) | B(CMD_COPYBW),
	  { [CMD_COPYLAT] = "copies from the GPU per size and method, 1 to " STR(ITERS_MAX) " (default 1000; fewer for large sizes)",
	    [CMD_COPYBW] = "copies from the GPU, 1 to " STR(ITERS_MAX) " (default 5)" },
	  "a whole number from 1 to " STR(ITERS_MAX) " (each sample is kept in memory)" },
	{ "iters", 'n', "N", B(CMD_APIPERF) | B(CMD_PPLAT),
	  { [CMD_APIPERF] = "pin/map/get_info/unmap/unpin cycles, 1 to " STR(ITERS_MAX) " (default 1000)",
	    [CMD_PPLAT] = "round trips per signal path, 1 to " STR(ITERS_MAX) " (default 10000)" },
	  "a whole number from 1 to " STR(ITERS_MAX) " (each sample is kept in memory)" },
	{ "threads", 't', "N", B(CMD_COPYBW),
	  { [CMD_COPYBW] = "CPU threads sharing each copy, 1 to " STR(THREADS_MAX) " (default 1)" },
	  "a whole number from 1 to " STR(THREADS_MAX) },
	{ "cold", OPT_COLD, NULL, B(CMD_COPYLAT),
	  { [CMD_COPYLAT] = "flush the host buffer from the CPU caches before each copy" }, NULL },
	{ "paths", OPT_PATHS, NULL, B(CMD_COPYLAT),
	  { [CMD_COPYLAT] = "also time each path gdrmap_copy_* can take, forced: mapping, threads, dma, staged (n/a where one cannot serve), and cuMemcpy*Async on a private stream; its p50 over the fastest path's and the fastest other way's, per size" }, NULL },
	{ "host", OPT_HOST, "KIND", B(CMD_COPYLAT),
	  { [CMD_COPYLAT] = "host buffer the copies go from and to: pinned (cuMemAllocHost; the default, pageable memory where it fails), registered (page-aligned memory pinned with cuMemHostRegister) or pageable (page-aligned malloc memory, touched, not pinned)" },
	  "pinned, registered or pageable" },
	{ "mode", OPT_MODE, "LIST", B(CMD_PPLAT),
	  { [CMD_PPLAT] = "signal paths, comma-separated: mapping, htod, hostflag or all (default all)" },
	  "mapping, htod, hostflag or all, comma-separated, with no empty item" },
	{ "responder", OPT_RESPONDER, "KIND", B(CMD_PPLAT),
	  { [CMD_PPLAT] = "who answers: gpu (a PTX kernel), cpu (a CPU thread; figures are then not GPU figures), or auto (default: gpu, cpu on a simulated GPU)" },
	  "auto, gpu or cpu" },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

static const char *const summaries[CMD_COUNT] = {
	"check what gdrmap needs on this machine and say how to fix what is missing.",
	"latency of copies to and from a mapping, per size, against cuMemcpy.",
	"bandwidth of copies to and from a mapping, optionally over threads.",
	"latency of gdr_pin_buffer, gdr_map, gdr_get_info, gdr_unmap, gdr_unpin_buffer.",
	"GPU<->CPU ping-pong latency through the mapping, cuMemcpyHtoDAsync and a host flag.",
};

static const char *help_of(const struct opt_def *d, enum cmd cmd)
{
	if (d->help[cmd])
		return d->help[cmd];
	if (d->id == 'd' && cmd != CMD_DOCTOR)
		return d->help[CMD_COPYLAT];
	return d->help[0];
}

void print_wrapped(FILE *f, int col, int indent, const char *text)
{
	const char *p = text, *end;
	int len;

	while (*p) {
		while (*p == ' ')
			p++;
		end = p + strlen(p);
		if (col + (end - p) > HELP_WIDTH) {
			/* The last blank that keeps the line inside the width;
			 * a word longer than a line stays whole. */
			const char *brk = NULL, *q;

			for (q = p; q < end && col + (q - p) <= HELP_WIDTH; q++)
				if (*q == ' ')
					brk = q;
			if (brk)
				end = brk;
			else
				end = p + strcspn(p, " ");
		}
		len = (int)(end - p);
		fprintf(f, "%.*s\n", len, p);
		p = end;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(f, "%*s", indent, "");
		col = indent;
	}
}

static bool takes_sizes(enum cmd cmd)
{
	size_t i;

	for (i = 0; i < NDEFS; i++)
		if ((defs[i].cmds & B(cmd)) && defs[i].arg &&
		    !strcmp(defs[i].arg, "BYTES"))
			return true;
	return false;
}

void opts_usage(enum cmd cmd, FILE *f)
{
	size_t i;

	fprintf(f, "usage: gdrmap %s [OPTION]...\n", cmd_names[cmd]);
	print_wrapped(f, 0, 0, summaries[cmd]);
	fputc('\n', f);
	for (i = 0; i < NDEFS; i++) {
		const struct opt_def *d = &defs[i];
		char flag[48];

		if (!(d->cmds & B(cmd)))
			continue;
		if (d->id < 256)
			snprintf(flag, sizeof(flag), "-%c, --%s%s%s", d->id,
				 d->name, d->arg ? " " : "",
				 d->arg ? d->arg : "");
		else
			snprintf(flag, sizeof(flag), "    --%s%s%s", d->name,
				 d->arg ? " " : "", d->arg ? d->arg : "");
		fprintf(f, "  %-24s ", flag);
		print_wrapped(f, 27, 27, help_of(d, cmd));
	}
	fputc('\n', f);
	if (cmd == CMD_DOCTOR)
		print_wrapped(f, 0, 0,
			      "Each check prints ok, warn or fail and one line of advice.  Runs without a GPU and without root.  Exit status: 0, 1 if a check failed, 2 usage error.");
	else
		print_wrapped(f, 0, 0, takes_sizes(cmd) ?
			      "Sizes take K, M or G (binary) suffixes.  Exit status: 0 done, 1 could not run (no GPU, no usable backend, CUDA error), 2 usage error, 3 data moved was wrong." :
			      "Exit status: 0 done, 1 could not run (no GPU, no usable backend, CUDA error), 2 usage error, 3 data moved was wrong.");
}

int parse_size(const char *s, size_t *out)
{
	unsigned long long v, mul = 1;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm': case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g': case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	}
	if (mul > 1 && (*end == 'i' || *end == 'I') &&
	    (end[1] == 'b' || end[1] == 'B'))
		end += 2;
	else if (mul > 1 && (*end == 'b' || *end == 'B'))
		end++;
	if (*end || v > SIZE_MAX / mul)
		return -1;
	*out = (size_t)(v * mul);
	return 0;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int pick(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static int parse_modes(const char *s, unsigned *out)
{
	static const char *const names[] = { "mapping", "htod", "hostflag" };
	char buf[128], *tok, *save = NULL;
	unsigned m = 0;
	int k;

	/* strtok_r would pass over empty items: "mapping,,htod" is a typo. */
	if (strlen(s) >= sizeof(buf) || !*s || *s == ',' ||
	    s[strlen(s) - 1] == ',' || strstr(s, ",,"))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			m |= PP_ALL;
			continue;
		}
		k = pick(tok, names, 3);
		if (k < 0)
			return -1;
		m |= 1u << k;
	}
	if (!m)
		return -1;
	*out = m;
	return 0;
}

static void defaults(enum cmd cmd, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->device = cmd == CMD_DOCTOR ? -1 : 0;
	o->alloc = ALLOC_AUTO;
	o->map_flags = GDR_MAP_FLAG_DEFAULT;
	o->threads = 1;
	o->modes = PP_ALL;
	o->responder = RESP_AUTO;
	o->min_size = 1;
	switch (cmd) {
	case CMD_COPYLAT:
		o->size = 16UL << 20;
		o->w_iters = o->r_iters = 1000;
		break;
	case CMD_COPYBW:
		o->size = 64UL << 20;
		o->w_iters = 20;
		o->r_iters = 5;
		break;
	case CMD_APIPERF:
		o->size = 64UL << 10;
		o->iters = 1000;
		break;
	case CMD_PPLAT:
		o->iters = 10000;
		break;
	default:
		break;
	}
}

static int usage_error(enum cmd cmd, const char *fmt, const char *what)
{
	fprintf(stderr, "gdrmap %s: ", cmd_names[cmd]);
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\nTry 'gdrmap %s --help'.\n", cmd_names[cmd]);
	return 2;
}

/* Apply one parsed option; 0 or a usage error (2). */
static int apply(enum cmd cmd, int id, const char *arg, const char *name,
		 const char *accepts, struct opts *o)
{
	long v;
	int k;

	switch (id) {
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_COLD:
		o->cold = true;
		return 0;
	case OPT_PATHS:
		o->paths = true;
		return 0;
	case OPT_HOST:
		k = pick(arg, host_kind_names + 1, 3);
		if (k < 0)
			break;
		o->host = (enum host_kind)(k + 1);
		return 0;
	case 'd':
		if (parse_long(arg, 0, DEVICE_MAX, &v))
			break;
		o->device = (int)v;
		return 0;
	case 'C': {
		cpu_set_t set;

		if (strcmp(arg, "all") && cpulist_parse(arg, &set) <= 0)
			break;
		o->cpus = arg;
		return 0;
	}
	case 'a':
		k = pick(arg, alloc_names, 3);
		if (k < 0)
			break;
		o->alloc = (enum alloc_kind)k;
		return 0;
	case 'M':
		k = pick(arg, map_flag_names, 4);
		if (k < 0)
			break;
		o->map_flags = k;
		return 0;
	case 's':
	case 'm':
	case 'c': {
		size_t *n = id == 's' ? &o->size :
			    id == 'm' ? &o->min_size : &o->copy_size;

		if (parse_size(arg, n) || !*n || *n > BYTES_MAX)
			break;
		return 0;
	}
	case 'o':
		if (parse_size(arg, &o->offset) || o->offset > BYTES_MAX)
			break;
		return 0;
	case 'w':
	case 'r':
	case 'n':
		/* Samples are kept in memory: 8 bytes each, per call kind. */
		if (parse_long(arg, 1, ITERS_MAX, &v))
			break;
		*(id == 'w' ? &o->w_iters : id == 'r' ? &o->r_iters :
		  &o->iters) = v;
		return 0;
	case 't':
		if (parse_long(arg, 1, THREADS_MAX, &v))
			break;
		o->threads = (int)v;
		return 0;
	case OPT_MODE:
		if (parse_modes(arg, &o->modes))
			break;
		return 0;
	case OPT_RESPONDER:
		k = pick(arg, (const char *const[]){ "auto", "gpu", "cpu" }, 3);
		if (k < 0)
			break;
		o->responder = (enum responder)k;
		return 0;
	}
	fprintf(stderr, "gdrmap %s: bad value for --%s: '%s': want %s\n",
		cmd_names[cmd], name, arg ? arg : "", accepts);
	fprintf(stderr, "Try 'gdrmap %s --help'.\n", cmd_names[cmd]);
	return 2;
}

int opts_parse(enum cmd cmd, int argc, char **argv, struct opts *o)
{
	struct option lopts[NDEFS + 1];
	char sopts[3 * NDEFS + 2], *sp = sopts;
	const char *name, *accepts;
	size_t i, n = 0;
	int c, idx, ret;

	defaults(cmd, o);
	*sp++ = ':';	/* report a missing argument as ':' */
	for (i = 0; i < NDEFS; i++) {
		if (!(defs[i].cmds & B(cmd)))
			continue;
		lopts[n].name = defs[i].name;
		lopts[n].has_arg = defs[i].arg ? required_argument : no_argument;
		lopts[n].flag = NULL;
		lopts[n].val = defs[i].id;
		n++;
		if (defs[i].id < 256) {
			*sp++ = (char)defs[i].id;
			if (defs[i].arg)
				*sp++ = ':';
		}
	}
	memset(&lopts[n], 0, sizeof(lopts[n]));
	*sp = 0;
	opterr = 0;
	optind = 1;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, sopts, lopts, &idx);
		if (c == -1)
			break;
		if (c == '?') {
			const char *arg = argv[optind - 1];

			/* --json=1: getopt names the flag in optopt. */
			for (i = 0; optopt && i < NDEFS; i++)
				if (defs[i].id == optopt && !defs[i].arg &&
				    !strncmp(arg, "--", 2) && strchr(arg, '='))
					return usage_error(cmd, "option '--%s' takes no value",
							   defs[i].name);
			if (optopt && optopt < 256 && optopt != '?') {
				char s[3] = { '-', (char)optopt, 0 };

				return usage_error(cmd, "unknown option '%s'", s);
			}
			return usage_error(cmd, "unknown option '%s'",
					   argv[optind - 1]);
		}
		if (c == ':')
			return usage_error(cmd, "option '%s' needs a value",
					   argv[optind - 1]);
		if (c == 'h') {
			opts_usage(cmd, stdout);
			return 1;
		}
		name = "?";
		accepts = "?";
		for (i = 0; i < NDEFS; i++)
			if (defs[i].id == c) {
				name = defs[i].name;
				accepts = defs[i].accepts;
			}
		ret = apply(cmd, c, optarg, name, accepts, o);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return usage_error(cmd, "unexpected argument '%s'",
				   argv[optind]);
	if (cmd == CMD_COPYLAT && o->min_size > o->size) {
		char what[96];

		snprintf(what, sizeof(what), "--min-size %zu is larger than --size %zu",
			 o->min_size, o->size);
		return usage_error(cmd, "%s", what);
	}
	return 0;
}
