// SPDX-License-Identifier: MIT
/*
 * Which routine set is used: gdr_copy_for_type's choice per mapping type,
 * the order and names of gdr_copy_impls, GDRMAP_COPY forcing (through
 * gdr_copy_select, and end to end in child processes, where the once-per-
 * process choice is made afresh), the warning for an ignored name, and the
 * CPU probe against what the kernel reports in /proc/cpuinfo.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "isa/copy.h"
#include "isa/cpu.h"

static const struct gdr_copy_impl *first_supported(void)
{
	for (size_t i = 0; gdr_copy_impls[i]; i++)
		if (gdr_copy_impls[i]->supported())
			return gdr_copy_impls[i];
	return NULL;
}

/* A built set this CPU cannot run, or NULL. */
static const struct gdr_copy_impl *unsupported_set(void)
{
	for (size_t i = 0; gdr_copy_impls[i]; i++)
		if (!gdr_copy_impls[i]->supported())
			return gdr_copy_impls[i];
	return NULL;
}

static void test_impl_list(void)
{
	size_t n = 0;

	while (gdr_copy_impls[n])
		n++;
	CHECK(n >= 1, "at least one routine set is built");
	CHECK(n >= 1 && gdr_copy_impls[n - 1] == &gdr_copy_generic,
	      "generic is last, the fallback of every CPU");
	CHECK(gdr_copy_generic.supported(), "generic is always supported");
	for (size_t i = 0; i < n; i++) {
		const struct gdr_copy_impl *impl = gdr_copy_impls[i];

		CHECK(impl->name && impl->supported && impl->to_mapping &&
		      impl->from_mapping, "set %zu is complete", i);
		CHECK(gdr_copy_find(impl->name) == impl,
		      "gdr_copy_find(\"%s\") finds it", impl->name);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(impl->name, gdr_copy_impls[j]->name),
			      "names are unique (%s)", impl->name);
	}
#if defined(__x86_64__)
	CHECK(gdr_copy_find("avx512") == &gdr_copy_avx512 &&
	      gdr_copy_find("avx2") == &gdr_copy_avx2 &&
	      gdr_copy_find("movdir64b") == &gdr_copy_movdir64b &&
	      gdr_copy_find("sse41") == &gdr_copy_sse41,
	      "every x86-64 set is built and findable");
	CHECK(gdr_copy_impls[0] == &gdr_copy_avx512,
	      "AVX-512 is preferred (fastest reads on the H200 machine)");
#elif defined(__aarch64__)
	CHECK(gdr_copy_find("neon") == &gdr_copy_neon, "neon is built");
#endif
	CHECK(!gdr_copy_find(NULL), "no set for a NULL name");
	CHECK(!gdr_copy_find(""), "no set for an empty name");
	CHECK(!gdr_copy_find("avx1024"), "no set for an unknown name");
	CHECK(!gdr_copy_find("memcpy"),
	      "memcpy is for cached mappings only, not a WC choice");
	CHECK(gdr_copy_memcpy.supported(), "memcpy is always supported");
}

/* Run fn with stderr sent to a file; return what it printed (static). */
static const char *stderr_of(const struct gdr_copy_impl *(*fn)(const char *),
			     const char *arg,
			     const struct gdr_copy_impl **result)
{
	static char text[1024];
	FILE *capture = tmpfile();
	int saved = dup(2);
	size_t len;

	fflush(stderr);
	if (!capture || saved < 0 || dup2(fileno(capture), 2) < 0) {
		perror("capturing stderr");
		exit(1);
	}
	*result = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(capture);
	len = fread(text, 1, sizeof(text) - 1, capture);
	text[len] = '\0';
	fclose(capture);
	return text;
}

