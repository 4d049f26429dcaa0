// SPDX-License-Identifier: MIT
/*
 * gdrmap._fastflag: the flag reads and writes of gdrmap.Mapping
 * (load_u32/u64, store_u32/u64) without ctypes, and one call for its
 * bulk copies (bulk()).
 *
 * Through ctypes, a flag read costs the PCIe round trip (~1 us) plus
 * ~1.5 us of Python: the call's arguments are converted into ctypes
 * objects and back, and the library checks the handle again.  Here a
 * Window (one per Mapping) holds the mapped range; its methods take the
 * offset as a Python int, check it against the range and the alignment,
 * and make the access themselves, in one C call of a few tens of
 * nanoseconds.  Anything out of the ordinary (an offset or value that is
 * not a plain int in range, keywords, a misaligned or out-of-range
 * offset, a read-only array, a closed Mapping, a fork) is handed to the
 * Python method given for it (the ctypes path), which does the work or
 * raises the exception Mapping has always raised: this file has no error
 * messages of its own to keep in step.
 *
 * The accesses are those of the library's copy routines for a naturally
 * aligned value of 1, 2, 4 or 8 bytes (lib/isa/copy.h's contract; the
 * generic set of lib/isa/copy_generic.c and lib/isa/walk.h):
 *
 *  - a read is a full fence, then one naturally aligned load of the
 *    value's width: the fence drains the CPU's streaming-load buffers,
 *    which may hold a line of the mapping older than a read that already
 *    returned, so the value is never older than one read before;
 *  - a write is one naturally aligned store of the width, then a store
 *    fence: it leaves the write-combining buffer before the call returns
 *    and is ordered before any later store (a doorbell).
 *
 * The fences are the library's own: gdrmap/fence.h is a link to
 * lib/isa/fence.h, which a copy of python/ (the sdist, pip's) carries
 * as a file.  Accesses are volatile, so the compiler neither splits,
 * merges nor widens them.
 *
 * Safety rests on the GIL, as the ctypes path's does: every method runs
 * with it held from its checks to its access, and Mapping.close() (or
 * the fork handler) calls Window.close() with it held before anything is
 * unmapped, so no access reaches a page after it is unmapped.  A process
 * forked by other means than os.fork() (a plain fork() from C) is caught
 * too: a pthread_atfork handler counts forks, and a Window refuses to
 * work in a process other than the one that made it.  Free-threaded
 * Python (no GIL) is not supported: the build does not make this module
 * there, and the package then uses ctypes.
 *
 * Built with the stable ABI (Py_LIMITED_API 3.11) where the Python is
 * 3.11 or newer, so one build serves every later version; older ones
 * build it for themselves.
 */
#include <patchlevel.h>
#if PY_VERSION_HEX >= 0x030B0000 && !defined(Py_LIMITED_API)
#define Py_LIMITED_API 0x030B0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "fence.h"

static inline uint64_t load_at(uintptr_t addr, unsigned int width)
{
	gdr_fence_before_read();
	switch (width) {
	case 1:
		return *(const volatile uint8_t *)addr;
	case 2:
		return *(const volatile uint16_t *)addr;
	case 4:
		return *(const volatile uint32_t *)addr;
	default:
		return *(const volatile uint64_t *)addr;
	}
}

static inline void store_at(uintptr_t addr, unsigned int width, uint64_t v)
{
	switch (width) {
	case 1:
		*(volatile uint8_t *)addr = (uint8_t)v;
		break;
	case 2:
		*(volatile uint16_t *)addr = (uint16_t)v;
		break;
	case 4:
		*(volatile uint32_t *)addr = (uint32_t)v;
		break;
	default:
		*(volatile uint64_t *)addr = v;
		break;
	}
	gdr_fence_after_write();
}

static uint64_t width_max(unsigned int width)
{
	return width == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
}

/*
 * Forks seen by this process.  The child handler runs in the child, with
 * one thread; the count is read with the GIL held.
 */
static unsigned int fork_count;

static void count_fork(void)
{
	fork_count++;
}

/* -- the raw accesses, for tests and benchmarks ------------------------ */

