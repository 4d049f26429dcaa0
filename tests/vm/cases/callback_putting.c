/* SPDX-License-Identifier: MIT */
/*
 * The free callback of a pin whose unpin is putting it (callback mode):
 * the callback only marks it (the unpin accounts for it), and once it has
 * unlocked the region the unpin may free it.  Whatever the callback
 * prints after that must have been copied before.
 *
 * The unpin's put_pages fails before the driver's lock (nvsim's
 * fail_puts), so it does not wait for the running callback, and finds the
 * callback ran: the pin is released, and the region goes with the last
 * mapping.  The order is forced (the machine needs 2 CPUs and a kernel
 * whose preemption can be switched to full at run time):
 *  - the unpin (thread U, CPU 1) zaps a large faulted-in mapping under the
 *    region's lock and is preempted there by a real-time hog (H, CPU 1);
 *  - cuMemFree (thread F, CPU 0) runs the callback, which waits for the
 *    lock; then a real-time thread (W, CPU 0) faults on the mapping's
 *    untouched end and waits behind it;
 *  - the hog stops: U sets PUTTING, unlocks, its put fails early and the
 *    hook holds it at put_exit for a while; F takes the lock, marks the
 *    pin, unlocks, and the unlock hands the lock to W, which preempts F
 *    right there; W takes SIGBUS and spins until U's unpin has returned
 *    (the pin released), unmaps the mapping (the region freed, poisoned by
 *    the VM's slub_debug) and sleeps;
 *  - F goes on: its debug line must name the pin's handle, not the freed
 *    region's poison.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>

#include "hook.h"

#define TAIL		(2 * MiB)	/* never faulted: W's fault */
#define BIG		(64 * MiB + TAIL)
#define PREEMPT		"/sys/kernel/debug/sched/preempt"
#define RT_RUNTIME	"/proc/sys/kernel/sched_rt_runtime_us"
/* Since 6.12 the fair server lends CFS tasks time under real-time hogs. */
#define FAIR_CPU0	"/sys/kernel/debug/sched/fair_server/cpu0/runtime"
#define DBG		"/sys/module/gdrdrv/parameters/dbg_enabled"
#define FAIL_PUTS	"/sys/module/nvsim/parameters/fail_puts"

static int fd;
static char preempt0[32], rt0[32], dbg0[32], fair0[32];

/* The word of a settings file, "(full)"-style choices included. */
static int read_word(const char *path, char *buf, size_t len)
{
	char line[128], *open_, *close_;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	open_ = strchr(line, '(');
	close_ = open_ ? strchr(open_, ')') : NULL;
	if (open_ && close_) {
		*close_ = '\0';
		open_++;
	} else {
		open_ = line;
	}
	if (strlen(open_) >= len)
		return -1;
	memcpy(buf, open_, strlen(open_) + 1);
	return 0;
}

static void restore(void)
{
	write_text(FAIL_PUTS, "0");
	if (*preempt0)
		write_text(PREEMPT, preempt0);
	if (*rt0)
		write_text(RT_RUNTIME, rt0);
	if (*dbg0)
		write_text(DBG, dbg0);
	if (*fair0)
		write_text(FAIR_CPU0, fair0);
}

static pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	REQUIRE(sched_setaffinity(0, sizeof(set), &set) == 0,
		"sched_setaffinity: %s", strerror(errno));
}

static void real_time(void)
{
	struct sched_param sp = { .sched_priority = 50 };

	REQUIRE(sched_setscheduler(0, SCHED_FIFO, &sp) == 0,
		"SCHED_FIFO: %s", strerror(errno));
}

/* The state letter of thread t ("D": waiting in the kernel), or '?'. */
static char state_of(pid_t t)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", t);
	f = fopen(path, "r");
	if (!f)
		return '?';
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : '?';
}

static int wait_state(pid_t t, char st, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (state_of(t) == st)
			return 0;
		usleep(1000);
	}
	return -1;
}

static uint64_t cpu_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct region {
	CUdeviceptr d;
	uint64_t h;
	volatile uint8_t *m;
};

