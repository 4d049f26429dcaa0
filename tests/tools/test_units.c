// SPDX-License-Identifier: MIT
/*
 * The tools' pure parts: percentiles, histograms, size and CPU list
 * parsing, the JSON writer (read back by jsonq's rules: here, by
 * checking the exact text), the PCIe relation names, and doctor's
 * verdicts on the module-free findings and on what can be pinned.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "check.h"
#include "doctor.h"
#include "json.h"
#include "opts.h"
#include "stats.h"

static void test_stats(void)
{
	double v[100], one = 42;
	struct stats st;
	struct histogram h;
	int i;

	for (i = 0; i < 100; i++)
		v[i] = 100 - i;		/* 100 .. 1, unsorted */
	stats_compute(&st, v, 100);
	CHECK(st.p0 == 1 && st.p50 == 50 && st.p99 == 99 && st.max == 100,
	      "p0 %g p50 %g p99 %g max %g", st.p0, st.p50, st.p99, st.max);
	CHECK(fabs(st.mean - 50.5) < 1e-9, "mean %g", st.mean);
	stats_compute(&st, &one, 1);
	CHECK(st.p0 == 42 && st.p50 == 42 && st.p99 == 42, "one sample");
	stats_compute(&st, v, 0);
	CHECK(st.n == 0 && isnan(st.p50), "no samples: NaN");

	for (i = 0; i < 100; i++)
		v[i] = i < 50 ? 150 : 3000;	/* buckets [100,200) [2000,5000) */
	histogram_build(&h, v, 100);
	CHECK(h.lo[h.first] == 100 && h.count[h.first] == 50, "first bucket");
	CHECK(h.lo[h.last] == 2000 && h.count[h.last] == 50, "last bucket");
	v[0] = 0.2;
	histogram_build(&h, v, 1);
	CHECK(h.first == 0 && h.count[0] == 1, "below 1 ns counts in the first");
}

static void test_sizes(void)
{
	static const struct { const char *s; size_t v; int ok; } t[] = {
		{ "0", 0, 0 }, { "1", 1, 0 }, { "4K", 4096, 0 },
		{ "4k", 4096, 0 }, { "16M", 16UL << 20, 0 },
		{ "2G", 2UL << 30, 0 }, { "1KiB", 1024, 0 }, { "3MB", 3UL << 20, 0 },
		{ "0x100", 256, 0 }, { "", 0, -1 }, { "-1", 0, -1 },
		{ "1X", 0, -1 }, { "K", 0, -1 }, { "12 ", 0, -1 },
		{ "99999999999999999999", 0, -1 }, { "17179869184G", 0, -1 },
	};
	size_t i, v;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		v = 12345;
		int r = parse_size(t[i].s, &v);

		CHECK(r == t[i].ok && (r || v == t[i].v),
		      "parse_size(\"%s\") = %d, %zu", t[i].s, r, v);
	}
}

static void test_cpulist(void)
{
	char buf[64];
	cpu_set_t s;

	CHECK(cpulist_parse("0-3,8,10-11", &s) == 7, "count");
	CHECK(CPU_ISSET(2, &s) && CPU_ISSET(8, &s) && !CPU_ISSET(9, &s),
	      "members");
	cpulist_format(&s, buf, sizeof(buf));
	CHECK(!strcmp(buf, "0-3,8,10-11"), "format: %s", buf);
	CHECK(cpulist_parse("5\n", &s) == 1, "trailing newline");
	CHECK(cpulist_parse("", &s) == 0, "empty");
	CHECK(cpulist_parse("3-1", &s) < 0, "reversed range");
	CHECK(cpulist_parse("1,,2", &s) < 0, "empty item");
	CHECK(cpulist_parse("a", &s) < 0, "letters");
	CHECK(cpulist_parse("1-", &s) < 0, "open range");
	CHECK(cpulist_parse("999999", &s) < 0, "beyond CPU_SETSIZE");
	CHECK(!pci_normalize("00000000:3B:00.0", buf, sizeof(buf)) &&
	      !strcmp(buf, "0000:3b:00.0"), "pci_normalize: %s", buf);
	CHECK(pci_normalize("3B:00.0", buf, sizeof(buf)) < 0, "short form refused");
}

static void test_json(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct json j;

	json_init(&j, f);
	json_obj_begin(&j, NULL);
	json_str(&j, "s", "a\"b\\c\n\x01");
	json_num(&j, "nan", NAN);
	json_int(&j, "i", -7);
	json_arr_begin(&j, "a");
	json_bool(&j, NULL, true);
	json_null(&j, NULL);
	json_arr_end(&j);
	json_obj_begin(&j, "empty");
	json_obj_end(&j);
	json_arr_begin(&j, "open");	/* left open: json_finish closes */
	json_finish(&j);
	fclose(f);
	CHECK(!strcmp(text,
		"{\n  \"s\": \"a\\\"b\\\\c\\n\\u0001\",\n  \"nan\": null,\n"
		"  \"i\": -7,\n  \"a\": [\n    true,\n    null\n  ],\n"
		"  \"empty\": {},\n  \"open\": []\n}\n"),
	      "JSON text:\n%s", text);
	free(text);
}

static void place(struct pci_place *p, const char *root, int numa, int n, ...)
{
	va_list ap;
	int i;

	memset(p, 0, sizeof(*p));
	snprintf(p->root, sizeof(p->root), "%s", root);
	p->numa = numa;
	va_start(ap, n);
	for (i = 0; i < n; i++)
		snprintf(p->chain[i], sizeof(p->chain[i]), "%s",
			 va_arg(ap, const char *));
	va_end(ap);
	p->depth = n;
	p->known = true;
	memcpy(p->bdf, p->chain[n - 1], sizeof(p->bdf));
}