static void test_select(void)
{
	const struct gdr_copy_impl *best = first_supported();
	const struct gdr_copy_impl *unsupported = unsupported_set();
	const struct gdr_copy_impl *got;
	const char *text;

	CHECK(gdr_copy_select(NULL) == best, "unset: the best supported set");
	CHECK(gdr_copy_select("") == best, "empty: the best supported set");
	for (size_t i = 0; gdr_copy_impls[i]; i++) {
		const struct gdr_copy_impl *impl = gdr_copy_impls[i];

		if (impl->supported())
			CHECK(gdr_copy_select(impl->name) == impl,
			      "GDRMAP_COPY=%s forces it", impl->name);
	}

	unsetenv("GDRCOPY_ENABLE_LOGGING");
	text = stderr_of(gdr_copy_select, "bogus", &got);
	CHECK(got == best, "unknown name: the best set");
	CHECK(!*text, "silent without logging, printed \"%s\"", text);

	setenv("GDRCOPY_ENABLE_LOGGING", "1", 1);
	text = stderr_of(gdr_copy_select, "bogus", &got);
	CHECK(got == best, "unknown name: the best set");
	CHECK(strstr(text, "GDRMAP_COPY=bogus") && strstr(text, best->name),
	      "with logging, says what was ignored and what is used: \"%s\"",
	      text);
	text = stderr_of(gdr_copy_select, "generic", &got);
	CHECK(got == &gdr_copy_generic && !*text,
	      "a name that is honoured is not reported: \"%s\"", text);
	if (unsupported) {
		text = stderr_of(gdr_copy_select, unsupported->name, &got);
		CHECK(got == best, "unsupported %s: the best set",
		      unsupported->name);
		CHECK(strstr(text, unsupported->name) &&
		      strstr(text, "not support"),
		      "with logging, says %s is not supported: \"%s\"",
		      unsupported->name, text);
	} else {
		SKIP("every built set is supported: none to force in vain");
	}
	unsetenv("GDRCOPY_ENABLE_LOGGING");
}

/*
 * The WC set a fresh process picks with GDRMAP_COPY = `forced` (unset if
 * NULL): a child sets it, asks gdr_copy_for_type, and sends the name back.
 */