static int parse_raw(PyObject *const *args, uintptr_t *addr,
		     unsigned int *width)
{
	unsigned long long a = PyLong_AsUnsignedLongLong(args[0]);
	long w;

	if (a == (unsigned long long)-1 && PyErr_Occurred())
		return -1;
	w = PyLong_AsLong(args[1]);
	if (w == -1 && PyErr_Occurred())
		return -1;
	if (w != 1 && w != 2 && w != 4 && w != 8) {
		PyErr_SetString(PyExc_ValueError, "width must be 1, 2, 4 or 8");
		return -1;
	}
	if (!a || (a & (unsigned long long)(w - 1))) {
		PyErr_SetString(PyExc_ValueError,
				"the address must be non-zero and aligned to the width");
		return -1;
	}
	*addr = (uintptr_t)a;
	*width = (unsigned int)w;
	return 0;
}

static PyObject *raw_load(PyObject *module, PyObject *const *args,
			  Py_ssize_t nargs)
{
	unsigned int width;
	uintptr_t addr;

	(void)module;
	if (nargs != 2) {
		PyErr_SetString(PyExc_TypeError, "load(address, width)");
		return NULL;
	}
	if (parse_raw(args, &addr, &width))
		return NULL;
	return PyLong_FromUnsignedLongLong(load_at(addr, width));
}

