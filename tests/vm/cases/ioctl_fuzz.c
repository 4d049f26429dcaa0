/* SPDX-License-Identifier: MIT */
/*
 * A seeded random-sequence fuzzer of gdrdrv (and of libgdrapi over it).
 *
 * It runs episodes until GDRMAP_FUZZ_SECS (default 20) have passed.  Each
 * episode is a fresh worker process: it allocates a few GPU buffers filled
 * with a pattern of their own, opens two /dev/gdrdrv files and a gdr_t,
 * and lets GDRMAP_FUZZ_THREADS threads (default 3) draw operations at
 * random on shared pins, mappings and buffers, racing each other: pins
 * (both ioctls, and the library's), mmap, reads and writes through the
 * mappings (raw and gdr_copy_*), munmap whole and in part, mremap,
 * mprotect, madvise, GET_INFO, GET_CB_FLAG, unpin with live mappings,
 * cuMemFree under live pins and mappings, fork children poking at what
 * they inherited, fds with pins handed to another process (inherited over
 * fork, or passed over a UNIX socket) and closed there and here in every
 * order (op_pass), and requests that must fail.  The worker then exits,
 * with or without cleaning up.
 *
 * Oracles:
 *  - every byte read through a mapping is the pinned buffer's pattern, or
 *    the read faults, and it may fault only once its pin or its memory
 *    was on the way out;
 *  - operations on live objects succeed, requests that are bad fail;
 *  - after every episode (and every process it handed an fd to) gdrdrv's
 *    and nvsim's pin counts, nvsim's memory, the write-combining PAT
 *    reservations and /proc/driver/gdrdrv/pinned are back to where they
 *    were; nvsim saw no put_pages that NVIDIA's driver would ignore,
 *    double-free on or read freed memory for; the kernel log has no
 *    warning.
 * With GDRMAP_FUZZ_FAILURES (1, the default) about half of the episodes
 * also meet NVIDIA's failures, as nvsim models them (sim/nvsim/README.md):
 * a put_pages that fails before the driver's lock (fail_puts), puts that
 * fail inside it (fail_puts_rm; a persistent one has dropped its GPU
 * reference, so gdrdrv gives the pin up and nvsim keeps it until a reset,
 * which the parent then does and which must succeed), and a get_pages that
 * fails after its callback was registered (fail_gets_late: that pin may
 * fail with EIO).  At most one of the first kind per episode: a pin failing
 * so twice is given up holding the GPU, which nothing can undo.
 * GDRMAP_FUZZ_SEED replays a run (each thread draws the same operations;
 * their interleaving differs); every failure prints the seed to replay.
 * Seeds that once failed are listed in tests/vm/fuzz-seeds and replayed
 * first (GDRMAP_FUZZ_REPLAY, 3 episodes each).
 */
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "fdpass.h"
#include "gdrapi.h"

#define NBUF		6
#define NPIN		24
#define OPS		400	/* per thread and episode, at most */
#define EPISODE_MS	3000

static long page_size;
static int persistent;

/* ---- the random source: splitmix64, one per thread ---- */

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? mix(s) % n : 0;
}

/* ---- the worker's shared state ---- */

enum { B_LIVE, B_DYING, B_DEAD };

struct fbuf {
	CUdeviceptr d;
	size_t size;
	unsigned seed;
	int state;
};

struct fpin {
	int used;
	int lib;		/* pinned through libgdrapi */
	int fd;			/* raw: the file */
	uint64_t h;		/* raw handle */
	gdr_mh_t mh;		/* library handle */
	int buf;
	int64_t off;		/* pinned (mapped) start - buf's d: < 0 when
				 * d is inside its first GPU page */
	uint64_t len;
	volatile uint8_t *map;
	size_t map_len;
	int writable;
	int readers;		/* threads using map now */
	int busy;		/* a thread changes map, or unpins */
	int dying;		/* unpin started */
	int unpinned;
};

static struct fbuf bufs[NBUF];
static struct fpin pins[NPIN];
static pthread_mutex_t st = PTHREAD_MUTEX_INITIALIZER;
static int fds[2];
static gdr_t g;
static struct timespec deadline;
static atomic_ulong n_ops, n_faults, n_forks, n_bad, n_passes;
static atomic_int failed;
static int report_fd = -1;	/* the worker's counts go there */
/* This episode's injected NVIDIA failures (set before the worker forks). */
static struct inject {
	int early, rm, late;
} inj;

#define NVSIM_PARAM	"/sys/module/nvsim/parameters/"
/* Held by the worker only: its holders see EOF when it has exited. */
static int worker_alive[2] = { -1, -1 };

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "FUZZ ORACLE: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	atomic_store(&failed, 1);
}

