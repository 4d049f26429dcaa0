// SPDX-License-Identifier: MIT
/*
 * What doctor reads from the system: sysfs, all of it readable without
 * root except the PCIe extended config space that holds ACS; the NVIDIA
 * module's version; the file the library in use was loaded from.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "doctor.h"
#include "gdrapi.h"

static bool is_bdf(const char *s)
{
	unsigned int d, b, s2, f;
	char tail;

	return sscanf(s, "%x:%x:%x.%x%c", &d, &b, &s2, &f, &tail) == 4 &&
	       strlen(s) == 12;
}

int pci_place(const char *bdf, struct pci_place *p)
{
	char path[PATH_MAX], real[PATH_MAX], line[256], *tok, *save = NULL;

	memset(p, 0, sizeof(*p));
	p->numa = -1;
	snprintf(p->bdf, sizeof(p->bdf), "%s", bdf);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
	if (!realpath(path, real))
		return -1;
	/* /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0 */
	for (tok = strtok_r(real, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (!strncmp(tok, "pci", 3) && !p->root[0])
			snprintf(p->root, sizeof(p->root), "%s", tok);
		else if (is_bdf(tok) && p->depth < MAX_CHAIN)
			snprintf(p->chain[p->depth++], sizeof(p->chain[0]),
				 "%s", tok);
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bdf);
	if (!read_line(path, line, sizeof(line)))
		p->numa = atoi(line);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist",
		 bdf);
	if (read_line(path, p->cpus, sizeof(p->cpus)))
		p->cpus[0] = 0;
	p->known = p->depth > 0;
	return p->known ? 0 : -1;
}

unsigned long long pci_vram_bar(const char *bdf, int *index)
{
	unsigned long long start, end, flags, size, best = 0;
	char path[128], vendor[32];
	bool nvidia;
	FILE *f;
	int i;

	*index = -1;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", bdf);
	nvidia = !read_line(path, vendor, sizeof(vendor)) &&
		 !strcmp(vendor, "0x10de");
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource", bdf);
	f = fopen(path, "r");
	if (!f)
		return 0;
	for (i = 0; i < 6 &&
	     fscanf(f, "%llx %llx %llx", &start, &end, &flags) == 3; i++) {
		size = end > start ? end - start + 1 : 0;
		/* 0x200: IORESOURCE_MEM; 0x2000: IORESOURCE_PREFETCH */
		if (nvidia ? i == 1 :
		    (flags & 0x2200) == 0x2200 && size > best) {
			best = size;
			*index = i;
		}
	}
	fclose(f);
	return best;
}

const char *pci_relation(const struct pci_place *a, const struct pci_place *b)
{
	int c = 0, ua, ub;

	if (!a->known || !b->known)
		return "unknown";
	if (!strcmp(a->bdf, b->bdf))
		return "X";
	if (strcmp(a->root, b->root))
		return a->numa == b->numa ? "NODE" : "SYS";
	/* Common bridges above both (the functions themselves excluded). */
	while (c < a->depth - 1 && c < b->depth - 1 &&
	       !strcmp(a->chain[c], b->chain[c]))
		c++;
	if (!c)
		return "PHB";
	/* Below the deepest common bridge: at most one more level on each
	 * side is one switch (upstream port + downstream ports). */
	ua = a->depth - 1 - c;
	ub = b->depth - 1 - c;
	return ua <= 1 && ub <= 1 ? "PIX" : "PXB";
}

int rdma_nics(struct nic *nics, int max)
{
	char path[PATH_MAX], real[PATH_MAX], *base;
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device",
			 e->d_name);
		if (!realpath(path, real))
			continue;
		base = strrchr(real, '/');
		if (!base || !is_bdf(base + 1))
			continue;
		snprintf(nics[n].name, sizeof(nics[n].name), "%.63s", e->d_name);
		if (pci_place(base + 1, &nics[n].place))
			continue;
		n++;
	}
	closedir(d);
	return n;
}

bool module_loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

bool iommu_active(void)
{
	DIR *d = opendir("/sys/class/iommu");
	struct dirent *e;
	bool any = false;

	if (!d)
		return false;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			any = true;
	closedir(d);
	return any;
}

void iommu_group_type(const char *bdf, char *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group/type",
		 bdf);
	if (read_line(path, buf, len))
		buf[0] = 0;
}

/* ACS control of one bridge: bits, or -1 if unreadable, -2 if it has no
 * ACS capability. */
static int acs_ctrl(const char *bdf)
{
	unsigned char cfg[4096];
	char path[128];
	unsigned int off = 0x100, hdr, guard = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", bdf);
	f = fopen(path, "rb");
	if (!f)
		return -1;
	n = fread(cfg, 1, sizeof(cfg), f);
	fclose(f);
	/* Without root, sysfs gives the first 64 bytes only. */
	if (n < 0x108)
		return -1;
	while (off && off + 8 <= n && guard++ < 64) {
		hdr = cfg[off] | cfg[off + 1] << 8 | cfg[off + 2] << 16 |
		      (unsigned int)cfg[off + 3] << 24;
		if ((hdr & 0xffff) == 0x000d)	/* ACS */
			return cfg[off + 6] | cfg[off + 7] << 8;
		off = hdr >> 20;
	}
	return -2;
}

int acs_redirects(const struct pci_place *p, char *where, size_t len)
{
	int i, ctrl, unreadable = 0;

	where[0] = 0;
	for (i = 0; i < p->depth - 1; i++) {
		ctrl = acs_ctrl(p->chain[i]);
		if (ctrl == -1) {
			unreadable = 1;
			continue;
		}
		/* Request Redirect (bit 2), Completion Redirect (bit 3). */
		if (ctrl >= 0 && (ctrl & 0xc)) {
			snprintf(where, len, "%s", p->chain[i]);
			return 1;
		}
	}
	return unreadable ? -1 : 0;
}

/* From the module's sysfs directory: no root needed. */
const char *nvidia_version(char *buf, size_t len)
{
	if (read_line("/sys/module/nvidia/version", buf, len))
		snprintf(buf, len, "%s", module_loaded("nvidia") ?
			 "(version unknown)" : "(nvidia module not loaded)");
	return buf;
}

const char *library_file(char *buf, size_t len)
{
	char dir[4096], *real;
	const char *slash;
	Dl_info dl;

	if (!dladdr((void *)gdr_open, &dl) || !dl.dli_fname)
		return "?";
	slash = strrchr(dl.dli_fname, '/');
	if (!slash || (size_t)(slash - dl.dli_fname) >= sizeof(dir))
		return dl.dli_fname;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - dl.dli_fname),
		 dl.dli_fname);
	real = realpath(dir[0] ? dir : "/", NULL);
	if (!real)
		return dl.dli_fname;
	snprintf(buf, len, "%s%s", strcmp(real, "/") ? real : "", slash);
	free(real);
	return buf;
}
