// SPDX-License-Identifier: MIT
/*
 * Threaded copies (threads.h).
 *
 * A copy is cut into parts that the caller and the helpers claim; the
 * caller claims whatever no helper has taken by the time it finished its
 * own part, so a helper that is asleep or descheduled slows a copy by at
 * most a wake-up call, never below what the caller alone would do.
 * Helpers spin for a short while after each copy (so that copies in a
 * burst find them awake), then sleep on a futex.
 *
 * Claims carry the copy's sequence number: a helper that wakes late, for
 * a copy already finished, finds nothing left to claim, and the next copy
 * cannot be confused with it.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "now_ns.h"
#include "threads.h"

#define MAX_HELPERS	15
#ifndef DEFAULT_HELPERS
#define DEFAULT_HELPERS	3
#endif
/* How long a helper spins for the next copy before it sleeps. */
#define SPIN_NS		100000
/* No part is smaller than this: below, a helper costs more than it copies. */
#define MIN_PART	(GDR_THREADS_MIN / 2)
#define LINE		64

struct part {
	_Atomic uint64_t claim;	/* seq << 1, | 1 once claimed */
	gdr_part_fn fn;
	char *dst;
	const char *src;
	size_t n;
};

static struct {
	pthread_mutex_t busy;	/* one threaded copy at a time */
	pthread_mutex_t start;	/* starting the helpers */
	int started;		/* helpers were started (or tried) */
	int helpers;
	_Atomic uint32_t seq;	/* the copy in progress; the futex word */
	_Atomic int sleepers;
	_Atomic int awake;	/* helpers not asleep on the futex */
	_Atomic uint32_t nparts;
	_Atomic uint32_t done;
	struct part parts[MAX_HELPERS + 1];
} pool = {
	.busy = PTHREAD_MUTEX_INITIALIZER,
	.start = PTHREAD_MUTEX_INITIALIZER,
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#endif
}

/* Do every part of copy seq that nobody has claimed, from part first on. */
static void run_parts(uint32_t seq, uint32_t first)
{
	uint32_t i, k, n = atomic_load_explicit(&pool.nparts,
						memory_order_acquire);

	for (i = 0; i < n && n <= MAX_HELPERS + 1; i++) {
		uint64_t want = (uint64_t)seq << 1;
		struct part *p;

		k = (first + i) % n;
		p = &pool.parts[k];
		if (!atomic_compare_exchange_strong_explicit(
			    &p->claim, &want, want | 1, memory_order_acq_rel,
			    memory_order_relaxed))
			continue;
		p->fn(p->dst, p->src, p->n);
		atomic_fetch_add_explicit(&pool.done, 1, memory_order_release);
	}
}

/* The next copy after last: spin a while, then sleep. */
static uint32_t wait_read(uint32_t last)
{
	uint64_t t0 = now_ns();
	uint32_t s;
	int i;

	do {
		for (i = 0; i < 256; i++) {
			s = atomic_load_explicit(&pool.seq,
						 memory_order_acquire);
			if (s != last)
				return s;
			cpu_relax();
		}
	} while (now_ns() - t0 < SPIN_NS);
	atomic_fetch_sub(&pool.awake, 1);
	for (;;) {
		/* Announced before the check, which the reader's seq_cst
		 * store and load pair with: no wake-up is lost. */
		atomic_fetch_add(&pool.sleepers, 1);
		if (atomic_load(&pool.seq) == last)
			syscall(SYS_futex, &pool.seq, FUTEX_WAIT_PRIVATE, last,
				NULL, NULL, 0);
		atomic_fetch_sub(&pool.sleepers, 1);
		s = atomic_load_explicit(&pool.seq, memory_order_acquire);
		if (s != last) {
			atomic_fetch_add(&pool.awake, 1);
			return s;
		}
	}
}

static void *helper(void *arg)
{
	uint32_t me = (uint32_t)(uintptr_t)arg;
	uint32_t last = atomic_load(&pool.seq);

	atomic_fetch_add(&pool.awake, 1);
	for (;;) {
		last = wait_read(last);
		run_parts(last, me);
	}
	return NULL;
}

/* The CPUs the process could use when the library was loaded. */
static cpu_set_t at_load;
static int at_load_known;

__attribute__((constructor)) static void record_cpus(void)
{
	at_load_known = !sched_getaffinity(0, sizeof(at_load), &at_load);
}

/*
 * Where helpers may run: the calling thread's CPUs; but a thread pinned
 * to one CPU after start (a benchmark's measuring thread) lends them the
 * other CPUs the process had when the library was loaded.  A process
 * bound to one CPU from the start (an MPI rank bound to a core) has none.
 */
static void helper_cpus(cpu_set_t *set)
{
	int cpu;

	if (sched_getaffinity(0, sizeof(*set), set)) {
		CPU_ZERO(set);
		return;
	}
	if (CPU_COUNT(set) != 1 || !at_load_known)
		return;
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, set); cpu++)
		;
	*set = at_load;
	CPU_CLR(cpu, set);
	if (!CPU_COUNT(set))
		CPU_SET(cpu, set);
}