static int past(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec ||
	       (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

/* Whether pin p's bytes may be gone (unpinned, or memory freed); st held. */
static int going(const struct fpin *p)
{
	return p->dying || bufs[p->buf].state != B_LIVE;
}

/* ---- faults of the reading thread ---- */

static _Thread_local sigjmp_buf jmp;
static _Thread_local volatile int armed;

static void on_fault(int sig)
{
	if (!armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	armed = 0;
	siglongjmp(jmp, sig);
}

/* ---- operations; each picks its objects under st ---- */

/* A used pin slot, from a random start, that want() takes; -1 if none. */
__attribute__((noinline))
static int pick_pin(uint64_t *s, int (*want)(const struct fpin *))
{
	int i, start = (int)below(s, NPIN);

	for (int k = 0; k < NPIN; k++) {
		i = (start + k) % NPIN;
		if (pins[i].used && want(&pins[i]))
			return i;
	}
	return -1;
}

static int idle_pin(const struct fpin *p)
{
	return !p->busy && !p->unpinned;
}

static int mapped_idle(const struct fpin *p)
{
	return p->map && !p->busy && (!p->lib || !p->unpinned);
}

static int unmapped_idle(const struct fpin *p)
{
	return !p->map && !p->busy && !p->unpinned;
}

static void op_pin(uint64_t *s)
{
	int b = (int)below(s, NBUF), lib = below(s, 3) == 0, slot = -1, rc;
	uint64_t off, len, h = 0, start, end;
	gdr_mh_t mh = { 0 };
	int fd = fds[below(s, 2)];

	/* Raw pins are mapped, and mmap needs a 64 KiB aligned start. */
	if (bufs[b].d & (GPU_PAGE - 1))
		lib = 1;

	pthread_mutex_lock(&st);
	for (int i = 0; i < NPIN; i++)
		if (!pins[i].used) {
			slot = i;
			break;
		}
	if (slot < 0 || bufs[b].state != B_LIVE) {
		pthread_mutex_unlock(&st);
		return;
	}
	pins[slot] = (struct fpin) { .used = 1, .busy = 1, .buf = b };
	pthread_mutex_unlock(&st);

	if (lib) {
		/* Any part of the buffer, at any alignment. */
		off = below(s, bufs[b].size);
		len = 1 + below(s, bufs[b].size - off);
		rc = gdr_pin_buffer(g, bufs[b].d + off, len, 0, 0, &mh);
		/* The library pins (and maps) the GPU pages around it. */
		start = (bufs[b].d + off) & ~(GPU_PAGE - 1);
		end = (bufs[b].d + off + len + GPU_PAGE - 1) & ~(GPU_PAGE - 1);
		off = start - bufs[b].d;
		len = end - start;
	} else {
		/* Whole GPU pages: mmap needs an aligned start. */
		uint64_t pages = bufs[b].size / GPU_PAGE;

		off = below(s, pages) * GPU_PAGE;
		len = (1 + below(s, pages - off / GPU_PAGE)) * GPU_PAGE;
		if (below(s, 2)) {
			rc = gdrdrv_pin(fd, bufs[b].d + off, len, &h);
		} else {
			struct gdrdrv_pin_buffer_v2_params p = {
				.addr = bufs[b].d + off, .size = len,
			};

			rc = gioctl(fd, GDRDRV_IOC_PIN_BUFFER_V2, &p);
			h = p.handle;
		}
	}

	pthread_mutex_lock(&st);
	if (rc) {
		/* A get_pages failing late: EIO (the library's -1 and errno). */
		int late = inj.late && (rc == -EIO || (lib && errno == EIO));

		if (bufs[b].state == B_LIVE && !late)
			fail("pin of live buffer %d (+%#llx, %#llx, %s) failed: %d",
			     b, (unsigned long long)off, (unsigned long long)len,
			     lib ? "lib" : "raw", rc);
		pins[slot].used = 0;
	} else {
		pins[slot].lib = lib;
		pins[slot].fd = fd;
		pins[slot].h = h;
		pins[slot].mh = mh;
		pins[slot].off = (int64_t)off;
		pins[slot].len = len;
		pins[slot].busy = 0;
	}
	pthread_mutex_unlock(&st);
}

static void op_map(uint64_t *s)
{
	struct fpin *p;
	void *va = MAP_FAILED;
	size_t len;
	int i, rc;

	pthread_mutex_lock(&st);
	i = pick_pin(s, unmapped_idle);
	if (i < 0) {
		pthread_mutex_unlock(&st);
		return;
	}
	p = &pins[i];
	p->busy = 1;
	pthread_mutex_unlock(&st);

	if (p->lib) {
		len = p->len;
		rc = gdr_map(g, p->mh, &va, len);
	} else {
		len = (1 + below(s, p->len / page_size)) * page_size;
		va = gdrdrv_mmap(p->fd, p->h, len);
		rc = va == MAP_FAILED ? errno : 0;
	}

	pthread_mutex_lock(&st);
	if (rc) {
		if (!going(p))
			fail("map of live pin %d (%s) failed: %s", i,
			     p->lib ? "lib" : "raw", strerror(rc));
	} else {
		p->map = va;
		p->map_len = len;
		p->writable = 1;
	}
	p->busy = 0;
	pthread_mutex_unlock(&st);
}

/* Reads (or rewrites) a stretch of a mapping and checks every byte. */
static void op_access(uint64_t *s, int write)
{
	static _Thread_local uint8_t tmp[4096];
	volatile uint8_t *m;
	struct fpin *p;
	size_t at, n;
	unsigned seed;
	int64_t base, lo, hi;
	int i, sig, lib;
	gdr_mh_t mh;

	pthread_mutex_lock(&st);
	i = pick_pin(s, mapped_idle);
	if (i < 0 || (write && !pins[i].writable)) {
		pthread_mutex_unlock(&st);
		return;
	}
	p = &pins[i];
	p->readers++;
	m = p->map;
	lib = p->lib;
	mh = p->mh;
	seed = bufs[p->buf].seed;
	/*
	 * m[k] is byte base + k of the buffer; only the buffer's own bytes
	 * [0, size) have a known value: the stretch is cut to them.
	 */
	base = p->off;
	lo = base + (int64_t)below(s, p->map_len);
	hi = lo + 1 + (int64_t)below(s, sizeof(tmp));
	if (hi > base + (int64_t)p->map_len)
		hi = base + (int64_t)p->map_len;
	if (lo < 0)
		lo = 0;
	if (hi > (int64_t)bufs[p->buf].size)
		hi = (int64_t)bufs[p->buf].size;
	at = lo > hi ? 0 : (size_t)(lo - base);
	n = lo > hi ? 0 : (size_t)(hi - lo);
	pthread_mutex_unlock(&st);

	sig = sigsetjmp(jmp, 1);
	if (!sig) {
		armed = 1;
		if (write) {
			for (size_t k = 0; k < n; k++)
				tmp[k] = pattern_byte(base + at + k, seed);
			if (lib)
				gdr_copy_to_mapping(mh, (void *)(m + at), tmp, n);
			else
				for (size_t k = 0; k < n; k++)
					m[at + k] = tmp[k];
		} else if (lib) {
			memset(tmp, 0, n);
			if (n && gdr_copy_from_mapping(mh, tmp, (void *)(m + at), n))
				n = 0;
			for (size_t k = 0; k < n; k++)
				if (tmp[k] != pattern_byte(base + at + k, seed)) {
					armed = 0;
					fail("pin %d (lib): byte +%#zx is %#x, not %#x",
					     i, at + k, tmp[k],
					     pattern_byte(base + at + k, seed));
					break;
				}
		} else {
			for (size_t k = 0; k < n; k++) {
				uint8_t v = m[at + k];

				if (v != pattern_byte(base + at + k, seed)) {
					armed = 0;
					fail("pin %d: byte +%#zx of the mapping is %#x, not %#x",
					     i, at + k, v,
					     pattern_byte(base + at + k, seed));
					break;
				}
			}
		}
		armed = 0;
	}

	pthread_mutex_lock(&st);
	if (sig) {
		atomic_fetch_add(&n_faults, 1);
		if (!going(p))
			fail("%s through live pin %d faulted (%s)",
			     write ? "write" : "read", i, strsignal(sig));
	}
	p->readers--;
	pthread_mutex_unlock(&st);
}

/* Claims a mapped pin no thread uses: busy, readers 0. */
static int claim_mapped(uint64_t *s)
{
	int i;

	pthread_mutex_lock(&st);
	i = pick_pin(s, mapped_idle);
	if (i >= 0 && !pins[i].readers)
		pins[i].busy = 1;
	else
		i = -1;
	pthread_mutex_unlock(&st);
	return i;
}

static void release(struct fpin *p)
{
	pthread_mutex_lock(&st);
	p->busy = 0;
	if (p->unpinned && !p->map)
		p->used = 0;
	pthread_mutex_unlock(&st);
}

static void op_unmap(uint64_t *s)
{
	int i = claim_mapped(s), rc;
	struct fpin *p;

	if (i < 0)
		return;
	p = &pins[i];
	if (p->lib) {
		rc = gdr_unmap(g, p->mh, (void *)p->map, p->map_len);
	} else if (p->map_len > (size_t)page_size && below(s, 2)) {
		/* The tail only: the head stays mapped. */
		size_t keep = (1 + below(s, p->map_len / page_size - 1)) *
			      page_size;

		rc = munmap((void *)(p->map + keep), p->map_len - keep) ?
		     errno : 0;
		if (!rc)
			p->map_len = keep;
		if (rc)
			fail("partial munmap: %s", strerror(rc));
		release(p);
		return;
	} else {
		rc = munmap((void *)p->map, p->map_len) ? errno : 0;
	}
	if (rc)
		fail("unmap of pin %d: %s", i, strerror(rc));
	pthread_mutex_lock(&st);
	p->map = NULL;
	pthread_mutex_unlock(&st);
	release(p);
}

static void op_vma(uint64_t *s)
{
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
		MADV_DONTNEED, MADV_DONTFORK, MADV_DOFORK, MADV_DONTDUMP,
		MADV_DODUMP, MADV_FREE, MADV_REMOVE, MADV_COLD, MADV_PAGEOUT,
	};
	int i = claim_mapped(s);
	struct fpin *p;
	void *v;

	if (i < 0)
		return;
	p = &pins[i];
	if (p->lib) {
		release(p);
		return;
	}
	switch (below(s, 5)) {
	case 0:		/* any advice: no harm, and reads still right */
		madvise((void *)p->map, p->map_len,
			advice[below(s, sizeof(advice) / sizeof(advice[0]))]);
		break;
	case 1:		/* read-only and back; never executable */
		if (mprotect((void *)p->map, p->map_len, PROT_EXEC | PROT_READ) == 0)
			fail("mprotect(PROT_EXEC) of a mapping worked");
		if (below(s, 2)) {
			if (mprotect((void *)p->map, p->map_len, PROT_READ))
				fail("mprotect(PROT_READ): %s", strerror(errno));
			else
				p->writable = 0;
		} else if (mprotect((void *)p->map, p->map_len,
				    PROT_READ | PROT_WRITE)) {
			fail("mprotect(PROT_READ|PROT_WRITE): %s",
			     strerror(errno));
		} else {
			p->writable = 1;
		}
		break;
	case 2:		/* growing is refused */
		v = mremap((void *)p->map, p->map_len,
			   p->map_len + page_size, MREMAP_MAYMOVE);
		if (v != MAP_FAILED) {
			fail("mremap grew a mapping");
			p->map = v;
			p->map_len += page_size;
		}
		break;
	case 3:		/* shrinking works */
		if (p->map_len > (size_t)page_size) {
			v = mremap((void *)p->map, p->map_len,
				   p->map_len - page_size, 0);
			if (v == MAP_FAILED)
				fail("mremap shrink: %s", strerror(errno));
			else
				p->map_len -= page_size;
		}
		break;
	default:	/* moving: the mapping goes with it, or stays */
		v = mmap(NULL, p->map_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (v != MAP_FAILED) {
			void *w = mremap((void *)p->map, p->map_len, p->map_len,
					 MREMAP_MAYMOVE | MREMAP_FIXED, v);

			if (w == MAP_FAILED)
				munmap(v, p->map_len);
			else
				p->map = w;
		}
		break;
	}
	release(p);
}

static void op_unpin(uint64_t *s)
{
	struct fpin *p;
	int i, rc;

	pthread_mutex_lock(&st);
	i = pick_pin(s, idle_pin);
	/* The library refuses to unpin a mapped handle: unmap first. */
	if (i >= 0 && pins[i].lib && pins[i].map)
		i = -1;
	if (i >= 0) {
		pins[i].busy = 1;
		pins[i].dying = 1;
	}
	pthread_mutex_unlock(&st);
	if (i < 0)
		return;
	p = &pins[i];
	rc = p->lib ? gdr_unpin_buffer(g, p->mh) : -gdrdrv_unpin(p->fd, p->h);
	if (rc)
		fail("unpin of pin %d (%s): %s", i, p->lib ? "lib" : "raw",
		     strerror(rc));
	pthread_mutex_lock(&st);
	p->unpinned = 1;
	pthread_mutex_unlock(&st);
	release(p);
}

static void op_free(uint64_t *s)
{
	int b = (int)below(s, NBUF);
	CUresult rc;

	pthread_mutex_lock(&st);
	if (bufs[b].state != B_LIVE) {
		pthread_mutex_unlock(&st);
		return;
	}
	bufs[b].state = B_DYING;
	pthread_mutex_unlock(&st);
	rc = cuMemFree(bufs[b].d);
	if (rc != CUDA_SUCCESS)
		fail("cuMemFree of buffer %d: %d", b, rc);
	pthread_mutex_lock(&st);
	bufs[b].state = B_DEAD;
	pthread_mutex_unlock(&st);
}

static void op_query(uint64_t *s)
{
	struct gdrdrv_get_info_v2_params info;
	gdr_info_v2_t li;
	struct fpin *p;
	uint32_t flag;
	int i, rc;

	pthread_mutex_lock(&st);
	i = pick_pin(s, idle_pin);
	if (i >= 0)
		pins[i].busy = 1;
	pthread_mutex_unlock(&st);
	if (i < 0)
		return;
	p = &pins[i];
	if (p->lib) {
		rc = gdr_get_info_v2(g, p->mh, &li);
		if (rc)
			fail("gdr_get_info_v2 of pin %d: %d", i, rc);
	} else {
		rc = gdrdrv_info(p->fd, p->h, &info);
		if (rc)
			fail("GET_INFO_V2 of pin %d: %d", i, rc);
		else if (info.va != bufs[p->buf].d + (uint64_t)p->off ||
			 info.mapped_size != p->len)
			fail("GET_INFO_V2 of pin %d: %#llx+%#llx", i,
			     (unsigned long long)info.va,
			     (unsigned long long)info.mapped_size);
		rc = gdrdrv_cb_flag(p->fd, p->h, &flag);
		if (rc || (persistent && flag))
			fail("GET_CB_FLAG of pin %d: %d flag %u", i, rc, flag);
	}
	release(p);
}

/* Requests that must fail, whatever else is going on. */
static void op_bad(uint64_t *s)
{
	uint64_t h = (1ULL << 31) | mix(s), big = 1ULL << (33 + below(s, 31));
	int fd = fds[below(s, 2)], rc = 0;
	struct gdrdrv_get_info_v2_params info;
	static char host[GPU_PAGE] __attribute__((aligned(GPU_PAGE)));
	void *va;

	switch (below(s, 9)) {
	case 0:
		rc = gdrdrv_pin(fd, 0, GPU_PAGE, &h);
		break;
	case 1:
		rc = gdrdrv_pin(fd, bufs[below(s, NBUF)].d, 0, &h);
		break;
	case 2:
		rc = gdrdrv_pin(fd, bufs[below(s, NBUF)].d & ~(GPU_PAGE - 1),
				big, &h);
		break;
	case 3:
		rc = gdrdrv_pin(fd, (uintptr_t)host, sizeof(host), &h);
		break;
	case 4:
		rc = gdrdrv_unpin(fd, h);
		break;
	case 5:
		rc = gdrdrv_info(fd, h, &info);
		break;
	case 6: {
		struct gdrdrv_req_mapping_type_params r = {
			.handle = h, .mapping_type = 4 + (uint32_t)below(s, 1000),
		};

		rc = gioctl(fd, GDRDRV_IOC_REQ_MAPPING_TYPE, &r);
		break;
	}
	case 7:
		va = mmap(NULL, page_size, PROT_READ, MAP_SHARED, fd,
			  (off_t)((h & 0xfffffff) | 0x8000000) * page_size);
		rc = va == MAP_FAILED ? -errno : 0;
		if (!rc)
			munmap(va, page_size);
		break;
	default: {
		uint8_t arg[64];

		memset(arg, 0, sizeof(arg));
		rc = gioctl(fd, _IOWR(GDRDRV_IOC_MAGIC, 9 + below(s, 246),
				      uint64_t), arg);
		break;
	}
	}
	atomic_fetch_add(&n_bad, 1);
	if (!rc)
		fail("a bad request succeeded");
}

/* Library calls with bad arguments. */
static void op_lib_bad(uint64_t *s)
{
	gdr_mh_t mh = { .h = mix(s) | 1 };
	void *va;
	char c;

	if (!gdr_map(g, mh, &va, GPU_PAGE) ||
	    !gdr_copy_to_mapping(mh, &c, &c, 1) ||
	    !gdr_unpin_buffer(g, mh) ||
	    !gdr_pin_buffer(g, bufs[below(s, NBUF)].d, 0, 0, 0, &mh))
		fail("a bad library call succeeded");
	atomic_fetch_add(&n_bad, 1);
}

/* A child pokes at what it inherited: nothing of it may work. */
static void op_fork(uint64_t *s)
{
	volatile uint8_t *m = NULL;
	uint64_t h = 0;
	gdr_mh_t mh = { 0 };
	int i, st_, lib = 0;
	uint8_t byte = 0;
	pid_t pid;

	pthread_mutex_lock(&st);
	i = pick_pin(s, mapped_idle);
	if (i >= 0) {
		/* A reader: nobody unmaps it (and maps else there) meanwhile. */
		pins[i].readers++;
		m = pins[i].map;
		h = pins[i].h;
		mh = pins[i].mh;
		lib = pins[i].lib;
	}
	pthread_mutex_unlock(&st);

	pid = fork();
	if (pid == 0) {
		struct gdrdrv_get_version_params v;
		int bad = 0;

		alarm(20);
		if (gioctl(fds[0], GDRDRV_IOC_GET_VERSION, &v) != -EACCES)
			bad |= 1;
		if (gdrdrv_unpin(fds[1], h) != -EACCES)
			bad |= 2;
		if (m && read_faults(m, &byte) != SIGSEGV)
			bad |= 4;
		if (m && lib && gdr_copy_from_mapping(mh, &byte, (void *)m, 1) !=
			EINVAL)
			bad |= 8;
		if (gdr_unpin_buffer(g, mh) != EINVAL)
			bad |= 16;
		_exit(bad);
	}
	if (i >= 0) {
		pthread_mutex_lock(&st);
		pins[i].readers--;
		pthread_mutex_unlock(&st);
	}
	atomic_fetch_add(&n_forks, 1);
	if (pid < 0 || waitpid(pid, &st_, 0) != pid || !WIFEXITED(st_) ||
	    WEXITSTATUS(st_))
		fail("fork child: status %#x (1 ioctl, 2 unpin, 4 mapping, 8 lib copy, 16 lib unpin worked)",
		     st_);
}

/*
 * The holder's side of op_pass, in a child forked from the threaded
 * worker: plain system calls only.  It gets fd (inherited, or passed on
 * sock), checks that it may not use it, says so, and closes it when told,
 * or once the worker has exited.
 */
static void holder(int sock, int fd, int after_worker)
{
	struct gdrdrv_get_version_params v;
	char c;

	close(worker_alive[1]);
	alarm(60);
	if (fd < 0)
		fd = recv_fd_or_fail(sock);
	if (fd < 0)
		_exit(2);
	if (ioctl(fd, GDRDRV_IOC_GET_VERSION, &v) == 0 || errno != EACCES)
		_exit(3);
	if (write(sock, "h", 1) != 1)
		_exit(4);
	if (after_worker) {
		/* Until the worker (and every copy of its end) is gone. */
		while (read(worker_alive[0], &c, 1) > 0)
			;
	} else if (read(sock, &c, 1) != 1) {
		_exit(5);
	}
	close(fd);
	if (!after_worker && write(sock, "c", 1) != 1)
		_exit(6);
	_exit(0);
}

/*
 * An fd with pins of its own goes to another process, by fork or over a
 * UNIX socket, and the two close it in one of these orders:
 *   0  here first, then there: the last close in the other process,
 *      while this one lives on with the memory (callback-mode pins are
 *      left to their callbacks);
 *   1  there first, then here;
 *   2  here, the buffer freed, then there;
 *   3  here, and there only after this worker has exited;
 *   4  here with a mapping kept, there, then the munmap here is last.
 */
static void op_pass(uint64_t *s)
{
	int b = (int)below(s, NBUF), order = (int)below(s, 5);
	int byfork = (int)below(s, 2), sv[2], fd, st_, npins = 0;
	volatile uint8_t *map = MAP_FAILED;
	uint64_t pages, off, len, h;
	pid_t pid = -1;
	char c;

	pthread_mutex_lock(&st);
	if (bufs[b].state != B_LIVE || bufs[b].size < GPU_PAGE ||
	    (bufs[b].d & (GPU_PAGE - 1))) {
		pthread_mutex_unlock(&st);
		return;
	}
	pthread_mutex_unlock(&st);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return;
	if (!byfork) {
		/* Forked before the fd exists: it gets it by passing only. */
		pid = fork();
		if (pid == 0) {
			close(sv[0]);
			holder(sv[1], -1, order == 3);
		}
	}
	fd = open(GDRDRV_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fail("open %s: %s", GDRDRV_DEVICE_PATH, strerror(errno));
		goto out;
	}
	pages = bufs[b].size / GPU_PAGE;
	for (int k = 0; k < 2; k++) {
		off = below(s, pages) * GPU_PAGE;
		len = (1 + below(s, pages - off / GPU_PAGE)) * GPU_PAGE;
		if (gdrdrv_pin(fd, bufs[b].d + off, len, &h) == 0) {
			npins++;
			if (map == MAP_FAILED && (order == 4 || below(s, 2))) {
				map = gdrdrv_mmap(fd, h, page_size);
				if (map != MAP_FAILED && order != 4) {
					munmap((void *)map, page_size);
					map = MAP_FAILED;
				}
			}
		}
	}
	(void)npins;	/* pins of a buffer freed meanwhile may fail */
	if (byfork) {
		pid = fork();
		if (pid == 0) {
			close(sv[0]);
			holder(sv[1], fd, order == 3);
		}
	} else if (pid > 0) {
		send_fd(sv[0], fd);
	}
	if (pid < 0 || read(sv[0], &c, 1) != 1 || c != 'h') {
		fail("fd passing (%s): the holder did not get the fd, or could use it",
		     byfork ? "fork" : "socket");
		close(fd);
		goto out;
	}
	atomic_fetch_add(&n_passes, 1);

	if (order == 1) {
		if (write(sv[0], "x", 1) != 1 || read(sv[0], &c, 1) != 1)
			fail("fd passing: the holder did not close");
		close(fd);
	} else {
		close(fd);
		if (order == 2) {
			pthread_mutex_lock(&st);
			if (bufs[b].state == B_LIVE) {
				bufs[b].state = B_DYING;
				pthread_mutex_unlock(&st);
				if (cuMemFree(bufs[b].d) != CUDA_SUCCESS)
					fail("cuMemFree of buffer %d", b);
				pthread_mutex_lock(&st);
				bufs[b].state = B_DEAD;
			}
			pthread_mutex_unlock(&st);
		}
		if (order != 3 &&
		    (write(sv[0], "x", 1) != 1 || read(sv[0], &c, 1) != 1))
			fail("fd passing: the holder did not close");
	}
	if (map != MAP_FAILED)
		munmap((void *)map, page_size);
out:
	close(sv[0]);
	close(sv[1]);
	/* A holder of order 3 lives on; the parent waits for it at the end. */
	if (pid > 0 && order != 3 &&
	    (waitpid(pid, &st_, 0) != pid || !WIFEXITED(st_) ||
	     WEXITSTATUS(st_)))
		fail("fd holder: status %#x", st_);
}

static void *thread_main(void *arg)
{
	uint64_t s = *(uint64_t *)arg;

	for (int k = 0; k < OPS && !past(&deadline) &&
	     !atomic_load(&failed); k++) {
		unsigned w = (unsigned)below(&s, 100);

		if (w < 12)
			op_pin(&s);
		else if (w < 22)
			op_map(&s);
		else if (w < 42)
			op_access(&s, 0);
		else if (w < 50)
			op_access(&s, 1);
		else if (w < 58)
			op_unmap(&s);
		else if (w < 66)
			op_vma(&s);
		else if (w < 74)
			op_unpin(&s);
		else if (w < 77)
			op_free(&s);
		else if (w < 85)
			op_query(&s);
		else if (w < 92)
			op_bad(&s);
		else if (w < 96)
			op_lib_bad(&s);
		else if (w < 98)
			op_pass(&s);
		else
			op_fork(&s);
		atomic_fetch_add(&n_ops, 1);
	}
	return NULL;
}

/* The worker: one episode, in its own process.  Exit status 0 or 1. */
static int episode(uint64_t seed, int nthreads)
{
	struct sigaction sa = { .sa_handler = on_fault };
	uint64_t s = seed, tseed[8];
	pthread_t t[8];
	struct timespec now;
	FILE *out;
	size_t total;
	CUdevice dev;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	REQUIRE(pipe2(worker_alive, O_CLOEXEC) == 0, "pipe2: %s",
		strerror(errno));
	vm_cuda_init();
	CU_OK(cuDeviceGet(&dev, 0));
	CU_OK(cuDeviceTotalMem(&total, dev));
	for (int b = 0; b < NBUF; b++) {
		/* Mostly whole GPU pages; some sub-allocated small ones. */
		bufs[b].size = below(&s, 4) ? (1 + below(&s, 16)) * GPU_PAGE :
				1 + below(&s, GPU_PAGE / 2);
		if (bufs[b].size * NBUF > total / 4)
			bufs[b].size = GPU_PAGE;
		bufs[b].seed = (unsigned)mix(&s);
		bufs[b].d = vm_alloc(bufs[b].size);
		gpu_fill(bufs[b].d, bufs[b].size, bufs[b].seed);
	}
	fds[0] = gdrdrv_open();
	fds[1] = gdrdrv_open();
	g = gdr_open();
	REQUIRE(g, "gdr_open: %s", gdrmap_last_error());

	clock_gettime(CLOCK_MONOTONIC, &now);
	deadline = now;
	deadline.tv_sec += EPISODE_MS / 1000;
	for (int i = 0; i < nthreads; i++) {
		tseed[i] = mix(&s);
		REQUIRE(pthread_create(&t[i], NULL, thread_main, &tseed[i]) == 0,
			"pthread_create");
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);

	/* Leave as a careful program would, or as a crashing one. */
	if (below(&s, 2)) {
		for (int i = 0; i < NPIN; i++) {
			struct fpin *p = &pins[i];

			if (!p->used)
				continue;
			if (p->map && (p->lib ? gdr_unmap(g, p->mh, (void *)p->map,
							  p->map_len) :
				       munmap((void *)p->map, p->map_len)))
				fail("cleanup unmap of pin %d", i);
			if (!p->unpinned &&
			    (p->lib ? gdr_unpin_buffer(g, p->mh) :
			     gdrdrv_unpin(p->fd, p->h)))
				fail("cleanup unpin of pin %d", i);
		}
		if (gdr_close(g))
			fail("gdr_close");
		close(fds[0]);
		close(fds[1]);
		for (int b = 0; b < NBUF; b++)
			if (bufs[b].state == B_LIVE && cuMemFree(bufs[b].d))
				fail("cleanup cuMemFree of buffer %d", b);
	}
	out = fdopen(report_fd, "w");
	if (out) {
		fprintf(out, "%lu %lu %lu %lu %lu\n", atomic_load(&n_ops),
			atomic_load(&n_faults), atomic_load(&n_forks),
			atomic_load(&n_bad), atomic_load(&n_passes));
		fclose(out);
	}
	return atomic_load(&failed) || check_failed;
}

/* ---- the parent: episodes and the oracles between them ---- */

struct level {
	long gdrdrv, pins, pages, used, allocs, wc;
	long foreign, doubles, uaf;	/* nvsim: puts the driver would botch */
};

static long wc_reservations(void)
{
	FILE *f = fopen("/sys/kernel/debug/x86/pat_memtype_list", "r");
	char line[256];
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "write-combining") != NULL;
	fclose(f);
	return n;
}

static struct level level_now(void)
{
	return (struct level) {
		.gdrdrv = gdrdrv_refcount(),
		.pins = nvsim_count("outstanding_pins"),
		.pages = nvsim_count("pinned_pages"),
		.used = nvsim_count("used_pages"),
		.allocs = nvsim_count("allocations"),
		.wc = wc_reservations(),
		.foreign = nvsim_stat("foreign_puts"),
		.doubles = nvsim_stat("double_frees"),
		.uaf = nvsim_stat("use_after_free"),
	};
}

/* New kernel log lines that a clean run never has; -1 unreadable. */
static int kmsg_fd = -1;

/* The lines an injected failure makes: gdrdrv's and nvsim's own. */
static int expected_failure(const char *rec)
{
	return strstr(rec, "keeping the pin until") ||
	       strstr(rec, "giving the pin up") ||
	       strstr(rec, "(fail_puts_rm)") || strstr(rec, "(fail_gets_late)");
}

static int kernel_complained(int injected)
{
	char rec[2048];
	ssize_t n;
	int bad = 0;

	if (kmsg_fd < 0)
		return 0;
	for (;;) {
		errno = 0;
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)	/* records were overwritten */
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (strstr(rec, "WARNING:") || strstr(rec, "BUG:") ||
		    strstr(rec, "Oops") || strstr(rec, "Call Trace") ||
		    strstr(rec, "refcount_t") ||
		    (strstr(rec, "put_pages") &&
		     !(injected && expected_failure(rec)))) {
			fprintf(stderr, "kernel: %s", strchr(rec, ';') ?
				strchr(rec, ';') + 1 : rec);
			bad = 1;
		}
	}
	return bad;
}

static unsigned long tot_ops, tot_faults, tot_forks, tot_bad, tot_passes;
static unsigned long episodes, tot_resets;
static int failures_on = 1;

static void set_nvsim(const char *name, int v)
{
	char path[128], val[16];

	snprintf(path, sizeof(path), NVSIM_PARAM "%s", name);
	snprintf(val, sizeof(val), "%d", v);
	if (write_text(path, val))
		fail("%s: %s", path, strerror(errno));
}

/* Arms this episode's failures, from its seed; none half the time. */
static void inject_arm(uint64_t seed)
{
	uint64_t s = seed ^ 0x6661696c75726573ULL;

	memset(&inj, 0, sizeof(inj));
	if (failures_on && below(&s, 2)) {
		inj.early = (int)below(&s, 2);
		inj.rm = (int)below(&s, 3);
		inj.late = (int)below(&s, 2);
	}
	set_nvsim("fail_puts", inj.early);
	set_nvsim("fail_puts_rm", inj.rm);
	set_nvsim("fail_gets_late", inj.late);
}

/*
 * Disarms what the episode did not use, and resets GPU 0 if a failed
 * persistent put left a pin there (nothing else releases it): 0, or -1
 * if the reset was refused, which means something still holds the GPU.
 */
static int inject_disarm(void)
{
	set_nvsim("fail_puts", 0);
	set_nvsim("fail_puts_rm", 0);
	set_nvsim("fail_gets_late", 0);
	if (nvsim_count("abandoned_pins") <= 0)
		return 0;
	tot_resets++;
	return nvsim_reset(0) ? -1 : 0;
}

/*
 * Waits until every process that holds fd (the worker and the holders of
 * its fds) has exited: their end of the pipe is closed.  0: they have.
 */
static int wait_holders(int fd, int secs)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c;

	while (poll(&p, 1, secs * 1000) == 1)
		if (read(fd, &c, 1) <= 0)
			return 0;
	return -1;
}

