// SPDX-License-Identifier: MIT
/*
 * Which RM objects lie behind a CUDA address range.
 *
 * CUDA names them in exactly one place: when asked for a dma-buf of the
 * range (cuMemGetHandleForAddressRange), libcuda passes nvidia.ko an
 * nv_ioctl_export_to_dma_buf_fd_t holding its RM client and, for each
 * stretch of the range, the memory object's handle, offset and size.  No
 * RM query maps a GPU address to a handle, so the library reads that
 * argument on its way in.
 *
 * How, without changing what anything else in the process sees or does:
 * libcuda calls ioctl() through its own import slot (a GOT entry, found
 * through its dynamic section).  For the length of one export call, under
 * a process-wide lock, that one slot points at a forwarder that calls
 * whatever the slot held before with the same arguments and returns its
 * result and errno unchanged; only when the calling thread is the one
 * that asked, and the request is the export, does it also copy the
 * argument.  Then the slot gets its old value back.  So:
 *
 * - ioctl() is neither defined nor replaced for the process: the
 *   executable, other libraries, and libcuda outside the window call
 *   exactly what they called before.  A library dlopen'ed RTLD_LOCAL
 *   (UCX and NCCL load this one so) can do this; interposing ioctl could
 *   not work there and would change every caller.
 * - Other threads' libcuda ioctls during the window (another thread's
 *   CUDA calls) pass through the forwarder: one compare and one indirect
 *   call more, nothing copied.
 * - The slot is written with one aligned store, so a thread that loads it
 *   sees the old target or the forwarder, both of which work.  Where the
 *   slot sits in libcuda's RELRO region, the page is made writable for
 *   the store and read-only again, as the dynamic linker left it.
 * - If something else rewrote the slot during the window (another hook),
 *   the slot is left as it is found: the forwarder still forwards to
 *   what it saw, forever, and this library is kept loaded (RTLD_NODELETE)
 *   from the first window on, so a thread still inside the forwarder when
 *   it is undone never returns into unmapped code.
 *
 * If libcuda issues the export some other way (not through that slot),
 * nothing is captured and the pin is refused with that reason.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/backend.h"
#include "base/log.h"
#include "rm_abi.h"
#include "rm_os.h"

typedef int (*ioctl_fn)(int fd, unsigned long req, ...);

#define MAX_SLOTS 4

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT  R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT  R_AARCH64_GLOB_DAT
#else
/* NVIDIA's driver ships for these two only. */
#define R_JUMP_SLOT (~0UL)
#define R_GLOB_DAT  (~0UL)
#endif

/* The import slots of one library, found once per library. */
struct slots {
	uintptr_t base;			/* the library's load bias */
	_Atomic uintptr_t *slot[MAX_SLOTS];
	int relro[MAX_SLOTS];		/* the page is read-only */
	int n;
};

/* One window at a time; its state, read by the forwarder. */
static pthread_mutex_t window_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(ioctl_fn) next_ioctl;	/* never cleared once set */
static _Atomic unsigned long owner;	/* pthread_self() of the asker */
static _Atomic int active;
/* Written by the owner thread only, read after the window. */
static struct rm_export *capture;
/* The slots of the library last watched; under window_lock. */
static struct slots slots_cache;
static void *slots_of;
static int capture_err;
static char capture_why[160];

static uintptr_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (uintptr_t)p : 4096;
}

/* Record what an export ioctl carried (the owner thread, after the call
 * returned successfully). */
static void note_export(const struct nv_export_dmabuf *p, size_t size)
{
	uint32_t i;

	if (capture_err)
		return;
	if (size != sizeof(*p)) {
		capture_err = EPROTO;
		snprintf(capture_why, sizeof(capture_why),
			 "libcuda's dma-buf export argument is %zu bytes, not the %zu of the layout the library knows",
			 size, sizeof(*p));
		return;
	}
	if (p->status != NV_OK)
		return;
	if (p->numObjects > NV_DMABUF_EXPORT_MAX_HANDLES ||
	    (capture->count && p->hClient != capture->client)) {
		capture_err = EPROTO;
		snprintf(capture_why, sizeof(capture_why),
			 "libcuda's dma-buf export names %u objects of client 0x%x: not a layout the library knows",
			 p->numObjects, p->hClient);
		return;
	}
	capture->client = p->hClient;
	for (i = 0; i < p->numObjects; i++) {
		if (rm_export_add(capture, p->handles[i], p->offsets[i],
				  p->sizes[i])) {
			capture_err = ENOMEM;
			snprintf(capture_why, sizeof(capture_why),
				 "out of memory");
			return;
		}
	}
}