/* A pin of BIG bytes, mapped, all but its tail faulted in. */
static void region_make(struct region *r)
{
	r->d = vm_alloc(BIG);
	REQUIRE(gdrdrv_pin(fd, r->d, BIG, &r->h) == 0, "pin of %lu bytes",
		(unsigned long)BIG);
	r->m = gdrdrv_mmap(fd, r->h, BIG);
	REQUIRE(r->m != MAP_FAILED, "mmap: %s", strerror(errno));
	for (size_t off = 0; off < BIG - TAIL; off += 2 * MiB)
		(void)r->m[off];
}

static struct shared {
	struct region r;
	atomic_int go_u, u_done, stop_h, f_done;
	int wake_h[2], wake_w[2];	/* pipes: a byte starts H, W */
	clockid_t u_clock;
	atomic_int u_tid, f_tid, w_tid;
	atomic_ullong u_start;
	int u_rc;
} s;

/* Blocks until a byte comes on the pipe (or it is closed). */
static void wait_byte(int fd_)
{
	char c;

	while (read(fd_, &c, 1) < 0 && errno == EINTR)
		;
}

static void *unpin_thread(void *arg)
{
	(void)arg;
	on_cpu(1);
	pthread_getcpuclockid(pthread_self(), &s.u_clock);
	atomic_store(&s.u_tid, tid());
	while (!atomic_load(&s.go_u))
		;
	atomic_store(&s.u_start, cpu_ns(s.u_clock));
	s.u_rc = gdrdrv_unpin(fd, s.r.h);
	atomic_store(&s.u_done, 1);
	return NULL;
}

/* Real-time from the start: woken, it preempts U at once. */
static void *hog_thread(void *arg)
{
	(void)arg;
	on_cpu(1);
	real_time();
	wait_byte(s.wake_h[0]);
	while (!atomic_load(&s.stop_h))
		;
	return NULL;
}

static void *free_thread(void *arg)
{
	(void)arg;
	on_cpu(0);
	vm_cuda_init();
	atomic_store(&s.f_tid, tid());
	cuMemFree(s.r.d);
	atomic_store(&s.f_done, 1);
	return NULL;
}

static void *fault_thread(void *arg)
{
	uint8_t byte;

	(void)arg;
	on_cpu(0);
	real_time();
	s.w_tid = tid();
	wait_byte(s.wake_w[0]);
	read_faults(s.r.m + BIG - TAIL, &byte);
	/* Preempting F right after its unlock: hold CPU 0 until U is done. */
	while (!atomic_load(&s.u_done))
		;
	munmap((void *)s.r.m, BIG);
	return NULL;
}

/* CPU time U spends unpinning a region like the raced one. */
static uint64_t zap_time(void)
{
	struct region r;
	clockid_t c;
	uint64_t t;

	region_make(&r);
	pthread_getcpuclockid(pthread_self(), &c);
	t = cpu_ns(c);
	CHECK_RET(gdrdrv_unpin(fd, r.h), 0);
	t = cpu_ns(c) - t;
	munmap((void *)r.m, BIG);
	CU_OK(cuMemFree(r.d));
	return t;
}

/*
 * From gdrdrv's debug lines since kmsg's position: the handle the
 * callback named (-1: none), and whether the unpin of handle h found the
 * callback ran while its put_pages failed, which is the order wanted.
 */
