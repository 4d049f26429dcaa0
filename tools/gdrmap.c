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

	fprintf(f, "usage: gdrmap COMMAND [OPTION]...\n\n"
		   "CPU mappings of GPU memory (gdrmap %s, GDRCopy 2.x API): checks and measurements.\n\n"
		   "commands:\n", GDRMAP_TOOLS_VERSION);
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f, "\n'gdrmap COMMAND --help' lists a command's options; every command takes --json.\n"
		   "On a simulated GPU every figure is labelled as simulated.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
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