static void note(unsigned long req, void *arg)
{
	const struct nv_ioctl_xfer *x = arg;

	if (_IOC_TYPE(req) != NV_IOCTL_MAGIC)
		return;
	if (_IOC_NR(req) == NV_ESC_EXPORT_TO_DMABUF_FD)
		note_export(arg, _IOC_SIZE(req));
	else if (_IOC_NR(req) == NV_ESC_IOCTL_XFER_CMD &&
		 _IOC_SIZE(req) == sizeof(*x) &&
		 x->cmd == NV_ESC_EXPORT_TO_DMABUF_FD)
		note_export((const void *)(uintptr_t)x->ptr, x->size);
}

/* What the slot points at while a window is open. */
static int forward_ioctl(int fd, unsigned long req, ...)
{
	ioctl_fn next = atomic_load_explicit(&next_ioctl,
					     memory_order_acquire);
	va_list ap;
	void *arg;
	int ret;

	/* ioctl's third argument, where present, is one machine word. */
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	ret = next(fd, req, arg);
	if (ret == 0 && atomic_load_explicit(&active, memory_order_acquire) &&
	    atomic_load_explicit(&owner, memory_order_relaxed) ==
	    (unsigned long)pthread_self()) {
		int e = errno;

		note(req, arg);
		errno = e;
	}
	return ret;
}

static uintptr_t dyn_ptr(const struct link_map *lm, ElfW(Addr) v)
{
	/* glibc relocates these entries in place on most architectures and
	 * not on some: an unrelocated one is an offset below the bias. */
	return v < lm->l_addr ? lm->l_addr + v : v;
}

/* The RELRO range of the object loaded at base, as the dynamic linker
 * protects it: whole pages only. */
struct relro_find {
	uintptr_t base, start, end;
};

static int find_relro(struct dl_phdr_info *info, size_t size, void *data)
{
	struct relro_find *f = data;
	uintptr_t pg = page_size();
	int i;

	(void)size;
	if (info->dlpi_addr != f->base)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_GNU_RELRO)
			continue;
		f->start = (info->dlpi_addr + ph->p_vaddr) & ~(pg - 1);
		f->end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) &
			 ~(pg - 1);
	}
	return 1;
}

/* Collect the ioctl slots of relocation table [rel, +size). */
static void scan_relocs(const ElfW(Rela) *rel, size_t size,
			const ElfW(Sym) *symtab, const char *strtab,
			uintptr_t base, struct slots *s)
{
	size_t i, n = size / sizeof(*rel);

	for (i = 0; i < n && s->n < MAX_SLOTS; i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		unsigned long sym = ELF64_R_SYM(rel[i].r_info);

		if ((type != R_JUMP_SLOT && type != R_GLOB_DAT) || !sym)
			continue;
		if (strcmp(strtab + symtab[sym].st_name, "ioctl"))
			continue;
		s->slot[s->n++] = (_Atomic uintptr_t *)(base +
							rel[i].r_offset);
	}
}

