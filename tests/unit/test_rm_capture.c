// SPDX-License-Identifier: MIT
/*
 * rm_capture_run, the mechanism under the rm backend's export
 * (lib/backends/rm_capture.c), on a stand-in for libcuda: libgdrtest_capture.so
 * (capture_lib.c), dlopen'ed RTLD_LOCAL, which calls ioctl() through its
 * own import.  This program answers the stand-in's nvidia.ko requests
 * itself: it defines ioctl (exported, -rdynamic), answers requests on
 * one fd of its own and passes everything else to libc's.  The library
 * under test never does that; only the test.
 *
 * While the main thread runs thousands of windows, four threads call
 * through the stand-in at the same time (exports of their own handles,
 * FIONREAD on a pipe) and make the same calls directly.  Checked:
 *  - each window captures exactly its own thread's export: the handles,
 *    offsets, sizes and client it issued, nothing of the other threads';
 *  - every other call, inside a window or not, gets the right answer;
 *  - the import slot holds the forwarder during a window and its own
 *    value again after each one (read through the same dynamic-section
 *    walk the library does);
 *  - an export of more than 128 objects (several ioctls, index,
 *    numObjects, totalObjects) is captured whole, in order;
 *  - the NV_ESC_IOCTL_XFER_CMD form is captured too;
 *  - an export argument of another size is refused, both sizes named;
 *    so are two clients in one window;
 *  - an export nvidia.ko failed, or answered with an RM error, is not
 *    captured;
 *  - the same on the stand-in bound lazily, whose slot still points at
 *    its own PLT when the first window opens.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "check.h"
#include "backends/rm_abi.h"
#include "backends/rm_os.h"

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT  R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT  R_AARCH64_GLOB_DAT
#endif

#define WORKERS		4
#define WINDOWS		3000
#define MANY		300	/* objects of a multi-part export */
#define BAD_CLIENT	0xdead0001u	/* nvidia.ko fails the ioctl */
#define ERR_CLIENT	0xdead0002u	/* RM answers an error status */

typedef int (*export_fn)(int, uint32_t, const uint32_t *, const uint64_t *,
			 const uint64_t *, uint32_t, size_t, int);
typedef int (*fionread_fn)(int, int *);
typedef int (*ioctl_fn)(int, unsigned long, ...);

static int magic_fd = -1;	/* the fd this program plays nvidia.ko on */
static ioctl_fn libc_ioctl;
static atomic_long answered;

/* Answer an export argument as nvidia.ko would, or fail it. */
static int answer_export(void *arg, size_t size)
{
	struct nv_export_dmabuf *p = arg;

	atomic_fetch_add(&answered, 1);
	if (size < sizeof(*p))	/* another layout: nothing to fill */
		return 0;
	if (p->hClient == BAD_CLIENT) {
		errno = EINVAL;
		return -1;
	}
	p->status = p->hClient == ERR_CLIENT ? NV_ERR_INVALID_ARGUMENT : NV_OK;
	p->fd = -1;
	return 0;
}

/* The process's ioctl: the stand-in's requests on magic_fd are answered
 * here, every other call goes to libc's. */
int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd == magic_fd && fd >= 0 && _IOC_TYPE(req) == NV_IOCTL_MAGIC) {
		if (_IOC_NR(req) == NV_ESC_EXPORT_TO_DMABUF_FD)
			return answer_export(arg, _IOC_SIZE(req));
		if (_IOC_NR(req) == NV_ESC_IOCTL_XFER_CMD &&
		    _IOC_SIZE(req) == sizeof(struct nv_ioctl_xfer)) {
			struct nv_ioctl_xfer *x = arg;

			if (x->cmd == NV_ESC_EXPORT_TO_DMABUF_FD)
				return answer_export((void *)(uintptr_t)x->ptr,
						     x->size);
		}
		errno = EINVAL;
		return -1;
	}
	return libc_ioctl(fd, req, arg);
}

/* --- the stand-in --- */

