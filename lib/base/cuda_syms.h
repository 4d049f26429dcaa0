/* SPDX-License-Identifier: MIT */
/*
 * Every libcuda.so.1 function the library uses, as cuda_scope.c loads them:
 * the device table, the memory table (handed out by scopes only) and the
 * calls that switch contexts, which nothing outside cuda_scope.c makes.  Host
 * tests give cuda_scope.c a table of fakes with gdr_cuda_use_syms().
 */
#ifndef GDRMAP_CUDA_SYMS_H
#define GDRMAP_CUDA_SYMS_H

#include "cuda_api.h"

#define GDR_CUDA_CONTEXT_FUNCS(X)					\
	CUDA_FN(X, Init)						\
	CUDA_FN(X, DeviceGet)						\
	CUDA_FN(X, DevicePrimaryCtxRetain)				\
	CUDA_FN(X, CtxGetCurrent)					\
	CUDA_FN(X, CtxSetCurrent)					\
	CUDA_FN(X, CtxGetDevice)					\
	CUDA_FN(X, PointerGetAttribute)					\
	CUDA_FN(X, PointerGetAttributes)

struct gdr_cuda_context {
	GDR_CUDA_CONTEXT_FUNCS(GDR_CUDA_FIELD)
};

struct gdr_cuda_syms {
	struct gdr_cuda dev;
	struct gdr_cuda_memory mem;
	struct gdr_cuda_context ctx;
};

/*
 * Use syms instead of loading libcuda.so.1; only before the first
 * gdr_cuda_get() of the process (host tests).
 */
void gdr_cuda_use_syms(const struct gdr_cuda_syms *syms);

#endif /* GDRMAP_CUDA_SYMS_H */