static int run_episode(uint64_t seed, int nthreads, const struct level *base)
{
	struct level now;
	int pfd[2], held[2], st_, ok = 1;
	unsigned long o = 0, f = 0, k = 0, b = 0, np = 0;
	char line[128];
	pid_t pid;
	FILE *in;

	REQUIRE(pipe(pfd) == 0 && pipe(held) == 0, "pipe");
	inject_arm(seed);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		close(held[0]);
		report_fd = pfd[1];
		_exit(episode(seed, nthreads));
	}
	close(pfd[1]);
	close(held[1]);
	in = fdopen(pfd[0], "r");
	if (in && fgets(line, sizeof(line), in))
		sscanf(line, "%lu %lu %lu %lu %lu", &o, &f, &k, &b, &np);
	if (in)
		fclose(in);
	REQUIRE(waitpid(pid, &st_, 0) == pid, "waitpid");
	if (wait_holders(held[0], 90)) {
		fprintf(stderr, "episode seed %#llx: a process it passed an fd to did not exit\n",
			(unsigned long long)seed);
		ok = 0;
	}
	close(held[0]);
	/* Holders that outlived the worker are ours (a subreaper). */
	while (waitpid(-1, &st_, 0) > 0) {
		if (!WIFEXITED(st_) || WEXITSTATUS(st_)) {
			fprintf(stderr, "episode seed %#llx: a holder of a passed fd: status %#x\n",
				(unsigned long long)seed, st_);
			ok = 0;
		}
	}
	if (inject_disarm()) {
		fprintf(stderr, "episode seed %#llx: GPU 0 could not be reset after a given-up pin (%ld GPU references held)\n",
			(unsigned long long)seed, nvsim_count("gpu_refs"));
		ok = 0;
	}
	episodes++;
	tot_ops += o;
	tot_faults += f;
	tot_forks += k;
	tot_bad += b;
	tot_passes += np;
	if (!WIFEXITED(st_) || WEXITSTATUS(st_)) {
		fprintf(stderr, "episode seed %#llx: worker %s %d\n",
			(unsigned long long)seed,
			WIFEXITED(st_) ? "exited" : "killed by signal",
			WIFEXITED(st_) ? WEXITSTATUS(st_) : WTERMSIG(st_));
		ok = 0;
	}
	now = level_now();
	if (memcmp(&now, base, sizeof(now))) {
		fprintf(stderr,
			"episode seed %#llx left: gdrdrv pins %ld (was %ld), nvsim pins %ld (%ld), pinned pages %ld (%ld), used pages %ld (%ld), allocations %ld (%ld), WC reservations %ld (%ld); nvsim saw puts NVIDIA would ignore %ld (%ld), double-free on %ld (%ld), read freed memory for %ld (%ld)\n",
			(unsigned long long)seed, now.gdrdrv, base->gdrdrv,
			now.pins, base->pins, now.pages, base->pages, now.used,
			base->used, now.allocs, base->allocs, now.wc, base->wc,
			now.foreign, base->foreign, now.doubles, base->doubles,
			now.uaf, base->uaf);
		ok = 0;
	}
	{
		unsigned long long bytes;
		int n, left;

		if (!pinned_line(pid, &bytes, &n, &left)) {
			fprintf(stderr, "episode seed %#llx: its process is still listed as pinning\n",
				(unsigned long long)seed);
			ok = 0;
		}
	}
	if (kernel_complained(inj.early || inj.rm || inj.late)) {
		fprintf(stderr, "episode seed %#llx: the kernel complained\n",
			(unsigned long long)seed);
		ok = 0;
	}
	CHECK(ok, "episode seed %#llx failed: replay with GDRMAP_FUZZ_SEED",
	      (unsigned long long)seed);
	return ok;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* Seeds listed (one per line, # comments) in GDRMAP_FUZZ_REPLAY's file. */
static void replay_listed(int nthreads, const struct level *base)
{
	const char *path = getenv("GDRMAP_FUZZ_REPLAY");
	char line[256];
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		uint64_t seed, s;

		if (sscanf(line, "%" SCNx64, &seed) != 1 || line[0] == '#')
			continue;
		s = seed;
		printf("fuzz: replaying listed seed %#" PRIx64 "\n", seed);
		for (int e = 0; e < 3; e++)
			run_episode(mix(&s), nthreads, base);
	}
	fclose(f);
}