static void test_relation(void)
{
	struct pci_place gpu, nic;

	/* GPU and NIC under one switch: root port, upstream, downstream. */
	place(&gpu, "pci0000:00", 0, 4, "0000:00:01.0", "0000:01:00.0",
	      "0000:02:00.0", "0000:03:00.0");
	place(&nic, "pci0000:00", 0, 4, "0000:00:01.0", "0000:01:00.0",
	      "0000:02:01.0", "0000:04:00.0");
	CHECK(!strcmp(pci_relation(&gpu, &nic), "PIX"), "same switch");
	CHECK(!strcmp(pci_relation(&gpu, &gpu), "X"), "itself");
	/* Two switches below one root port. */
	place(&nic, "pci0000:00", 0, 6, "0000:00:01.0", "0000:01:00.0",
	      "0000:02:02.0", "0000:05:00.0", "0000:06:00.0", "0000:07:00.0");
	CHECK(!strcmp(pci_relation(&gpu, &nic), "PXB"), "nested switches");
	/* Different root ports of one host bridge. */
	place(&nic, "pci0000:00", 0, 2, "0000:00:02.0", "0000:08:00.0");
	CHECK(!strcmp(pci_relation(&gpu, &nic), "PHB"), "same host bridge");
	/* Other host bridges: same NUMA node, then another. */
	place(&nic, "pci0000:80", 0, 2, "0000:80:01.0", "0000:81:00.0");
	CHECK(!strcmp(pci_relation(&gpu, &nic), "NODE"), "same node");
	nic.numa = 1;
	CHECK(!strcmp(pci_relation(&gpu, &nic), "SYS"), "other node");
	nic.known = false;
	CHECK(!strcmp(pci_relation(&gpu, &nic), "unknown"), "not in sysfs");
}

/* A bad finding fails only where a GPU is left without any backend. */
static void test_mf_verdicts(void)
{
	static struct mf m;
	static struct checks cs;
	int i;

	memset(&m, 0, sizeof(m));
	m.r.f[DIAG_LOADER].state = DIAG_BAD;
	snprintf(m.r.f[DIAG_LOADER].msg, sizeof(m.r.f[0].msg), "no loader");
	snprintf(m.r.f[DIAG_LOADER].fix, sizeof(m.r.f[0].fix), "install it");
	m.r.f[DIAG_DEVICES].state = DIAG_OK;
	snprintf(m.r.f[DIAG_DEVICES].msg, sizeof(m.r.f[0].msg), "present");
	for (i = 0; i < 2; i++) {
		cs.n = 0;
		mf_checks(&cs, &m, i);
		CHECK(cs.n == 2, "unknown findings make no check (%d)", cs.n);
		CHECK(!strcmp(cs.c[0].name, "nvidia devices") &&
		      cs.c[0].v == V_OK, "ok stays ok");
		CHECK(!strcmp(cs.c[1].name, "vulkan loader") &&
		      cs.c[1].v == (i ? V_FAIL : V_WARN) &&
		      !strcmp(cs.c[1].advice, "install it") &&
		      !strcmp(cs.c[1].msg, "no loader"),
		      "must_work %d: the cause %s, with its fix", i,
		      verdict_names[cs.c[1].v]);
	}
}

/* Which memory is pinnable, from the backends that open. */
static void test_pinnable(void)
{
	struct backend_probe bp[GDR_NR_BACKENDS];
	static struct gpu g;
	struct pinnable p;

	memset(bp, 0, sizeof(bp));
	g.posix_fd = 1;
	pinnable(&p, bp, &g, 0);
	CHECK(p.vmm_fd_here == -1 && p.cumemalloc_module_free == -1,
	      "no GPU: unknown");
	/* probe_backends' order: gdrdrv, dmabuf, rm, vulkan. */
	bp[3].usable = true;
	pinnable(&p, bp, &g, 1);
	CHECK(p.vmm_fd_module_free == 1 && p.vmm_fd_here == 1 &&
	      p.cumemalloc_module_free == 0 && p.cumemalloc_here == 0 &&
	      !strcmp(p.module_free, "vulkan"),
	      "vulkan: cuMemCreate+fd yes, cuMemAlloc no");
	g.posix_fd = 0;
	pinnable(&p, bp, &g, 1);
	CHECK(p.vmm_fd_module_free == 0, "vulkan without fd export: no");
	bp[0].usable = true;
	pinnable(&p, bp, &g, 1);
	CHECK(p.vmm_fd_module_free == 0 && p.vmm_fd_here == 1 &&
	      p.cumemalloc_module_free == 0 && p.cumemalloc_here == 1,
	      "gdrdrv pins both, neither without a module");
	bp[2].usable = true;
	pinnable(&p, bp, &g, 1);
	CHECK(p.vmm_fd_module_free == 1 && p.cumemalloc_module_free == 1 &&
	      !strcmp(p.module_free, "rm"),
	      "the rm backend pins both without a module");
	bp[1].usable = true;
	pinnable(&p, bp, &g, 1);
	CHECK(p.vmm_fd_module_free == 1 && p.cumemalloc_module_free == 1 &&
	      !strcmp(p.module_free, "dmabuf"),
	      "a dma-buf mmap driver pins both without a module");
}

int main(void)
{
	test_mf_verdicts();
	test_pinnable();
	test_stats();
	test_sizes();
	test_cpulist();
	test_json();
	test_relation();
	return test_done();
}