static int wanted_helpers(const cpu_set_t *set)
{
	const char *v = getenv("GDRMAP_COPY_THREADS");
	int cpus;

	if (v && *v) {
		char *end;
		long n = strtol(v, &end, 10);

		if (*end || n < 0 || n > MAX_HELPERS) {
			gdr_err("GDRMAP_COPY_THREADS=%s is not a number of helper threads from 0 to %d: using %d",
				 v, MAX_HELPERS, DEFAULT_HELPERS);
		} else {
			return (int)n;
		}
	}
	/* The caller copies too, on one of them unless they were lent. */
	cpus = CPU_COUNT(set);
	if (cpus && CPU_ISSET(sched_getcpu(), set))
		cpus--;
	return cpus < DEFAULT_HELPERS ? cpus : DEFAULT_HELPERS;
}

static void start_helpers(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	cpu_set_t cpus;
	int want, i;

	helper_cpus(&cpus);
	want = wanted_helpers(&cpus);
	pthread_attr_init(&attr);
	if (CPU_COUNT(&cpus))
		pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 << 10);
	/* Signals are the application's business: never deliver them to a
	 * helper. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < want; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, helper,
				   (void *)(uintptr_t)(i + 1)))
			break;
		pthread_setname_np(t, "gdrmap-copy");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (i < want)
		gdr_warn("started %d of %d helper threads for threaded copies",
			 i, want);
	pool.helpers = i;
}

int gdr_threads_helpers(void)
{
	pthread_mutex_lock(&pool.start);
	if (!pool.started) {
		pool.started = 1;
		start_helpers();
	}
	pthread_mutex_unlock(&pool.start);
	return pool.helpers;
}

int gdr_threads_copy(gdr_part_fn fn, void *dst, const void *src, size_t n,
		     int map_is_dst)
{
	uintptr_t lines = map_is_dst ? (uintptr_t)dst : (uintptr_t)src;
	uintptr_t end = lines + n, at, next;
	uint32_t seq, k, parts;
	size_t chunk;

	if (!gdr_threads_helpers())
		return EAGAIN;
	if (pthread_mutex_trylock(&pool.busy))
		return EBUSY;
	parts = (uint32_t)(n / MIN_PART);
	if (parts > (uint32_t)pool.helpers + 1)
		parts = (uint32_t)pool.helpers + 1;
	if (parts < 2) {
		pthread_mutex_unlock(&pool.busy);
		fn(dst, src, n);
		return 0;
	}
	chunk = (n + parts - 1) / parts;
	seq = atomic_load_explicit(&pool.seq, memory_order_relaxed) + 1;
	/* Boundaries on the mapping's lines: no line in two parts. */
	for (k = 0, at = lines; k < parts && at < end; k++, at = next) {
		struct part *p = &pool.parts[k];

		next = (at + chunk + LINE - 1) & ~(uintptr_t)(LINE - 1);
		if (next > end || k == parts - 1)
			next = end;
		p->fn = fn;
		p->dst = (char *)dst + (at - lines);
		p->src = (const char *)src + (at - lines);
		p->n = next - at;
		atomic_store_explicit(&p->claim, (uint64_t)seq << 1,
				      memory_order_relaxed);
	}
	parts = k;
	atomic_store_explicit(&pool.nparts, parts, memory_order_relaxed);
	atomic_store_explicit(&pool.done, 0, memory_order_relaxed);
	atomic_store(&pool.seq, seq);
	if (atomic_load(&pool.sleepers))
		syscall(SYS_futex, &pool.seq, FUTEX_WAKE_PRIVATE, INT_MAX,
			NULL, NULL, 0);
	run_parts(seq, 0);
	while (atomic_load_explicit(&pool.done, memory_order_acquire) != parts)
		cpu_relax();
	pthread_mutex_unlock(&pool.busy);
	return 0;
}

void gdr_threads_warm(void)
{
	uint64_t t0;
	uint32_t seq;

	if (!gdr_threads_helpers() || pthread_mutex_trylock(&pool.busy))
		return;
	/* A read of nothing: it wakes whoever sleeps. */
	seq = atomic_load_explicit(&pool.seq, memory_order_relaxed) + 1;
	atomic_store_explicit(&pool.nparts, 0, memory_order_relaxed);
	atomic_store(&pool.seq, seq);
	if (atomic_load(&pool.sleepers))
		syscall(SYS_futex, &pool.seq, FUTEX_WAKE_PRIVATE, INT_MAX,
			NULL, NULL, 0);
	t0 = now_ns();
	while (atomic_load(&pool.awake) < pool.helpers &&
	       now_ns() - t0 < 2000000)
		cpu_relax();
	pthread_mutex_unlock(&pool.busy);
}

void gdr_threads_fork_child(void)
{
	/* The helpers did not come along; the child starts its own if it
	 * ever reads threaded (it cannot use the parent's mappings). */
	pthread_mutex_init(&pool.busy, NULL);
	pthread_mutex_init(&pool.start, NULL);
	pool.started = 0;
	pool.helpers = 0;
	atomic_store(&pool.sleepers, 0);
	atomic_store(&pool.awake, 0);
}