static int find_slots(void *lib, struct slots *s, char *why, size_t len)
{
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_sz = 0, rela_sz = 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	struct relro_find rf = { 0 };
	struct link_map *lm = NULL;
	const ElfW(Dyn) *d;
	long pltrel = DT_RELA;
	int i;

	memset(s, 0, sizeof(*s));
	if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) || !lm || !lm->l_ld) {
		snprintf(why, len, "the dynamic linker gives no link map for libcuda");
		return ENOTSUP;
	}
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL:
			jmprel = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			jmprel_sz = d->d_un.d_val;
			break;
		case DT_PLTREL:
			pltrel = (long)d->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			rela_sz = d->d_un.d_val;
			break;
		case DT_SYMTAB:
			symtab = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const void *)dyn_ptr(lm, d->d_un.d_ptr);
			break;
		}
	}
	if (!symtab || !strtab || pltrel != DT_RELA) {
		snprintf(why, len, "libcuda's dynamic section is not one the library can read (no symbol table, or REL relocations)");
		return ENOTSUP;
	}
	if (jmprel)
		scan_relocs(jmprel, jmprel_sz, symtab, strtab, lm->l_addr, s);
	if (rela)
		scan_relocs(rela, rela_sz, symtab, strtab, lm->l_addr, s);
	if (!s->n) {
		snprintf(why, len, "libcuda does not import ioctl through its own relocations, so the RM objects behind CUDA memory cannot be learned from its dma-buf export");
		return ENOTSUP;
	}
	s->base = lm->l_addr;
	rf.base = lm->l_addr;
	dl_iterate_phdr(find_relro, &rf);
	for (i = 0; i < s->n; i++) {
		uintptr_t a = (uintptr_t)s->slot[i];

		s->relro[i] = a >= rf.start && a < rf.end;
	}
	return 0;
}

/* Store v in slot i if it still holds old; whether it did. */
static int swap_slot(const struct slots *s, int i, uintptr_t old,
		     uintptr_t v)
{
	uintptr_t pg = page_size();
	void *page = (void *)((uintptr_t)s->slot[i] & ~(pg - 1));
	int done;

	if (s->relro[i] && mprotect(page, pg, PROT_READ | PROT_WRITE))
		return 0;
	done = atomic_compare_exchange_strong(s->slot[i], &old, v);
	if (s->relro[i])
		mprotect(page, pg, PROT_READ);
	return done;
}

/* From the first window on this library stays loaded (see above). */
static void keep_loaded_once(void)
{
	Dl_info info;

	if (dladdr((void *)forward_ioctl, &info) && info.dli_fname)
		dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* Whether v points into the object loaded at s->base: a lazy-binding
 * slot not bound yet points at the library's own PLT. */
static int points_inside(const struct slots *s, uintptr_t v)
{
	Dl_info info;

	return dladdr((void *)v, &info) && (uintptr_t)info.dli_fbase ==
	       s->base;
}

int rm_capture_run(void *lib, int (*call)(void *ctx), void *ctx,
		   struct rm_export *out, char *why, size_t why_len)
{
	static pthread_once_t loaded_once = PTHREAD_ONCE_INIT;
	uintptr_t old[MAX_SLOTS], fwd = (uintptr_t)forward_ioctl;
	int installed[MAX_SLOTS] = { 0 };
	uintptr_t target = 0;
	struct slots s;
	int err, ret, i;

	pthread_once(&loaded_once, keep_loaded_once);
	pthread_mutex_lock(&window_lock);
	/* Reading a library's relocations costs more than an export: once
	 * per library (the library is libcuda, or a test's). */
	if (lib != slots_of) {
		err = find_slots(lib, &slots_cache, why, why_len);
		if (err) {
			pthread_mutex_unlock(&window_lock);
			return err;
		}
		slots_of = lib;
	}
	s = slots_cache;
	for (i = 0; i < s.n; i++) {
		old[i] = atomic_load(s.slot[i]);
		if (!target && old[i] != fwd && !points_inside(&s, old[i]))
			target = old[i];
	}
	if (!target)
		target = (uintptr_t)dlsym(RTLD_DEFAULT, "ioctl");
	/* A slot left holding the forwarder (see above) keeps forwarding
	 * to what it saw then. */
	if (!atomic_load(&next_ioctl) || target != fwd)
		atomic_store_explicit(&next_ioctl, (ioctl_fn)target,
				      memory_order_release);
	capture = out;
	capture_err = 0;
	capture_why[0] = '\0';
	atomic_store(&owner, (unsigned long)pthread_self());
	atomic_store_explicit(&active, 1, memory_order_release);
	for (i = 0; i < s.n; i++)
		if (old[i] != fwd)
			installed[i] = swap_slot(&s, i, old[i], fwd);
	ret = call(ctx);
	for (i = 0; i < s.n; i++)
		if (installed[i] && !swap_slot(&s, i, fwd, old[i]))
			gdr_warn("libcuda's ioctl slot changed while gdrmap read an export: left as found");
	atomic_store_explicit(&active, 0, memory_order_release);
	atomic_store(&owner, 0);
	err = capture_err;
	if (err)
		snprintf(why, why_len, "%s", capture_why);
	capture = NULL;
	pthread_mutex_unlock(&window_lock);
	if (!err && ret)
		err = ret;
	return err;
}

/* --- what an export names (rm_os.h) --- */

void rm_export_free(struct rm_export *e)
{
	free(e->obj);
	e->obj = NULL;
	e->count = e->room = 0;
}

int rm_export_add(struct rm_export *e, uint32_t handle, uint64_t offset,
		  uint64_t size)
{
	if (e->count == e->room) {
		uint32_t room = e->room ? e->room * 2 : 8;
		struct rm_export_obj *obj;

		obj = realloc(e->obj, room * sizeof(*obj));
		if (!obj)
			return ENOMEM;
		e->obj = obj;
		e->room = room;
	}
	e->obj[e->count].handle = handle;
	e->obj[e->count].offset = offset;
	e->obj[e->count].size = size;
	e->count++;
	return 0;
}

/* --- libcuda --- */

static void *libcuda;
static char libcuda_why[256];
static pthread_once_t libcuda_once = PTHREAD_ONCE_INIT;

static void find_libcuda(void)
{
	struct slots s;

	/* The copy the library's CUDA calls go to (cuda_load.c). */
	libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!libcuda) {
		snprintf(libcuda_why, sizeof(libcuda_why),
			 "libcuda.so.1 is not loaded");
		return;
	}
	if (find_slots(libcuda, &s, libcuda_why, sizeof(libcuda_why)))
		libcuda = NULL;
}

