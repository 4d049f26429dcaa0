// SPDX-License-Identifier: MIT
/* gdrmap_copy_*'s paths for the measuring commands (paths.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

/*
 * How many copies path_settle makes at most: the library measures a size
 * class with its first few copies; a choice not made after this many
 * would be a library that never decides, timed as it is.
 */
#define SETTLE_MAX	64
/* Bytes checked on each side of a verified range. */
#define GUARD		64

static const char *const names[NPATHS] = {
	"auto", "mapping", "threads", "dma", "staged",
};

const char *path_name(int path)
{
	return path >= 0 && path < NPATHS ? names[path] : "-";
}

const char *path_chosen_name(int path)
{
	return path == GDRMAP_COPY_PATH_AUTO ? "measuring" : path_name(path);
}

bool paths_available(void)
{
	return gdrmap_copy_to_mapping && gdrmap_copy_from_mapping &&
	       gdrmap_copy_to_mapping_via && gdrmap_copy_from_mapping_via &&
	       gdrmap_copy_path;
}

int path_copy(gdr_mh_t mh, bool write, int path, void *map, void *host,
	      size_t n)
{
	int e;

	if (write)
		e = path == GDRMAP_COPY_PATH_AUTO ?
		    gdrmap_copy_to_mapping(mh, map, host, n) :
		    gdrmap_copy_to_mapping_via(mh, map, host, n, path);
	else
		e = path == GDRMAP_COPY_PATH_AUTO ?
		    gdrmap_copy_from_mapping(mh, host, map, n) :
		    gdrmap_copy_from_mapping_via(mh, host, map, n, path);
	return e == EOPNOTSUPP || e == -EOPNOTSUPP ? PATH_NA : e;
}

int path_chosen(gdr_mh_t mh, bool write, const void *host, size_t n)
{
	int p = PATH_UNKNOWN, e;

	e = gdrmap_copy_path_host ?
	    gdrmap_copy_path_host(mh, write, host, n, &p) :
	    gdrmap_copy_path(mh, write, n, &p);
	if (e || p < 0 || p >= NPATHS)
		return PATH_UNKNOWN;
	return p;
}

int path_settle(gdr_mh_t mh, bool write, void *map, void *host, size_t n)
{
	int i, e;

	for (i = 0; i < SETTLE_MAX; i++) {
		if (path_chosen(mh, write, host, n) != GDRMAP_COPY_PATH_AUTO)
			return 0;
		e = path_copy(mh, write, GDRMAP_COPY_PATH_AUTO, map, host, n);
		if (e)
			return e;
	}
	return 0;
}

int path_settled(gdr_mh_t mh, bool write, void *map, void *host, size_t n)
{
	if (path_settle(mh, write, map, host, n))
		return PATH_UNKNOWN;
	return path_chosen(mh, write, host, n);
}

/* The smallest read the library splits (its GDR_THREADS_MIN_READ): a
 * smaller one never starts the helpers. */
#define SPLIT_MIN	2048