static void child_choice(const char *forced, char *name, size_t size)
{
	int fds[2];
	pid_t pid;
	ssize_t len;
	int status;

	name[0] = '\0';
	if (pipe(fds)) {
		perror("pipe");
		exit(1);
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		const struct gdr_copy_impl *impl;

		close(fds[0]);
		if (forced)
			setenv("GDRMAP_COPY", forced, 1);
		else
			unsetenv("GDRMAP_COPY");
		impl = gdr_copy_for_type(GDR_MAPPING_TYPE_WC);
		if (impl && write(fds[1], impl->name, strlen(impl->name)) < 0)
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	len = read(fds[0], name, size - 1);
	name[len > 0 ? len : 0] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child for GDRMAP_COPY=%s exited cleanly", forced ? forced : "");
}

static void test_forced_end_to_end(void)
{
	const struct gdr_copy_impl *best = first_supported();
	const struct gdr_copy_impl *unsupported = unsupported_set();
	char name[64];

	child_choice(NULL, name, sizeof(name));
	CHECK(!strcmp(name, best->name), "unset: %s, want %s", name,
	      best->name);
	child_choice("generic", name, sizeof(name));
	CHECK(!strcmp(name, "generic"), "GDRMAP_COPY=generic: %s", name);
	child_choice("no-such-set", name, sizeof(name));
	CHECK(!strcmp(name, best->name), "unknown name: %s, want %s", name,
	      best->name);
	if (unsupported) {
		child_choice(unsupported->name, name, sizeof(name));
		CHECK(!strcmp(name, best->name), "unsupported %s: %s, want %s",
		      unsupported->name, name, best->name);
	}
}

static void *wc_choice(void *arg)
{
	(void)arg;
	return (void *)gdr_copy_for_type(GDR_MAPPING_TYPE_WC);
}

static void test_for_type(void)
{
	const struct gdr_copy_impl *want_wc =
		gdr_copy_select(getenv("GDRMAP_COPY"));
	pthread_t threads[8];

	CHECK(!gdr_copy_for_type(GDR_MAPPING_TYPE_NONE), "NONE: no set");
	CHECK(!gdr_copy_for_type(GDR_MAPPING_TYPE_MAX), "MAX: no set");
	CHECK(!gdr_copy_for_type((gdr_mapping_type_t)-1), "-1: no set");
	CHECK(!gdr_copy_for_type((gdr_mapping_type_t)1000), "1000: no set");
	CHECK(gdr_copy_for_type(GDR_MAPPING_TYPE_CACHING) == &gdr_copy_memcpy,
	      "CACHING: memcpy");
	CHECK(gdr_copy_for_type(GDR_MAPPING_TYPE_DEVICE) == &gdr_copy_generic,
	      "DEVICE: generic, aligned scalar accesses only");

	/* first calls race in threads; all must see the one choice */
	for (size_t i = 0; i < 8; i++)
		pthread_create(&threads[i], NULL, wc_choice, NULL);
	for (size_t i = 0; i < 8; i++) {
		void *got;

		pthread_join(threads[i], &got);
		CHECK(got == want_wc, "thread %zu got %s, want %s", i,
		      got ? ((const struct gdr_copy_impl *)got)->name : "NULL",
		      want_wc->name);
	}
	CHECK(gdr_copy_for_type(GDR_MAPPING_TYPE_WC) == want_wc,
	      "WC: %s, the same on every call", want_wc->name);
}

/* Whether /proc/cpuinfo's first flags line lists `flag`; -1 if unknown. */
static int cpuinfo_has(const char *key, const char *flag)
{
	static char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	char *tok;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			break;
	fclose(f);
	if (strncmp(line, key, strlen(key)))
		return -1;
	for (tok = strtok(strchr(line, ':') + 1, " \n"); tok;
	     tok = strtok(NULL, " \n"))
		if (!strcmp(tok, flag))
			return 1;
	return 0;
}

static void test_cpu_probe(void)
{
#if defined(__x86_64__)
	int sse41 = cpuinfo_has("flags", "sse4_1");

	if (sse41 < 0) {
		SKIP("no /proc/cpuinfo flags to check the CPU probe against");
		return;
	}
	CHECK(gdr_cpu_has_sse41() == sse41, "SSE4.1 as the kernel reports");
	CHECK(gdr_cpu_has_avx2() == cpuinfo_has("flags", "avx2"),
	      "AVX2 as the kernel reports");
	CHECK(gdr_cpu_has_avx512() == (cpuinfo_has("flags", "avx512f") &&
				       cpuinfo_has("flags", "avx512bw") &&
				       cpuinfo_has("flags", "avx512vl")),
	      "AVX-512 F+BW+VL as the kernel reports");
	CHECK(gdr_cpu_has_movdir64b() ==
	      (cpuinfo_has("flags", "movdir64b") && sse41),
	      "MOVDIR64B as the kernel reports");
	printf("this CPU: sse41 %d avx2 %d avx512 %d movdir64b %d\n",
	       gdr_cpu_has_sse41(), gdr_cpu_has_avx2(), gdr_cpu_has_avx512(),
	       gdr_cpu_has_movdir64b());
#elif defined(__aarch64__)
	int asimd = cpuinfo_has("Features", "asimd");

	if (asimd < 0) {
		SKIP("no /proc/cpuinfo features to check the probe against");
		return;
	}
	CHECK(gdr_cpu_has_neon() == asimd, "NEON as the kernel reports");
#else
	SKIP("no CPU probe on this architecture");
#endif
}

int main(void)
{
	test_impl_list();
	test_select();
	/* before this process makes its own once-only choice */
	test_forced_end_to_end();
	test_for_type();
	test_cpu_probe();
	return test_done();
}