int gdr_rm_capture_ready(char *why, size_t why_len)
{
	pthread_once(&libcuda_once, find_libcuda);
	if (libcuda)
		return 0;
	snprintf(why, why_len, "%s", libcuda_why);
	return ENOTSUP;
}

struct export_call {
	const struct gdr_cuda_scope *s;
	uint64_t va, len;
	CUresult res;
	int fd;
};

static int do_export(void *ctx)
{
	struct export_call *c = ctx;

	c->fd = -1;
	c->res = c->s->call->MemGetHandleForAddressRange(&c->fd, c->va,
			c->len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	return 0;
}

int gdr_rm_capture_export(const struct gdr_cuda_scope *s, uint64_t va,
			  uint64_t len, struct rm_export *out, char *why,
			  size_t why_len)
{
	struct export_call c = { .s = s, .va = va, .len = len };
	uint64_t sum = 0;
	char msg[160];
	uint32_t i;
	int err;

	err = gdr_rm_capture_ready(why, why_len);
	if (err)
		return err;
	out->count = 0;
	/* Each export risks libcuda's crash (docs/rm-backend.md): count
	 * them with GDRCOPY_LOG_LEVEL=1. */
	gdr_dbg("exporting [0x%llx, +%llu)", (unsigned long long)va,
		(unsigned long long)len);
	err = rm_capture_run(libcuda, do_export, &c, out, why, why_len);
	/* The dma-buf itself is not needed: the objects are.  After a
	 * failed call the fd is not ours, whatever CUDA left in it. */
	if (c.res == CUDA_SUCCESS && c.fd >= 0)
		close(c.fd);
	if (err)
		return err;
	if (c.res != CUDA_SUCCESS) {
		snprintf(why, why_len, "CUDA does not export [0x%llx, +%llu) as a dma-buf: %s",
			 (unsigned long long)va, (unsigned long long)len,
			 gdr_cuda_error(gdr_cuda_get(NULL, 0), c.res, msg,
					sizeof(msg)));
		return GDR_PIN_UNMAPPABLE;
	}
	for (i = 0; i < out->count; i++)
		sum += out->obj[i].size;
	if (!out->count || sum != len) {
		snprintf(why, why_len, "libcuda exported [0x%llx, +%llu) but the library saw %u objects covering %llu bytes of it in the ioctl it watches: this driver exports some other way",
			 (unsigned long long)va, (unsigned long long)len,
			 out->count, (unsigned long long)sum);
		return ENOTSUP;
	}
	return 0;
}
