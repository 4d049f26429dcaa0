// SPDX-License-Identifier: MIT
/*
 * Every access a routine makes to the mapping, one by one: the "mapping"
 * is kept PROT_NONE, so each access faults; the fault handler records its
 * address and kind (the page-fault error code says read or write), opens
 * the pages, and single-steps the instruction (trap flag), after which the
 * pages close again.  That proves, on host memory:
 *  - reads load each 64-byte line covering the range exactly once, in the
 *    set's access width (one 64-byte load per line for AVX-512, two
 *    32-byte ones for AVX2, ...), and the generic routine each covering
 *    8-byte word exactly once; no read stores to the mapping;
 *  - writes store each byte once, in the fewest naturally aligned pieces
 *    of the sizes the set stores, in address order, and never read the
 *    mapping.
 * Stepping through whole copies, one instruction at a time, it also proves
 * the fences: every read executes MFENCE before its first load of the
 * mapping, every write SFENCE after its last store.
 * x86-64 only (the trap flag and the error code are x86's).
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "check.h"
#include "isa/copy.h"

#if defined(__x86_64__)

#define MAX_ACCESSES	4096
#define TRAP_FLAG	0x100
#define PF_WRITE	0x2
#define FAILS_SHOWN	10

struct access {
	uintptr_t addr;
	int write;
};

static struct access trace[MAX_ACCESSES];
static volatile size_t traced;
static unsigned char *map;
static size_t map_len;
/* the pages are open for the one faulting instruction */
static volatile sig_atomic_t opened;

/* While stepping, the fences executed, each with the number of accesses
 * traced before it. */
enum fence { MFENCE, SFENCE };
#define MAX_FENCES	64
static struct {
	enum fence kind;
	size_t after;
} fences[MAX_FENCES];
static volatile size_t nfences;
static volatile sig_atomic_t stepping;

static void on_fault(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;
	uintptr_t addr = (uintptr_t)info->si_addr;

	(void)sig;
	if (addr < (uintptr_t)map || addr >= (uintptr_t)map + map_len) {
		/* not ours: let it crash as it would have */
		signal(SIGSEGV, SIG_DFL);
		return;
	}
	if (traced < MAX_ACCESSES) {
		trace[traced].addr = addr;
		trace[traced].write =
			!!(uc->uc_mcontext.gregs[REG_ERR] & PF_WRITE);
	}
	traced++;
	mprotect(map, map_len, PROT_READ | PROT_WRITE);
	opened = 1;
	uc->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG;
}

/*
 * After one instruction: close the pages if a fault opened them; when
 * stepping, note whether the next instruction is a fence and keep going.
 */
static void on_trap(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;
	const unsigned char *ip =
		(const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];

	(void)sig;
	(void)info;
	if (opened) {
		mprotect(map, map_len, PROT_NONE);
		opened = 0;
	}
	if (!stepping) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)TRAP_FLAG;
		return;
	}
	/* mfence is 0f ae f0, sfence 0f ae f8 */
	if (ip[0] == 0x0f && ip[1] == 0xae &&
	    (ip[2] == 0xf0 || ip[2] == 0xf8) && nfences < MAX_FENCES) {
		fences[nfences].kind = ip[2] == 0xf0 ? MFENCE : SFENCE;
		fences[nfences].after = traced;
		nfences++;
	}
}

/* Trap after every instruction from here on, until stepping is cleared.
 * The red zone below the stack pointer is stepped over, not clobbered. */
static void start_stepping(void)
{
	nfences = 0;
	stepping = 1;
	__asm__ __volatile__("sub $128, %%rsp\n\t"
			     "pushfq\n\t"
			     "orq $0x100, (%%rsp)\n\t"
			     "popfq\n\t"
			     "add $128, %%rsp" ::: "memory", "cc");
}