void paths_start_helpers(struct session *s, struct gpubuf *b, size_t off,
			 size_t len)
{
	size_t n = len < 2 * SPLIT_MIN ? len : 2 * SPLIT_MIN;
	char buf[2 * SPLIT_MIN];
	cpu_set_t set;
	int i;

	if (s->cpus.n < 2 || n < SPLIT_MIN || !paths_available())
		return;
	CPU_ZERO(&set);
	for (i = 0; i < s->cpus.n; i++)
		CPU_SET(s->cpus.cpu[i], &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		return;
	/* EOPNOTSUPP here only says there are no helpers: the threads
	 * path then shows n/a. */
	path_copy(b->mh, false, GDRMAP_COPY_PATH_THREADS, b->cpu + off, buf,
		  n);
	pin_thread(s->cpu);
}

/* splitmix64: fast enough for 64 MiB checks, and no run of zeros. */
static void fill_random(unsigned char *p, size_t n, uint64_t *state)
{
	size_t i;
	uint64_t z = 0;

	for (i = 0; i < n; i++) {
		if (!(i & 7)) {
			z = (*state += 0x9e3779b97f4a7c15ULL);
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			z ^= z >> 31;
		}
		p[i] = (unsigned char)(z >> (8 * (i & 7)));
	}
}

/* The bytes of a checked range: guards and middle, host and GPU views. */
struct span {
	size_t before, after;	/* guard bytes on each side */
	unsigned char *src;	/* n random bytes: what is copied */
	unsigned char *old;	/* before + n + after: the destination's
				 * poisoned contents before the copy */
	unsigned char *got;	/* the destination after it */
};

/* old: random guards, and the middle the complement of src, so that every
 * byte the copy should write differs from what was there. */
static void poison(struct span *sp, size_t n, uint64_t *seed)
{
	size_t i;

	fill_random(sp->src, n, seed);
	fill_random(sp->old, sp->before + n + sp->after, seed);
	for (i = 0; i < n; i++)
		sp->old[sp->before + i] = (unsigned char)~sp->src[i];
}

static int compare(const struct span *sp, size_t n, size_t off, bool write,
		   int path, char *err, size_t errlen)
{
	const char *call = write ? "gdrmap_copy_to_mapping" :
				   "gdrmap_copy_from_mapping";
	long bad = first_diff(sp->src, sp->got + sp->before, n);
	const char *where = "";

	if (bad < 0) {
		bad = first_diff(sp->old, sp->got, sp->before);
		where = " before the range";
	}
	if (bad < 0) {
		bad = first_diff(sp->old + sp->before + n,
				 sp->got + sp->before + n, sp->after);
		where = " after the range";
	}
	if (bad < 0)
		return 0;
	snprintf(err, errlen,
		 "wrong data: %s by the %s path, %zu bytes at offset %zu, %s: byte %ld%s differs",
		 call, path_name(path), n, off,
		 write ? "read back with cuMemcpyDtoH" :
			 "written by cuMemcpyHtoD",
		 bad, where);
	return EXIT_WRONG;
}

int path_verify(struct session *s, struct gpubuf *b, size_t off, size_t n,
		bool write, int path, void *host, char *err, size_t errlen)
{
	static uint64_t seed = 20261127;
	const struct tcu *cu = s->cu;
	unsigned char *hbuf = host, *own = NULL;
	struct span sp = { 0 };
	size_t all, hoff;
	CUresult res;
	int ret = EXIT_CANNOT, e;

	/* GPU guards lie in the allocation, pinned or not; host guards in
	 * a buffer whose middle has the offset's alignment, as the timed
	 * copies' host buffer has. */
	sp.before = write ? (off < GUARD ? off : GUARD) : GUARD;
	sp.after = write ? b->size - off - n : GUARD;
	if (sp.after > GUARD)
		sp.after = GUARD;
	all = sp.before + n + sp.after;
	hoff = 4096 + off % 4096 - sp.before;
	sp.src = malloc(n);
	sp.old = malloc(all);
	sp.got = malloc(all);
	if (!hbuf && !posix_memalign((void **)&own, 4096, hoff + all))
		hbuf = own;
	if (!sp.src || !sp.old || !sp.got || !hbuf) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	poison(&sp, n, &seed);
	if (write) {
		memcpy(hbuf + hoff + sp.before, sp.src, n);
		res = cu->MemcpyHtoD(b->base + off - sp.before, sp.old, all);
	} else {
		memcpy(hbuf + hoff, sp.old, all);
		res = cu->MemcpyHtoD(b->base + off, sp.src, n);
	}
	if (res == CUDA_SUCCESS)
		res = cu->CtxSynchronize();
	if (res != CUDA_SUCCESS) {
		snprintf(err, errlen, "cuMemcpyHtoD failed (%d)", res);
		goto out;
	}
	e = path_copy(b->mh, write, path, b->cpu + off, hbuf + hoff + sp.before,
		      n);
	if (e == PATH_NA) {
		ret = PATH_NA;
		goto out;
	}
	if (e) {
		snprintf(err, errlen, "%s by the %s path: %s",
			 write ? "gdrmap_copy_to_mapping" :
				 "gdrmap_copy_from_mapping",
			 path_name(path), strerror(e < 0 ? -e : e));
		goto out;
	}
	if (write) {
		res = cu->MemcpyDtoH(sp.got, b->base + off - sp.before, all);
		if (res != CUDA_SUCCESS) {
			snprintf(err, errlen, "cuMemcpyDtoH failed (%d)", res);
			goto out;
		}
	} else {
		memcpy(sp.got, hbuf + hoff, all);
	}
	ret = compare(&sp, n, off, write, path, err, errlen);
out:
	free(own);
	free(sp.src);
	free(sp.old);
	free(sp.got);
	return ret;
}