int main(void)
{
	uint64_t seed, s, urandom = 0;
	long failed0, rm0, late0;
	struct level base;
	struct timespec end;
	int nthreads, secs;
	FILE *r;

	page_size = sysconf(_SC_PAGESIZE);
	/* Fd holders that outlive their episode's worker come back here. */
	REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "PR_SET_CHILD_SUBREAPER: %s",
		strerror(errno));
	r = fopen("/dev/urandom", "r");
	if (r) {
		if (fread(&urandom, sizeof(urandom), 1, r) != 1)
			urandom = (uint64_t)time(NULL);
		fclose(r);
	}
	seed = env_u64("GDRMAP_FUZZ_SEED", urandom);
	secs = (int)env_u64("GDRMAP_FUZZ_SECS", 20);
	nthreads = (int)env_u64("GDRMAP_FUZZ_THREADS", 3);
	failures_on = (int)env_u64("GDRMAP_FUZZ_FAILURES", 1) &&
		      !access(NVSIM_PARAM "fail_puts_rm", W_OK);
	if (nthreads < 1 || nthreads > 8)
		nthreads = 3;
	{
		int fd = gdrdrv_open();

		persistent = gdrdrv_persistent(fd);
		close(fd);
	}
	printf("fuzz: seed %#llx, %d s, %d threads, %s mode, NVIDIA's failures %s (replay: GDRMAP_FUZZ_SEED=%#llx)\n",
	       (unsigned long long)seed, secs, nthreads,
	       persistent ? "persistent" : "callback",
	       failures_on ? "on" : "off", (unsigned long long)seed);
	fflush(stdout);

	failed0 = nvsim_stat("failed_puts");
	rm0 = nvsim_stat("rm_failed_puts");
	late0 = nvsim_stat("late_failed_gets");
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
	base = level_now();

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += secs;
	replay_listed(nthreads, &base);
	s = seed;
	while (!past(&end))
		run_episode(mix(&s), nthreads, &base);

	printf("fuzz: seed %#llx: %lu episodes, %lu operations, %lu faults (allowed), %lu fork children, %lu fds handed to another process, %lu bad requests refused\n",
	       (unsigned long long)seed, episodes, tot_ops, tot_faults,
	       tot_forks, tot_passes, tot_bad);
	printf("fuzz: NVIDIA's failures met: %ld puts before the driver's lock, %ld inside it, %ld gets late; %lu GPU resets for given-up pins\n",
	       nvsim_stat("failed_puts") - failed0,
	       nvsim_stat("rm_failed_puts") - rm0,
	       nvsim_stat("late_failed_gets") - late0, tot_resets);
	return test_done();
}
