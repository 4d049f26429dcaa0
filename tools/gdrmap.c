// SPDX-License-Identifier: MIT
/*
 * gdrmap: one command, one subcommand per job (as git does), so that the
 * options, the JSON shape and the CPU and GPU set-up are shared rather
 * than copied between five programs.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "opts.h"
#include "session.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
} cmds[] = {
	{ "doctor", cmd_doctor, "check the machine: GPUs, backends, IOMMU, NIC topology; advice for each problem" },
	{ "copylat", cmd_copylat, "copy latency per size, to and from a mapping, against cuMemcpy" },
	{ "copybw", cmd_copybw, "copy bandwidth of one size, both directions, over N threads" },
	{ "apiperf", cmd_apiperf, "latency of pin, map, get_info, unmap and unpin, with histograms" },
	{ "pplat", cmd_pplat, "GPU<->CPU ping-pong through the mapping, cuMemcpyHtoDAsync and a host flag" },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: gdrmap COMMAND [OPTION]...\n"
		   "       gdrmap help [COMMAND] | --help | --version\n\n"
		   "CPU mappings of GPU memory (gdrmap %s, GDRCopy 2.x API):\n"
		   "checks and measurements.\n\n"
		   "commands:\n", GDRMAP_TOOLS_VERSION);
	for (i = 0; i < NCMDS; i++) {
		fprintf(f, "  %-8s ", cmds[i].name);
		print_wrapped(f, 11, 11, cmds[i].what);
	}
	fprintf(f, "\n'gdrmap help COMMAND' (or 'gdrmap COMMAND --help') lists a command's\n"
		   "options; every command takes --json.  On a simulated GPU every figure\n"
		   "is labelled as simulated.\n");
}

/* Options of gdrmap itself take no argument. */
static int no_more(int argc, char **argv)
{
	if (argc <= 2)
		return 0;
	fprintf(stderr, "gdrmap: '%s' takes no argument, not '%s'\n"
		"Try 'gdrmap --help'.\n", argv[1], argv[2]);
	return 2;
}

static int help(int argc, char **argv)
{
	size_t i;

	if (argc < 3) {
		usage(stdout);
		return 0;
	}
	if (argc > 3) {
		fprintf(stderr, "gdrmap help: one command at a time, not '%s'\n"
			"Try 'gdrmap --help'.\n", argv[3]);
		return 2;
	}
	for (i = 0; i < CMD_COUNT; i++)
		if (!strcmp(argv[2], cmd_names[i])) {
			opts_usage((enum cmd)i, stdout);
			return 0;
		}
	fprintf(stderr, "gdrmap help: unknown command '%s'\n\n", argv[2]);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (no_more(argc, argv))
			return 2;
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		if (no_more(argc, argv))
			return 2;
		printf("gdrmap %s\n", GDRMAP_TOOLS_VERSION);
		return 0;
	}
	for (i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "gdrmap: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
