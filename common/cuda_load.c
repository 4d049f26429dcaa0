// SPDX-License-Identifier: MIT
/* libcuda.so.1 by dlopen, for every part of the tree (cuda_load.h). */
#include <dlfcn.h>

#include "cuda_load.h"

enum cuda_load_result cuda_load_syms(const struct cuda_sym *syms, size_t n,
				     const char **what)
{
	/* Left loaded: the functions are called for the rest of the
	 * process, and dlopen counts references, so loading it again for
	 * another table costs nothing. */
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	enum cuda_load_result res = CUDA_LOADED;
	const char *err;
	size_t i;

	if (!lib) {
		err = dlerror();
		if (what)
			*what = err ? err : "libcuda.so.1: cannot be loaded";
		return CUDA_NO_LIBRARY;
	}
	for (i = 0; i < n; i++) {
		*syms[i].slot = dlsym(lib, syms[i].name);
		if (!*syms[i].slot && !syms[i].optional &&
		    res == CUDA_LOADED) {
			res = CUDA_NO_SYMBOL;
			if (what)
				*what = syms[i].name;
		}
	}
	return res;
}