static long long callback_handle(int kmsg, uint64_t h, int *ordered)
{
	static const char cb[] = "free callback for handle ";
	char rec[1024], put[96], *p;
	long long named = -1;
	ssize_t n;

	snprintf(put, sizeof(put),
		 "put_pages for handle %llu: -12 after the free callback ran",
		 (unsigned long long)h);
	*ordered = 0;
	for (;;) {
		n = read(kmsg, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		p = strstr(rec, cb);
		if (p)
			named = strtoll(p + strlen(cb), NULL, 10);
		if (strstr(rec, put))
			*ordered = 1;
	}
	return named;
}

static void wake(int *pipe_)
{
	if (write(pipe_[1], "g", 1) != 1)
		REQUIRE(0, "waking a thread: %s", strerror(errno));
}

/* One forced run; 0 done, -1 the order could not be had. */
static int race(void)
{
	pthread_t u, hg, f, w;
	long long named;
	int kmsg, ret = -1, f_started = 0, ordered;
	uint64_t zap;

	on_cpu(0);
	zap = zap_time();
	memset(&s, 0, sizeof(s));
	region_make(&s.r);
	REQUIRE(pipe(s.wake_h) == 0 && pipe(s.wake_w) == 0, "pipe");
	REQUIRE(pthread_create(&u, NULL, unpin_thread, NULL) == 0 &&
		pthread_create(&hg, NULL, hog_thread, NULL) == 0 &&
		pthread_create(&w, NULL, fault_thread, NULL) == 0,
		"pthread_create");
	while (!atomic_load(&s.u_tid) || !atomic_load(&s.w_tid))
		usleep(1000);
	REQUIRE(write_text(FAIL_PUTS, "1") == 0, "%s", FAIL_PUTS);
	/* U goes on well before anything lends F time again. */
	hook_arm("put_exit", s.r.d, "free", 300);
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	REQUIRE(kmsg >= 0, "/dev/kmsg: %s", strerror(errno));
	lseek(kmsg, 0, SEEK_END);

	/* U into its zap of the mapping, then preempted there. */
	atomic_store(&s.go_u, 1);
	while (!atomic_load(&s.u_start))
		;
	while (cpu_ns(s.u_clock) - atomic_load(&s.u_start) < zap / 3 &&
	       !atomic_load(&s.u_done))
		;
	wake(s.wake_h);
	usleep(20000);
	if (atomic_load(&s.u_done))
		goto out;
	/* F's callback waits for the region's lock; then W behind it. */
	REQUIRE(pthread_create(&f, NULL, free_thread, NULL) == 0,
		"pthread_create");
	f_started = 1;
	for (int i = 0; i < 2000 && !atomic_load(&s.f_tid); i++)
		usleep(1000);
	if (wait_state(atomic_load(&s.f_tid), 'D', 2000))
		goto out;
	wake(s.wake_w);
	if (wait_state(atomic_load(&s.w_tid), 'D', 2000))
		goto out;
	ret = 0;
out:
	atomic_store(&s.stop_h, 1);
	if (ret) {
		/* Unforced: let everything finish in whatever order. */
		wake(s.wake_w);
	}
	if (f_started)
		pthread_join(f, NULL);
	pthread_join(u, NULL);
	pthread_join(w, NULL);
	pthread_join(hg, NULL);
	hook_disarm();
	write_text(FAIL_PUTS, "0");
	named = callback_handle(kmsg, s.r.h, &ordered);
	if (!ordered)
		ret = -1;
	close(kmsg);
	if (!f_started)
		CU_OK(cuMemFree(s.r.d));
	for (int i = 0; i < 2; i++) {
		close(s.wake_h[i]);
		close(s.wake_w[i]);
	}
	if (!ret) {
		CHECK(s.u_rc == 0, "the unpin returned %d", s.u_rc);
		CHECK(named == (long long)s.r.h,
		      "the callback's debug line names handle %lld, the pin's is %llu: it read the region after the unpin freed it",
		      named, (unsigned long long)s.r.h);
	}
	return ret;
}

int main(void)
{
	int tries;

	if (!hook_present() || access(FAIL_PUTS, W_OK) ||
	    read_word(PREEMPT, preempt0, sizeof(preempt0)) ||
	    sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		SKIP("needs nvsim's hook and fail_puts, 2 CPUs, and %s", PREEMPT);
		return test_done();
	}
	vm_cuda_init();
	fd = gdrdrv_open();
	if (gdrdrv_persistent(fd)) {
		SKIP("persistent pins have no callback");
		close(fd);
		return test_done();
	}
	if (read_word(RT_RUNTIME, rt0, sizeof(rt0)) ||
	    read_word(DBG, dbg0, sizeof(dbg0)))
		*rt0 = *dbg0 = '\0';
	atexit(restore);
	REQUIRE(write_text(PREEMPT, "full") == 0 &&
		write_text(RT_RUNTIME, "-1") == 0 && write_text(DBG, "1") == 0,
		"settings: %s", strerror(errno));
	if (!read_word(FAIR_CPU0, fair0, sizeof(fair0)))
		REQUIRE(write_text(FAIR_CPU0, "0") == 0, "%s: %s", FAIR_CPU0,
			strerror(errno));
	for (tries = 0; tries < 4 && race(); tries++)
		;
	if (tries == 4)
		SKIP("the order could not be forced here");
	close(fd);
	return test_done();
}
