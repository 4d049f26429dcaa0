/* SPDX-License-Identifier: MIT */
/*
 * libcuda.so.1 loaded at run time (dlopen), so that what uses CUDA builds
 * without the CUDA toolkit and runs, or fails cleanly, without a GPU.
 * The one loader of the library (lib/base/cuda_scope.c), the gdrmap command
 * (tools/tools_cuda.c), the GPU tests (tests/gpu/gpu.h) and the benchmarks:
 * each lists the functions it calls as a table of struct cuda_sym, and
 * words for its own users what a failure means.
 */
#ifndef GDRMAP_CUDA_LOAD_H
#define GDRMAP_CUDA_LOAD_H

#include <stdbool.h>
#include <stddef.h>

/* One function to take from libcuda.so.1. */
struct cuda_sym {
	const char *name;	/* the exported symbol, e.g. "cuMemAlloc_v2" */
	void **slot;		/* where its address goes */
	bool optional;		/* absent: the slot is NULL, not a failure */
};

/*
 * An entry for a function pointer field declared as __typeof__(&sym): for
 * the X-macro lists of (field, symbol) the users keep, e.g.
 *	#define AS_SYM(field, sym) CUDA_SYM(sym, &table.field),
 */
#define CUDA_SYM(sym, fieldp)	 { #sym, (void **)(fieldp), false }
#define CUDA_SYM_OPT(sym, fieldp) { #sym, (void **)(fieldp), true }

/* What cuda_load_syms() found. */
enum cuda_load_result {
	CUDA_LOADED = 0,
	CUDA_NO_LIBRARY = -1,	/* libcuda.so.1 does not load: no driver */
	CUDA_NO_SYMBOL = -2,	/* it lacks a function not marked optional */
};

/*
 * Load libcuda.so.1 (it stays loaded) and fill each of the n slots of
 * syms.  On CUDA_NO_LIBRARY *what is dlerror()'s text; on CUDA_NO_SYMBOL
 * the name of the first missing function (the other slots are filled as
 * far as they were found).  Filling one table once is the caller's
 * concern, as is cuInit.
 */
enum cuda_load_result cuda_load_syms(const struct cuda_sym *syms, size_t n,
				     const char **what);

#endif /* GDRMAP_CUDA_LOAD_H */