struct standin {
	void *lib;
	export_fn export;
	fionread_fn fionread;
	_Atomic uintptr_t *slot;	/* its ioctl import */
	uintptr_t orig;			/* what the slot held before */
};

static uintptr_t dyn_ptr(const struct link_map *lm, ElfW(Addr) v)
{
	return v < lm->l_addr ? lm->l_addr + v : v;
}

/* The stand-in's ioctl slot, by the walk rm_capture.c does. */
static _Atomic uintptr_t *ioctl_slot(void *lib)
{
	const ElfW(Rela) *tab[2] = { NULL, NULL };
	size_t sz[2] = { 0, 0 }, i, k;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	struct link_map *lm = NULL;
	const ElfW(Dyn) *d;

	if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) || !lm)
		return NULL;
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_JMPREL)
			tab[0] = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
		else if (d->d_tag == DT_PLTRELSZ)
			sz[0] = d->d_un.d_val;
		else if (d->d_tag == DT_RELA)
			tab[1] = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
		else if (d->d_tag == DT_RELASZ)
			sz[1] = d->d_un.d_val;
		else if (d->d_tag == DT_SYMTAB)
			symtab = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
		else if (d->d_tag == DT_STRTAB)
			strtab = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
	}
	for (k = 0; k < 2 && symtab && strtab; k++) {
		for (i = 0; tab[k] && i < sz[k] / sizeof(*tab[k]); i++) {
			unsigned long type = ELF64_R_TYPE(tab[k][i].r_info);
			unsigned long sym = ELF64_R_SYM(tab[k][i].r_info);

			if ((type == R_JUMP_SLOT || type == R_GLOB_DAT) &&
			    sym && !strcmp(strtab + symtab[sym].st_name,
					   "ioctl"))
				return (_Atomic uintptr_t *)(lm->l_addr +
							tab[k][i].r_offset);
		}
	}
	return NULL;
}

static int load(struct standin *s, const char *dir, const char *name,
		int mode)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	memset(s, 0, sizeof(*s));
	s->lib = dlopen(path, mode | RTLD_LOCAL);
	CHECK(s->lib != NULL, "dlopen %s: %s", path, dlerror());
	if (!s->lib)
		return -1;
	s->export = (export_fn)dlsym(s->lib, "gdrtest_export");
	s->fionread = (fionread_fn)dlsym(s->lib, "gdrtest_fionread");
	s->slot = ioctl_slot(s->lib);
	CHECK(s->export && s->fionread && s->slot,
	      "%s: its functions and its ioctl slot", name);
	if (!s->slot)
		return -1;
	s->orig = atomic_load(s->slot);
	CHECK(dlsym(RTLD_DEFAULT, "gdrtest_export") == NULL,
	      "%s is not in the global namespace (RTLD_LOCAL)", name);
	return 0;
}

/* --- one window --- */

struct window {
	struct standin *s;
	uint32_t client, n;
	uint32_t handles[MANY];
	uint64_t offsets[MANY], sizes[MANY];
	size_t arg_size;
	int xfer;
	int twice;		/* a second export, of another client */
	int slot_was_fwd;	/* the slot did not hold its own value */
	int ret;
};

static int in_window(void *ctx)
{
	struct window *w = ctx;

	w->slot_was_fwd = atomic_load(w->s->slot) != w->s->orig;
	w->ret = w->s->export(magic_fd, w->client, w->handles, w->offsets,
			      w->sizes, w->n, w->arg_size, w->xfer);
	if (!w->ret && w->twice)
		w->ret = w->s->export(magic_fd, w->client + 1, w->handles,
				      w->offsets, w->sizes, 1, w->arg_size,
				      w->xfer);
	return 0;
}

