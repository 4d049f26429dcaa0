/* SPDX-License-Identifier: MIT */
/*
 * The x86 PAT memory-type reservations behind gdrdrv's write-combined
 * mappings: present for the BAR range while mapped, and none left once
 * the mapping is gone - after munmap, after partial munmaps, after unpin
 * of a mapped handle, after the free callback - with contiguous and with
 * scattered GPU pages.  nvsim's own mapping of the BAR is the baseline.  A leaked reservation would make later mappings of
 * those BAR pages fail or take another type.
 */
#include <dirent.h>

#include "vmtest.h"

static const char pat_list[] = "/sys/kernel/debug/x86/pat_memtype_list";
static uint64_t bar_start, bar_end;

/* BAR2 of the ivshmem device (1af4:1110): the simulated GPU's memory. */
static int find_bar(void)
{
	char path[300], line[128];
	struct dirent *e;
	DIR *dir = opendir("/sys/bus/pci/devices");
	int found = 0;

	if (!dir)
		return 0;
	while (!found && (e = readdir(dir))) {
		unsigned vendor = 0, device = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%x", &vendor) != 1)
			vendor = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%x", &device) != 1)
			device = 0;
		fclose(f);
		if (vendor != 0x1af4 || device != 0x1110)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		for (int i = 0; i < 3 && fgets(line, sizeof(line), f); i++)
			if (i == 2 && sscanf(line, "%" SCNx64 " %" SCNx64,
					     &bar_start, &bar_end) == 2)
				found = bar_end > bar_start;
		fclose(f);
	}
	closedir(dir);
	return found;
}

/* Reservations inside the BAR; of them, how many are write-combining. */
static int bar_memtypes(int *wc)
{
	char line[256];
	FILE *f = fopen(pat_list, "r");
	int n = 0;

	*wc = 0;
	REQUIRE(f, "%s: %s", pat_list, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, e;
		char *p = strstr(line, "[mem 0x");

		if (!p || sscanf(p, "[mem 0x%" SCNx64 "-0x%" SCNx64, &s, &e) != 2)
			continue;
		if (e <= bar_start || s > bar_end)
			continue;
		n++;
		if (strstr(line, "write-combining"))
			(*wc)++;
	}
	fclose(f);
	return n;
}

/* What nvsim itself holds (its own mapping of the BAR), before gdrdrv. */
static int base_n, base_wc;

static void expect_none(const char *when)
{
	int wc, n = bar_memtypes(&wc);

	CHECK(n == base_n && wc == base_wc,
	      "%d PAT reservations (%d WC) in the BAR %s, %d (%d) at the start",
	      n, wc, when, base_n, base_wc);
}

static void expect_wc(const char *when)
{
	int wc, n = bar_memtypes(&wc);

	CHECK(n > base_n && wc - base_wc == n - base_n,
	      "%s: %d reservations in the BAR, %d WC; %d (%d) at the start",
	      when, n, wc, base_n, base_wc);
}

static void set_scatter(int on)
{
	FILE *f = fopen("/sys/module/nvsim/parameters/scatter", "w");

	REQUIRE(f, "nvsim scatter parameter: %s", strerror(errno));
	fprintf(f, "%d\n", on);
	fclose(f);
}

static void lifecycles(int fd, int persistent)
{
	const size_t len = 4 * GPU_PAGE;
	const long pg = sysconf(_SC_PAGESIZE);
	CUdeviceptr d = vm_alloc(len);
	uint8_t *m;
	uint64_t h;

	gpu_fill(d, len, 121);
	REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin");
	expect_none("after pin, before mmap");

	/* Map, unmap. */
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
	expect_wc("while mapped");
	CHECK(munmap(m, len) == 0, "munmap");
	expect_none("after munmap");

	/* Map, punch holes, unmap the pieces. */
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap again: %s", strerror(errno));
	CHECK(munmap(m + GPU_PAGE, pg) == 0, "punch");
	CHECK(munmap(m, GPU_PAGE) == 0, "munmap low piece");
	expect_wc("with pieces left");
	CHECK(munmap(m + GPU_PAGE + pg, len - GPU_PAGE - pg) == 0,
	      "munmap high piece");
	expect_none("after partial munmaps");

	/* Unpin while mapped. */
	m = gdrdrv_mmap(fd, h, len);
	REQUIRE(m != MAP_FAILED, "mmap a third time: %s", strerror(errno));
	CHECK_RET(gdrdrv_unpin(fd, h), 0);
	expect_none("after unpin of a mapped handle");
	munmap(m, len);
	expect_none("after unpin and munmap");

	/* The free callback while mapped. */
	if (!persistent) {
		REQUIRE(gdrdrv_pin(fd, d, len, &h) == 0, "pin again");
		m = gdrdrv_mmap(fd, h, len);
		REQUIRE(m != MAP_FAILED, "mmap: %s", strerror(errno));
		CU_OK(cuMemFree(d));
		expect_none("after the free callback");
		munmap(m, len);
		CHECK_RET(gdrdrv_unpin(fd, h), 0);
	} else {
		CU_OK(cuMemFree(d));
	}
	expect_none("at the end");
}

int main(void)
{
	int fd, persistent;

	if (access(pat_list, R_OK)) {
		SKIP("%s: %s (debugfs, PAT)", pat_list, strerror(errno));
		return test_done();
	}
	REQUIRE(find_bar(), "no ivshmem BAR2 in /sys/bus/pci");
	vm_cuda_init();
	fd = gdrdrv_open();
	persistent = gdrdrv_persistent(fd);
	base_n = bar_memtypes(&base_wc);
	printf("BAR %#" PRIx64 "-%#" PRIx64 ": %d reservation(s), %d WC, before any mapping\n",
	       bar_start, bar_end, base_n, base_wc);

	set_scatter(0);
	lifecycles(fd, persistent);
	set_scatter(1);
	lifecycles(fd, persistent);
	set_scatter(0);
	close(fd);
	return test_done();
}
