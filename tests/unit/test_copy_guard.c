// SPDX-License-Identifier: MIT
/*
 * No routine touches memory it must not: both the mapping side and the
 * host side of every copy are placed right against PROT_NONE pages, at
 * every offset 0..63 from the page's edge, so that the 64-byte lines
 * covering a read end exactly at a boundary.  A read outside those lines,
 * a write outside [dst, dst + n), or a host access outside the range would
 * fault; the fault is caught and counted as a failure of that copy.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "isa/copy.h"

#define OFFSETS		64
#define FAILS_SHOWN	10

enum dir { TO_MAPPING, FROM_MAPPING };
enum place { AT_START, AT_END };

static const char *const dir_name[] = { "to_mapping", "from_mapping" };
static const char *const place_name[] = { "start", "end" };

/* Sizes worth trying: all small ones, and ones around line and page sizes. */
static const size_t big_sizes[] = {
	255, 256, 257, 511, 512, 513, 1000, 1024, 4031, 4032, 4033, 4095,
	4096, 4097, 6000, 8128, 8191, 8192,
};
#define SMALL_SIZES	200

/* Accessible pages with a PROT_NONE page either side. */
struct region {
	unsigned char *rw;
	size_t len;
};

static size_t page;

static struct region guarded(size_t pages)
{
	struct region r = { NULL, pages * page };
	unsigned char *all = mmap(NULL, (pages + 2) * page,
				  PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (all == MAP_FAILED || mprotect(all, page, PROT_NONE) ||
	    mprotect(all + (pages + 1) * page, page, PROT_NONE)) {
		perror("mmap/mprotect");
		exit(1);
	}
	r.rw = all + page;
	return r;
}

static sigjmp_buf on_fault;
static volatile sig_atomic_t faulted;
static void *volatile fault_addr;

static void fault_handler(int sig, siginfo_t *info, void *ctx)
{
	(void)sig;
	(void)ctx;
	faulted = 1;
	fault_addr = info->si_addr;
	siglongjmp(on_fault, 1);
}

static void catch_faults(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fault_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
}

/* Run one copy; 0 if it faulted. */
static int copy_survives(const struct gdr_copy_impl *impl, enum dir dir,
			 void *dst, const void *src, size_t n)
{
	faulted = 0;
	if (sigsetjmp(on_fault, 1) == 0) {
		if (dir == TO_MAPPING)
			impl->to_mapping(dst, src, n);
		else
			impl->from_mapping(dst, src, n);
	}
	return !faulted;
}

/* [start, start + n) placed `off` bytes from the region's start or end. */
static unsigned char *place(const struct region *r, enum place where,
			    size_t off, size_t n)
{
	return where == AT_START ? r->rw + off : r->rw + r->len - off - n;
}

static unsigned long fails_in_set;

static void one_case(const struct gdr_copy_impl *impl, enum dir dir,
		     const struct region *map, const struct region *host,
		     enum place map_at, enum place host_at, size_t off,
		     size_t n)
{
	unsigned char *m = place(map, map_at, off, n);
	/* the host side at another offset, so both sides' misalignments vary */
	unsigned char *h = place(host, host_at, (off * 7 + 3) % OFFSETS, n);
	unsigned char *dst = dir == TO_MAPPING ? m : h;
	unsigned char *src = dir == TO_MAPPING ? h : m;
	int survived, right;

	for (size_t i = 0; i < n; i++) {
		src[i] = 1 + (i * 13 + off) % 251;
		dst[i] = 0;
	}
	survived = copy_survives(impl, dir, dst, src, n);
	right = survived && !memcmp(dst, src, n);
	if (right) {
		check_passed++;
		return;
	}
	check_failed++;
	if (fails_in_set++ < FAILS_SHOWN)
		fprintf(stderr, "FAIL %s %s size %zu, mapping at %s+%zu, host "
			"at %s: %s %p (mapping %p, host %p)\n", impl->name,
			dir_name[dir], n, place_name[map_at], off,
			place_name[host_at],
			survived ? "wrong data" : "faulted at",
			survived ? NULL : fault_addr, (void *)m, (void *)h);
}

static void sizes_and_offsets(const struct gdr_copy_impl *impl, enum dir dir,
			      const struct region *map,
			      const struct region *host)
{
	size_t nbig = sizeof(big_sizes) / sizeof(big_sizes[0]);

	for (size_t s = 0; s <= SMALL_SIZES + nbig; s++) {
		size_t n = s <= SMALL_SIZES ? s :
			   big_sizes[s - SMALL_SIZES - 1];

		for (size_t off = 0; off < OFFSETS; off++) {
			if (n + OFFSETS > map->len)
				continue;
			for (int ma = AT_START; ma <= AT_END; ma++)
				for (int ha = AT_START; ha <= AT_END; ha++)
					one_case(impl, dir, map, host, ma, ha,
						 off, n);
		}
	}
}

static void test_set(const struct gdr_copy_impl *impl,
		     const struct region *map, const struct region *host)
{
	if (!impl->supported()) {
		SKIP("%s: not supported by this CPU", impl->name);
		return;
	}
	fails_in_set = 0;
	for (enum dir dir = TO_MAPPING; dir <= FROM_MAPPING; dir++)
		sizes_and_offsets(impl, dir, map, host);
}

/* The harness itself: a touch of a guard page must be caught, or the
 * passes above would prove nothing. */
static void test_guards_trap(const struct region *r)
{
	volatile unsigned char *before = r->rw - 1;
	volatile unsigned char *after = r->rw + r->len;

	faulted = 0;
	if (sigsetjmp(on_fault, 1) == 0)
		(void)*before;
	CHECK(faulted, "reading the byte before the region faults");
	faulted = 0;
	if (sigsetjmp(on_fault, 1) == 0)
		*after = 1;
	CHECK(faulted, "writing the byte after the region faults");
}

int main(void)
{
	struct region map, host;

	page = (size_t)sysconf(_SC_PAGESIZE);
	/* Two pages: room for the largest size plus an offset, and a
	 * page boundary inside for the larger sizes to cross. */
	map = guarded(8192 / page + 1);
	host = guarded(8192 / page + 1);
	catch_faults();

	test_guards_trap(&map);
	for (size_t i = 0; gdr_copy_impls[i]; i++)
		test_set(gdr_copy_impls[i], &map, &host);
	test_set(&gdr_copy_memcpy, &map, &host);
	return test_done();
}