/* Run one window of n objects tagged i; its result, out filled. */
static int run(struct window *w, uint32_t i, struct rm_export *out,
	       char *why, size_t why_len)
{
	uint32_t k;
	int err;

	for (k = 0; k < w->n; k++) {
		w->handles[k] = 0x10000000u | (i << 9) | k;
		w->offsets[k] = (uint64_t)i * 4096 + k;
		w->sizes[k] = 65536 + k;
	}
	out->count = 0;
	why[0] = '\0';
	err = rm_capture_run(w->s->lib, in_window, w, out, why, why_len);
	CHECK(w->slot_was_fwd, "window %u: the slot held the forwarder", i);
	CHECK(atomic_load(w->s->slot) == w->s->orig,
	      "window %u: the slot holds its own value again (0x%lx, not 0x%lx)",
	      i, (unsigned long)atomic_load(w->s->slot),
	      (unsigned long)w->s->orig);
	return err;
}

/* Exactly the window's own objects, in order. */
static int captured_exactly(const struct window *w, const struct rm_export *out)
{
	uint32_t k;

	if (out->count != w->n || out->client != w->client)
		return 0;
	for (k = 0; k < w->n; k++)
		if (out->obj[k].handle != w->handles[k] ||
		    out->obj[k].offset != w->offsets[k] ||
		    out->obj[k].size != w->sizes[k])
			return 0;
	return 1;
}

/* --- the other threads --- */

static struct standin *busy;	/* the stand-in they call through */
static atomic_int stop;
static atomic_long worker_calls, worker_bad;
static int pipe_fd[2];

static void *worker(void *arg)
{
	uint32_t tag = 0xb0000000u | ((uint32_t)(uintptr_t)arg << 24), n = 0;
	uint64_t off = 0, size = 4096;
	uint32_t h;
	int avail;

	while (!atomic_load(&stop)) {
		h = tag | (n++ & 0xffffff);
		if (busy->export(magic_fd, 0xc1d0beefu, &h, &off, &size, 1,
				 sizeof(struct nv_export_dmabuf), n & 1))
			atomic_fetch_add(&worker_bad, 1);
		avail = -1;
		if (busy->fionread(pipe_fd[0], &avail) || avail != 3)
			atomic_fetch_add(&worker_bad, 1);
		avail = -1;
		if (ioctl(pipe_fd[0], FIONREAD, &avail) || avail != 3)
			atomic_fetch_add(&worker_bad, 1);
		atomic_fetch_add(&worker_calls, 1);
	}
	return NULL;
}

/* --- the cases --- */

static void cases(struct standin *s, const char *name, int windows)
{
	static struct window w;
	struct rm_export out = { 0 };
	char why[256];
	uint32_t i;
	int err, exact = 0, failed = 0;

	memset(&w, 0, sizeof(w));
	w.s = s;
	w.arg_size = sizeof(struct nv_export_dmabuf);
	for (i = 1; i <= (uint32_t)windows; i++) {
		w.client = 0xc1d00000u | i;
		w.n = 1 + i % 3;
		w.xfer = i % 7 == 0;
		err = run(&w, i, &out, why, sizeof(why));
		if (err || w.ret)
			failed++;
		else
			exact += captured_exactly(&w, &out);
	}
	CHECK(failed == 0, "%s: %d windows failed (%s)", name, failed, why);
	CHECK(exact == windows, "%s: %d of %d windows captured exactly their own export",
	      name, exact, windows);

	/* More than 128 objects: three ioctls, accumulated in order. */
	w.n = MANY;
	w.client = 0xc1d0aaaau;
	for (w.xfer = 0; w.xfer < 2; w.xfer++) {
		err = run(&w, 1000, &out, why, sizeof(why));
		CHECK(err == 0 && w.ret == 0 && captured_exactly(&w, &out),
		      "%s: %d objects in %d parts%s: %u captured (%d: %s)",
		      name, MANY, (MANY + 127) / 128,
		      w.xfer ? " through XFER_CMD" : "", out.count, err, why);
	}

	/* Another layout: refused, both sizes named, directly and through
	 * XFER_CMD. */
	w.n = 1;
	w.arg_size = 2600;
	for (w.xfer = 0; w.xfer < 2; w.xfer++) {
		err = run(&w, 1001, &out, why, sizeof(why));
		CHECK(err == EPROTO && strstr(why, "2600 bytes, not the 2608"),
		      "%s: an argument of 2600 bytes%s is refused (%d: %s)",
		      name, w.xfer ? " through XFER_CMD" : "", err, why);
	}
	w.arg_size = sizeof(struct nv_export_dmabuf);
	w.xfer = 0;

	/* Two clients in one window: refused. */
	w.twice = 1;
	err = run(&w, 1002, &out, why, sizeof(why));
	CHECK(err == EPROTO && strstr(why, "client"),
	      "%s: two clients in one window are refused (%d: %s)", name, err,
	      why);
	w.twice = 0;

	/* A failed ioctl, an RM error: nothing captured. */
	w.client = BAD_CLIENT;
	err = run(&w, 1003, &out, why, sizeof(why));
	CHECK(err == 0 && w.ret == -1 && out.count == 0,
	      "%s: a failed export is not captured (%d, %d, %u)", name, err,
	      w.ret, out.count);
	w.client = ERR_CLIENT;
	err = run(&w, 1004, &out, why, sizeof(why));
	CHECK(err == 0 && w.ret == 0 && out.count == 0,
	      "%s: an export RM refused is not captured (%d, %u)", name, err,
	      out.count);
	rm_export_free(&out);
}