static void install(int sig, void (*fn)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

enum dir { TO_MAPPING, FROM_MAPPING };

static void traced_copy(const struct gdr_copy_impl *impl, enum dir dir,
			unsigned char *host, unsigned char *m, size_t n,
			int step)
{
	traced = 0;
	mprotect(map, map_len, PROT_NONE);
	if (step)
		start_stepping();
	if (dir == TO_MAPPING)
		impl->to_mapping(m, host, n);
	else
		impl->from_mapping(host, m, n);
	stepping = 0;	/* the next trap clears the trap flag */
	mprotect(map, map_len, PROT_READ | PROT_WRITE);
}

/*
 * This set's accesses to the mapping: the width of its reads, and the
 * sizes its writes may store in one instruction (a mask of powers of two).
 * MOVDIR64B has no 32-byte store: it writes 32 aligned bytes as two 16s.
 */
static int widths(const struct gdr_copy_impl *impl, size_t *rd,
		  size_t *wr_sizes)
{
	static const struct {
		const char *name;
		size_t rd, wr_sizes;
	} table[] = {
		{ "generic", 8, 1 | 2 | 4 | 8 },
		{ "sse41", 16, 1 | 2 | 4 | 8 | 16 },
		{ "avx2", 32, 1 | 2 | 4 | 8 | 16 | 32 },
		{ "avx512", 64, 1 | 2 | 4 | 8 | 16 | 32 | 64 },
		{ "movdir64b", 16, 1 | 2 | 4 | 8 | 16 | 64 },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, impl->name)) {
			*rd = table[i].rd;
			*wr_sizes = table[i].wr_sizes;
			return 1;
		}
	return 0;
}

static unsigned long fails_in_set;

static void report(int ok, const struct gdr_copy_impl *impl, enum dir dir,
		   size_t n, size_t off, const char *what, size_t i)
{
	if (ok) {
		check_passed++;
		return;
	}
	check_failed++;
	if (fails_in_set++ >= FAILS_SHOWN)
		return;
	fprintf(stderr, "FAIL %s %s size %zu at line offset %zu: %s "
		"(access %zu of %zu:", impl->name,
		dir == TO_MAPPING ? "to_mapping" : "from_mapping", n, off,
		what, i, (size_t)traced);
	for (size_t k = 0; k < traced && k < MAX_ACCESSES && k < 12; k++)
		fprintf(stderr, " %c+%lu", trace[k].write ? 'w' : 'r',
			(unsigned long)(trace[k].addr - (uintptr_t)map));
	fprintf(stderr, ")\n");
}

