/* SPDX-License-Identifier: MIT */
/*
 * Command-line options of every subcommand, from one table: each option
 * lists the subcommands that take it, so flags mean the same thing
 * everywhere, and --help is generated from the same table.
 */
#ifndef GDRMAP_TOOLS_OPTS_H
#define GDRMAP_TOOLS_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum cmd {
	CMD_DOCTOR,
	CMD_COPYLAT,
	CMD_COPYBW,
	CMD_APIPERF,
	CMD_PPLAT,
	CMD_COUNT
};

enum alloc_kind {
	ALLOC_VMM,		/* gdrmap_mem_alloc: every backend pins it */
	ALLOC_CUMEMALLOC,	/* cuMemAlloc: gdrdrv and dmabuf only */
	ALLOC_AUTO,		/* vmm, else cumemalloc where it can be pinned */
};

/* copylat's host buffer: the kind of memory copies go from and to. */
enum host_kind {
	HOST_DEFAULT,		/* pinned, else pageable where pinning fails */
	HOST_PINNED,		/* cuMemAllocHost */
	HOST_REGISTERED,	/* posix_memalign + cuMemHostRegister */
	HOST_PAGEABLE,		/* posix_memalign, touched, not registered */
};

/* pplat's signal paths, as a bit set. */
enum pp_mode {
	PP_MAPPING = 1,		/* store through the mapping */
	PP_HTOD = 2,		/* cuMemcpyHtoDAsync */
	PP_HOSTFLAG = 4,	/* a flag in pinned host memory */
	PP_ALL = 7
};

enum responder {
	RESP_AUTO,		/* GPU kernel; CPU thread on a simulated GPU */
	RESP_GPU,
	RESP_CPU,
};

struct opts {
	enum cmd cmd;
	bool json;
	int device;		/* -1: doctor looks at every GPU */
	const char *cpus;	/* NULL: the GPU's local CPUs */
	enum alloc_kind alloc;
	int map_flags;		/* GDR_MAP_FLAG_* */
	size_t size;
	size_t min_size;
	size_t copy_size;	/* 0: the whole buffer */
	size_t offset;
	long w_iters, r_iters, iters;
	int threads;
	bool cold;
	bool paths;		/* copylat: time every path of gdrmap_copy_* */
	enum host_kind host;	/* copylat --host */
	unsigned modes;		/* enum pp_mode bits */
	enum responder responder;
};

extern const char *const cmd_names[CMD_COUNT];
extern const char *const alloc_names[];
extern const char *const map_flag_names[];
/* By enum host_kind: "pinned" for HOST_DEFAULT too. */
extern const char *const host_kind_names[];

/*
 * Parse argv (argv[0] is the subcommand) into o, after filling in the
 * subcommand's defaults.  Returns 0, 1 if --help was asked for (and
 * printed), or 2 after printing a usage error.
 */
int opts_parse(enum cmd cmd, int argc, char **argv, struct opts *o);

void opts_usage(enum cmd cmd, FILE *f);

/* Help text is wrapped to this many columns. */
#define HELP_WIDTH 79

/* Print text from column col on, wrapped at HELP_WIDTH with continuation
 * lines indented by indent; ends with a newline. */
void print_wrapped(FILE *f, int col, int indent, const char *text);

/* Sizes: decimal or 0x hex, with an optional K, M or G (binary) suffix. */
int parse_size(const char *s, size_t *out);

#endif /* GDRMAP_TOOLS_OPTS_H */