int main(int argc, char **argv)
{
	struct standin now, lazy;
	char dir[4096], *slash;
	pthread_t th[WORKERS];
	long calls_before;
	int t;

	(void)argc;
	libc_ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
	CHECK(libc_ioctl != NULL, "libc's ioctl");
	CHECK((void *)dlsym(RTLD_DEFAULT, "ioctl") == (void *)ioctl,
	      "this program's ioctl is the process's");
	magic_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(magic_fd >= 0 && pipe(pipe_fd) == 0 &&
	      write(pipe_fd[1], "abc", 3) == 3, "files");
	snprintf(dir, sizeof(dir), "%s", argv[0]);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	if (!libc_ioctl || magic_fd < 0 ||
	    load(&now, dir, "libgdrtest_capture.so", RTLD_NOW))
		return test_done();

	/* Bound lazily: the first window finds the slot at its own PLT. */
	if (!load(&lazy, dir, "libgdrtest_capture_lazy.so", RTLD_LAZY)) {
		Dl_info self, at;

		if (getenv("LD_BIND_NOW"))
			SKIP("LD_BIND_NOW is set: nothing is bound lazily");
		else
			CHECK(dladdr((void *)lazy.export, &self) &&
			      dladdr((void *)lazy.orig, &at) &&
			      at.dli_fbase == self.dli_fbase,
			      "the lazy stand-in's slot points into itself");
		cases(&lazy, "lazily bound", 200);
		dlclose(lazy.lib);
	}

	/* Windows while other threads call through the stand-in. */
	busy = &now;
	for (t = 0; t < WORKERS; t++)
		CHECK(pthread_create(&th[t], NULL, worker,
				     (void *)(intptr_t)(t + 1)) == 0,
		      "thread %d", t);
	calls_before = atomic_load(&worker_calls);
	cases(&now, "bound at load", WINDOWS);
	atomic_store(&stop, 1);
	for (t = 0; t < WORKERS; t++)
		pthread_join(th[t], NULL);
	CHECK(atomic_load(&worker_bad) == 0,
	      "%ld calls of the other threads got a wrong answer",
	      atomic_load(&worker_bad));
	CHECK(atomic_load(&worker_calls) > calls_before,
	      "the other threads ran during the windows (%ld calls)",
	      atomic_load(&worker_calls) - calls_before);
	CHECK(atomic_load(now.slot) == now.orig,
	      "the slot holds its own value at the end");
	CHECK((void *)dlsym(RTLD_DEFAULT, "ioctl") == (void *)ioctl,
	      "ioctl is still this program's");
	return test_done();
}