static PyObject *raw_store(PyObject *module, PyObject *const *args,
			   Py_ssize_t nargs)
{
	unsigned long long v;
	unsigned int width;
	uintptr_t addr;

	(void)module;
	if (nargs != 3) {
		PyErr_SetString(PyExc_TypeError, "store(address, width, value)");
		return NULL;
	}
	if (parse_raw(args, &addr, &width))
		return NULL;
	v = PyLong_AsUnsignedLongLong(args[2]);
	if (v == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	if (v > width_max(width)) {
		PyErr_SetString(PyExc_ValueError, "the value does not fit the width");
		return NULL;
	}
	store_at(addr, width, v);
	Py_RETURN_NONE;
}

/* -- Window: one Mapping's range --------------------------------------- */

enum { SLOW_LOAD32, SLOW_LOAD64, SLOW_STORE32, SLOW_STORE64, NR_SLOW };

struct window {
	PyObject_HEAD
	uintptr_t base;		/* CPU address of the first mapped byte */
	size_t size;
	unsigned int forks;	/* fork_count when it was made */
	int open;
	int readonly;
	PyObject *slow[NR_SLOW];
};

/*
 * The Python method for what the fast path does not serve, called with
 * the arguments as they came.  PyObject_Vectorcall is not in the stable
 * ABI of 3.11: a tuple (and a dict for keywords) it is.
 */
static PyObject *call_slow(struct window *w, int which, PyObject *const *args,
			   Py_ssize_t nargs, PyObject *kwnames)
{
	Py_ssize_t i, nkw = kwnames ? PyTuple_Size(kwnames) : 0;
	PyObject *tuple, *kwargs = NULL, *result = NULL;

	tuple = PyTuple_New(nargs);
	if (!tuple)
		return NULL;
	for (i = 0; i < nargs; i++) {
		Py_INCREF(args[i]);
		PyTuple_SetItem(tuple, i, args[i]);
	}
	if (nkw) {
		kwargs = PyDict_New();
		if (!kwargs)
			goto out;
		for (i = 0; i < nkw; i++)
			if (PyDict_SetItem(kwargs, PyTuple_GetItem(kwnames, i),
					   args[nargs + i]))
				goto out;
	}
	result = PyObject_Call(w->slow[which], tuple, kwargs);
out:
	Py_XDECREF(kwargs);
	Py_DECREF(tuple);
	return result;
}

/*
 * The address of a value of `width` at offset `arg` (NULL: offset 0, the
 * Python methods' default), or 0 when it is not for the fast path.
 */
static inline uintptr_t window_addr(const struct window *w, PyObject *arg,
				    unsigned int width)
{
	Py_ssize_t off = 0;
	uintptr_t addr;

	if (arg) {
		if (!PyLong_CheckExact(arg))
			return 0;	/* bool, NumPy integers...: Python's */
		off = PyLong_AsSsize_t(arg);
		if (off == -1 && PyErr_Occurred()) {
			PyErr_Clear();
			return 0;
		}
	}
	if (off < 0 || w->size < width || (size_t)off > w->size - width)
		return 0;
	addr = w->base + (size_t)off;
	if (addr & (width - 1))
		return 0;
	if (!w->open || w->forks != fork_count)
		return 0;
	return addr;
}

static inline PyObject *window_load(PyObject *self, PyObject *const *args,
				    Py_ssize_t nargs, PyObject *kwnames,
				    unsigned int width, int which)
{
	struct window *w = (struct window *)self;
	uintptr_t addr = 0;

	if (!kwnames && nargs <= 1)
		addr = window_addr(w, nargs ? args[0] : NULL, width);
	if (!addr)
		return call_slow(w, which, args, nargs, kwnames);
	return PyLong_FromUnsignedLongLong(load_at(addr, width));
}

static inline PyObject *window_store(PyObject *self, PyObject *const *args,
				     Py_ssize_t nargs, PyObject *kwnames,
				     unsigned int width, int which)
{
	struct window *w = (struct window *)self;
	unsigned long long v;
	uintptr_t addr;

	if (kwnames || nargs != 2 || w->readonly || !PyLong_CheckExact(args[1]))
		return call_slow(w, which, args, nargs, kwnames);
	addr = window_addr(w, args[0], width);
	if (!addr)
		return call_slow(w, which, args, nargs, kwnames);
	v = PyLong_AsUnsignedLongLong(args[1]);
	if (v == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_Clear();	/* negative, or too wide: said in Python */
		return call_slow(w, which, args, nargs, kwnames);
	}
	if (v > width_max(width))
		return call_slow(w, which, args, nargs, kwnames);
	store_at(addr, width, v);
	Py_RETURN_NONE;
}

static PyObject *window_load_u32(PyObject *self, PyObject *const *args,
				 Py_ssize_t nargs, PyObject *kwnames)
{
	return window_load(self, args, nargs, kwnames, 4, SLOW_LOAD32);
}

static PyObject *window_load_u64(PyObject *self, PyObject *const *args,
				 Py_ssize_t nargs, PyObject *kwnames)
{
	return window_load(self, args, nargs, kwnames, 8, SLOW_LOAD64);
}

static PyObject *window_store_u32(PyObject *self, PyObject *const *args,
				  Py_ssize_t nargs, PyObject *kwnames)
{
	return window_store(self, args, nargs, kwnames, 4, SLOW_STORE32);
}

static PyObject *window_store_u64(PyObject *self, PyObject *const *args,
				  Py_ssize_t nargs, PyObject *kwnames)
{
	return window_store(self, args, nargs, kwnames, 8, SLOW_STORE64);
}

/* From now on every call goes to the Python methods (which refuse). */
static PyObject *window_close(PyObject *self, PyObject *unused)
{
	(void)unused;
	((struct window *)self)->open = 0;
	Py_RETURN_NONE;
}

static PyObject *window_get_closed(PyObject *self, void *unused)
{
	struct window *w = (struct window *)self;

	(void)unused;
	return PyBool_FromLong(!w->open || w->forks != fork_count);
}

/*
 * Window(base, size, readonly, (load_u32, load_u64, store_u32, store_u64)):
 * base and size are the CPU address and length of the mapped range, the
 * tuple the Python methods that serve what the fast path does not.
 */
static PyObject *window_new(PyTypeObject *type, PyObject *args,
			    PyObject *kwargs)
{
	PyObject *base, *slow, *self;
	unsigned long long b;
	Py_ssize_t size;
	struct window *w;
	int readonly, i;

	if (kwargs && PyDict_Size(kwargs)) {
		PyErr_SetString(PyExc_TypeError, "Window takes no keywords");
		return NULL;
	}
	if (!PyArg_ParseTuple(args, "OnpO!:Window", &base, &size, &readonly,
			      &PyTuple_Type, &slow))
		return NULL;
	b = PyLong_AsUnsignedLongLong(base);
	if (b == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	if (!b || size <= 0 || (unsigned long long)size > UINTPTR_MAX - b) {
		PyErr_SetString(PyExc_ValueError,
				"Window: not a range of addresses");
		return NULL;
	}
	if (PyTuple_Size(slow) != NR_SLOW) {
		PyErr_SetString(PyExc_TypeError,
				"Window: the fallbacks are a tuple of 4");
		return NULL;
	}
	for (i = 0; i < NR_SLOW; i++) {
		if (!PyCallable_Check(PyTuple_GetItem(slow, i))) {
			PyErr_SetString(PyExc_TypeError,
					"Window: a fallback is not callable");
			return NULL;
		}
	}
	self = ((allocfunc)PyType_GetSlot(type, Py_tp_alloc))(type, 0);
	if (!self)
		return NULL;
	w = (struct window *)self;
	w->base = (uintptr_t)b;
	w->size = (size_t)size;
	w->forks = fork_count;
	w->open = 1;
	w->readonly = readonly;
	for (i = 0; i < NR_SLOW; i++) {
		w->slow[i] = PyTuple_GetItem(slow, i);
		Py_INCREF(w->slow[i]);
	}
	return self;
}

static void window_dealloc(PyObject *self)
{
	PyTypeObject *type = Py_TYPE(self);
	struct window *w = (struct window *)self;
	int i;

	for (i = 0; i < NR_SLOW; i++)
		Py_CLEAR(w->slow[i]);
	((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
	Py_DECREF(type);
}

/* -- bulk copies ------------------------------------------------------ */

/* gdr_mh_t, passed by value as gdrapi.h declares it. */
typedef struct { unsigned long h; } mh_t;
typedef int (*copy_fn)(mh_t handle, void *dst, const void *src, size_t n);
typedef int (*via_fn)(mh_t handle, void *dst, const void *src, size_t n,
		      int path);

/* One copy by fn, or by via with path where via is set. */
static int copy(copy_fn fn, via_fn via, int path, mh_t mh, int to,
		void *map, void *buf, size_t n)
{
	if (via)
		return to ? via(mh, map, buf, n, path) :
			    via(mh, buf, map, n, path);
	return to ? fn(mh, map, buf, n) : fn(mh, buf, map, n);
}

/* Run it without the GIL: the caller keeps the Mapping open, asks again. */
#define NEEDS_RELEASE (-1000)

/*
 * bulk(fn, handle, base, size, offset, buffer, to_mapping, release,
 * held_max[, path]): fn (gdrmap_copy_to/from_mapping, by address) between
 * the mapping at base + offset and the buffer, held for the call: what
 * Mapping.write and readinto do in three ctypes calls, in one.  With
 * path, fn is gdrmap_copy_to/from_mapping_via and path its last argument.
 * The bytes copied, or minus the library's errno; None for anything
 * unusual (not one contiguous, for reads writable, buffer; out of range;
 * empty), which the caller's ctypes path raises for.  Over held_max bytes
 * the GIL is released, if release: else NEEDS_RELEASE.
 */
static PyObject *raw_bulk(PyObject *module, PyObject *const *args,
			  Py_ssize_t nargs)
{
	Py_ssize_t size, offset, held_max;
	unsigned long long base;
	Py_buffer view;
	copy_fn fn;
	via_fn via = NULL;
	mh_t mh;
	void *map;
	size_t n;
	int to, release, err, path = 0;

	(void)module;
	if (nargs != 9 && nargs != 10)
		Py_RETURN_NONE;
	fn = (copy_fn)PyLong_AsVoidPtr(args[0]);
	if (nargs == 10) {
		long code = PyLong_AsLong(args[9]);

		via = (via_fn)PyLong_AsVoidPtr(args[0]);
		/* Out of range: left to the ctypes path, which refuses it. */
		if (!PyErr_Occurred() && (code < 0 || code > INT_MAX))
			Py_RETURN_NONE;
		path = (int)code;
	}
	mh.h = PyLong_AsUnsignedLong(args[1]);
	base = PyLong_AsUnsignedLongLong(args[2]);
	size = PyLong_AsSsize_t(args[3]);
	offset = PyLong_AsSsize_t(args[4]);
	to = PyObject_IsTrue(args[6]);
	release = PyObject_IsTrue(args[7]);
	held_max = PyLong_AsSsize_t(args[8]);
	if (PyErr_Occurred() || !fn || to < 0 || release < 0) {
		PyErr_Clear();
		Py_RETURN_NONE;
	}
	if (PyObject_GetBuffer(args[5], &view,
			       to ? PyBUF_SIMPLE : PyBUF_WRITABLE)) {
		PyErr_Clear();
		Py_RETURN_NONE;
	}
	if (!view.len || offset < 0 || offset > size ||
	    view.len > size - offset) {
		PyBuffer_Release(&view);
		Py_RETURN_NONE;
	}
	if (view.len > held_max && !release) {
		PyBuffer_Release(&view);
		return PyLong_FromLong(NEEDS_RELEASE);
	}
	map = (void *)(uintptr_t)(base + (unsigned long long)offset);
	n = (size_t)view.len;
	if (view.len > held_max) {
		Py_BEGIN_ALLOW_THREADS
		err = copy(fn, via, path, mh, to, map, view.buf, n);
		Py_END_ALLOW_THREADS
	} else {	/* small: cheaper with the GIL kept */
		err = copy(fn, via, path, mh, to, map, view.buf, n);
	}
	PyBuffer_Release(&view);
	return PyLong_FromSsize_t(err ? -(Py_ssize_t)err : (Py_ssize_t)n);
}

#define FAST (METH_FASTCALL | METH_KEYWORDS)
#define FN(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef window_methods[] = {
	{ "load_u32", FN(window_load_u32), FAST,
	  "load_u32(offset=0): the unsigned 32-bit value at offset." },
	{ "load_u64", FN(window_load_u64), FAST,
	  "load_u64(offset=0): the unsigned 64-bit value at offset." },
	{ "store_u32", FN(window_store_u32), FAST,
	  "store_u32(offset, value): write an unsigned 32-bit value at offset "
	  "(fenced)." },
	{ "store_u64", FN(window_store_u64), FAST,
	  "store_u64(offset, value): write an unsigned 64-bit value at offset "
	  "(fenced)." },
	{ "close", window_close, METH_NOARGS,
	  "Refuse every later access (before the range is unmapped)." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef window_getset[] = {
	{ "closed", window_get_closed, NULL,
	  "True once closed, or in a fork child.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot window_slots[] = {
	{ Py_tp_new, (void *)window_new },
	{ Py_tp_dealloc, (void *)window_dealloc },
	{ Py_tp_methods, window_methods },
	{ Py_tp_getset, window_getset },
	{ Py_tp_doc, (void *)"The mapped range of one gdrmap.Mapping, for its "
			     "flag reads and writes." },
	{ 0, NULL },
};

static PyType_Spec window_spec = {
	.name = "gdrmap._fastflag.Window",
	.basicsize = sizeof(struct window),
	.itemsize = 0,
	.flags = Py_TPFLAGS_DEFAULT,
	.slots = window_slots,
};

static PyMethodDef module_methods[] = {
	{ "load", FN(raw_load), METH_FASTCALL,
	  "load(address, width): the value of width (1, 2, 4, 8) bytes at "
	  "address, read as a Window reads it.  No range check: tests and "
	  "benchmarks only." },
	{ "store", FN(raw_store), METH_FASTCALL,
	  "store(address, width, value): write as a Window writes.  No range "
	  "check: tests and benchmarks only." },
	{ "bulk", FN(raw_bulk), METH_FASTCALL,
	  "bulk(fn, handle, base, size, offset, buffer, to_mapping, release, "
	  "held_max): one bulk copy for gdrmap.Mapping (see _fastflag.c)." },
	{ NULL, NULL, 0, NULL },
};

static int module_exec(PyObject *module)
{
	static int registered;
	PyObject *type;

	if (!registered) {
		if (pthread_atfork(NULL, NULL, count_fork)) {
			PyErr_SetString(PyExc_OSError, "pthread_atfork failed");
			return -1;
		}
		registered = 1;
	}
	type = PyType_FromSpec(&window_spec);
	if (!type)
		return -1;
	if (PyModule_AddObject(module, "Window", type)) {
		Py_DECREF(type);
		return -1;
	}
	return 0;
}

static PyModuleDef_Slot module_slots[] = {
	{ Py_mod_exec, (void *)module_exec },
	{ 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "gdrmap._fastflag",
	.m_doc = "Flag reads and writes of gdrmap.Mapping without ctypes "
		 "(see _fastflag.c).",
	.m_size = 0,
	.m_methods = module_methods,
	.m_slots = module_slots,
};

PyMODINIT_FUNC PyInit__fastflag(void);

PyMODINIT_FUNC PyInit__fastflag(void)
{
	return PyModuleDef_Init(&module_def);
}
