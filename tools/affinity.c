// SPDX-License-Identifier: MIT
/* CPU choice from --cpus or sysfs, and thread binding (affinity.h). */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"

int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

int pci_normalize(const char *in, char *out, size_t len)
{
	unsigned int dom, bus, dev, fn;
	char tail;

	if (sscanf(in, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 ||
	    bus > 0xff || dev > 0x1f || fn > 7 || dom > 0xffff)
		return -1;
	snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

int cpulist_parse(const char *s, cpu_set_t *set)
{
	const char *p = s;
	long a, b;
	char *end;
	int count = 0;

	CPU_ZERO(set);
	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return 0;
	for (;;) {
		if (!isdigit((unsigned char)*p))
			return -1;
		a = strtol(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			if (!isdigit((unsigned char)p[1]))
				return -1;
			b = strtol(p + 1, &end, 10);
			p = end;
		}
		if (a < 0 || b < a || b >= CPU_SETSIZE)
			return -1;
		for (; a <= b; a++) {
			if (!CPU_ISSET(a, set))
				count++;
			CPU_SET(a, set);
		}
		if (*p == ',') {
			p++;
			continue;
		}
		while (isspace((unsigned char)*p))
			p++;
		return *p ? -1 : count;
	}
}

void cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t used = 0;
	int i, j;

	buf[0] = 0;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, set))
			continue;
		for (j = i; j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, set); j++)
			;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used,
						 "%s%d", used ? "," : "", i);
		if (j > i && used < len)
			used += (size_t)snprintf(buf + used, len - used,
						 "-%d", j);
		i = j;
	}
}

static void take(struct cpu_choice *c, const cpu_set_t *want,
		 const cpu_set_t *allowed)
{
	cpu_set_t both;
	int i;

	CPU_AND(&both, want, allowed);
	c->n = 0;
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &both))
			c->cpu[c->n++] = i;
	cpulist_format(&both, c->list, sizeof(c->list));
}

int cpus_choose(const char *opt, const char *busid, struct cpu_choice *c,
		char *err, size_t errlen)
{
	cpu_set_t allowed, want;
	char path[128], line[1024];
	int i;

	memset(c, 0, sizeof(*c));
	c->source = "none";
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		CPU_ZERO(&allowed);
		for (i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &allowed);
	}
	if (opt && !strcmp(opt, "all")) {
		snprintf(c->note, sizeof(c->note), "--cpus all");
		return 0;
	}
	if (opt) {
		if (cpulist_parse(opt, &want) <= 0) {
			snprintf(err, errlen, "--cpus '%s' is not a CPU list (e.g. 2, 0-3,8, or all)",
				 opt);
			return -1;
		}
		take(c, &want, &allowed);
		if (!c->n) {
			snprintf(err, errlen, "--cpus '%s': none of these CPUs is available to this process",
				 opt);
			return -1;
		}
		c->source = "option";
		return 0;
	}
	if (!busid) {
		snprintf(c->note, sizeof(c->note), "no GPU PCI address known");
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist",
		 busid);
	if (read_line(path, line, sizeof(line)) ||
	    cpulist_parse(line, &want) <= 0) {
		snprintf(c->note, sizeof(c->note), "%s is not readable", path);
		return 0;
	}
	take(c, &want, &allowed);
	if (!c->n) {
		snprintf(c->note, sizeof(c->note),
			 "none of the GPU's local CPUs (%.64s) is available to this process",
			 line);
		return 0;
	}
	c->source = "gpu-local";
	/* CPU 0 takes most of the interrupts and housekeeping: measure on
	 * the next local CPU, keeping 0 for the last thread if any. */
	if (c->n > 1 && c->cpu[0] == 0) {
		memmove(c->cpu, c->cpu + 1, (size_t)(c->n - 1) * sizeof(int));
		c->cpu[c->n - 1] = 0;
	}
	return 0;
}

int pin_thread(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}