static int by_addr(const void *a, const void *b)
{
	const struct access *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * A read of [m, m + n): the loads must be exactly the `width`-byte chunks
 * of the granules (64-byte lines; 8-byte words for generic) covering it.
 */
static void check_read(const struct gdr_copy_impl *impl, size_t width,
		       unsigned char *m, size_t n, size_t off)
{
	size_t granule = width == 8 ? 8 : 64;
	uintptr_t first = (uintptr_t)m & ~(uintptr_t)(granule - 1);
	uintptr_t end = ((uintptr_t)m + n + granule - 1) &
			~(uintptr_t)(granule - 1);
	size_t want = n ? (end - first) / width : 0;
	size_t i;

	if (traced != want || traced > MAX_ACCESSES) {
		report(0, impl, FROM_MAPPING, n, off,
		       "not one load per chunk of each covering line", want);
		return;
	}
	qsort(trace, traced, sizeof(trace[0]), by_addr);
	for (i = 0; i < traced; i++)
		if (trace[i].write || trace[i].addr != first + i * width)
			break;
	report(i == traced, impl, FROM_MAPPING, n, off,
	       "load missing, repeated, misplaced, or a store", i);
}

/*
 * A write of [m, m + n): the stores must be, in order, the fewest naturally
 * aligned pieces of the set's sizes: at each address the widest one that is
 * aligned there and fits.  Their addresses then imply their sizes.
 */
static void check_write(const struct gdr_copy_impl *impl, size_t sizes,
			unsigned char *m, size_t n, size_t off)
{
	uintptr_t at = (uintptr_t)m, end = (uintptr_t)m + n;
	size_t i = 0;

	while (at < end) {
		size_t piece = 64;

		while (piece > 1 && (!(sizes & piece) || at % piece ||
				     at + piece > end))
			piece /= 2;
		if (i >= traced || i >= MAX_ACCESSES || !trace[i].write ||
		    trace[i].addr != at)
			break;
		at += piece;
		i++;
	}
	report(at == end && i == traced, impl, TO_MAPPING, n, off,
	       "not the fewest aligned stores in order", i);
}

static void test_set(const struct gdr_copy_impl *impl, unsigned char *host)
{
	size_t rd, wr_sizes;
	static const size_t big[] = { 191, 192, 193, 255, 256, 257, 1000 };

	if (!impl->supported()) {
		SKIP("%s: not supported by this CPU", impl->name);
		return;
	}
	if (!widths(impl, &rd, &wr_sizes)) {
		SKIP("%s: access widths not known to this test", impl->name);
		return;
	}
	fails_in_set = 0;
	for (size_t s = 0; s < 130 + sizeof(big) / sizeof(big[0]); s++) {
		size_t n = s < 130 ? s : big[s - 130];

		for (size_t off = 0; off < 64; off++) {
			/* a line-aligned spot mid-page, plus the offset */
			unsigned char *m = map + 128 + off;

			traced_copy(impl, FROM_MAPPING, host, m, n, 0);
			check_read(impl, rd, m, n, off);
			traced_copy(impl, TO_MAPPING, host, m, n, 0);
			check_write(impl, wr_sizes, m, n, off);
		}
	}
}

/*
 * Step through copies of a few shapes: a read must execute MFENCE before
 * its first access to the mapping, a write SFENCE after its last.
 */
static void test_fences(const struct gdr_copy_impl *impl, unsigned char *host)
{
	static const size_t sizes[] = { 0, 1, 8, 63, 64, 65, 300 };
	static const size_t offsets[] = { 0, 5, 63 };
	const size_t noffsets = sizeof(offsets) / sizeof(offsets[0]);

	if (!impl->supported())
		return;	/* counted as skipped by test_set */
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (size_t o = 0; o < noffsets; o++) {
			size_t n = sizes[s], off = offsets[o];
			unsigned char *m = map + 128 + off;
			int fenced = 0;

			fails_in_set = 0;
			traced_copy(impl, FROM_MAPPING, host, m, n, 1);
			for (size_t i = 0; i < nfences; i++)
				fenced |= fences[i].kind == MFENCE &&
					  fences[i].after == 0;
			report(fenced, impl, FROM_MAPPING, n, off,
			       "no MFENCE before the first load", 0);

			fenced = 0;
			traced_copy(impl, TO_MAPPING, host, m, n, 1);
			for (size_t i = 0; i < nfences; i++)
				fenced |= fences[i].kind == SFENCE &&
					  fences[i].after == traced;
			report(fenced, impl, TO_MAPPING, n, off,
			       "no SFENCE after the last store", traced);
		}
}

/*
 * The harness itself: one known load and one known store are seen.  Where
 * they are not (a sandbox that keeps the trap flag or the fault address
 * from us), nothing here can be proven, and the test skips.
 */
static int tracer_works(void)
{
	volatile uint64_t *word = (volatile uint64_t *)(void *)(map + 64);

	traced = 0;
	mprotect(map, map_len, PROT_NONE);
	(void)*word;
	*(volatile uint32_t *)(void *)(map + 4) = 1;
	mprotect(map, map_len, PROT_READ | PROT_WRITE);
	return traced == 2 && !trace[0].write &&
	       trace[0].addr == (uintptr_t)word && trace[1].write &&
	       trace[1].addr == (uintptr_t)(map + 4);
}

/* ... and stepping sees a fence where one is. */
static void test_stepper(void)
{
	int seen = 0;

	start_stepping();
	__asm__ __volatile__("sfence" ::: "memory");
	stepping = 0;
	for (size_t i = 0; i < nfences; i++)
		seen |= fences[i].kind == SFENCE;
	CHECK(seen, "stepping sees an sfence (%zu fences seen)",
	      (size_t)nfences);
}

int main(void)
{
	static unsigned char host[2048];

	map_len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	install(SIGSEGV, on_fault);
	install(SIGTRAP, on_trap);

	if (!tracer_works()) {
		SKIP("faults and single steps cannot be traced here (%zu of "
		     "2 accesses seen)", (size_t)traced);
		return test_done();
	}
	test_stepper();
	for (size_t i = 0; gdr_copy_impls[i]; i++) {
		test_set(gdr_copy_impls[i], host);
		test_fences(gdr_copy_impls[i], host);
	}
	test_fences(&gdr_copy_memcpy, host);
	return test_done();
}

#else

int main(void)
{
	SKIP("tracing accesses needs x86-64's trap flag");
	return test_done();
}

#endif
