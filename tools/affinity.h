/* SPDX-License-Identifier: MIT */
/*
 * Where the measuring threads run.  A copy through the BAR costs more from
 * a CPU far from the GPU (another socket adds the interconnect to every
 * round trip), so by default the tools run on the GPU's local CPUs, as
 * sysfs lists them for its PCI function.
 */
#ifndef GDRMAP_TOOLS_AFFINITY_H
#define GDRMAP_TOOLS_AFFINITY_H

#include <sched.h>
#include <stddef.h>

struct cpu_choice {
	int n;			/* CPUs chosen; 0: the threads are not moved */
	int cpu[CPU_SETSIZE];	/* in the order threads take them */
	char list[256];		/* as a cpulist, e.g. "0-15" */
	const char *source;	/* "option", "gpu-local" or "none" */
	char note[160];		/* why no CPUs were chosen, if so */
};

/* Read a one-line sysfs or proc file without its newline; 0 or -1. */
int read_line(const char *path, char *buf, size_t len);

/* "0000:3b:00.0" from CUDA's or nvidia-smi's forms ("00000000:3B:00.0"). */
int pci_normalize(const char *in, char *out, size_t len);

/* Parse a cpulist ("0-3,8,10-11") into set; the count, or -1 if malformed. */
int cpulist_parse(const char *s, cpu_set_t *set);

/* Write set as a cpulist. */
void cpulist_format(const cpu_set_t *set, char *buf, size_t len);

/*
 * Choose CPUs: the --cpus option if given ("all": leave threads where the
 * scheduler puts them), else the GPU's local CPUs (busid may be NULL),
 * CPU 0 moved last.
 * Only CPUs this process may run on count.  Returns 0, or -1 with err
 * set when the option names no usable CPU (a usage error).
 */
int cpus_choose(const char *opt, const char *busid, struct cpu_choice *c,
		char *err, size_t errlen);

/* Bind the calling thread to one CPU (-1: leave it); 0 or an errno. */
int pin_thread(int cpu);

#endif /* GDRMAP_TOOLS_AFFINITY_H */
