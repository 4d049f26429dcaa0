// SPDX-License-Identifier: MIT
/*
 * Which libgdrapi calls a consumer makes, how often, of what sizes and
 * at what cost: an LD_PRELOAD library that wraps the pin, map and copy
 * calls, passes each to the real library (the next definition, RTLD_NEXT)
 * and, at exit, writes one line per call kind to GDR_CALL_COUNT_DIR/
 * gdr-calls.PID: the count, the mean time in ns and the sizes, as a
 * histogram of powers of two ("4096:12" is twelve calls of 4 KiB up to
 * 8 KiB less one).  Nothing is written without GDR_CALL_COUNT_DIR.
 *
 * For consumers that pick a path per message, UCX above all: whether a
 * message costs one copy or one per fragment, and whether each fragment
 * pins and unpins again, decides what a copy-only pin costs it.
 * bench/consumers/ucx.sh's "calls" part uses it.
 *
 * Build: cc -O2 -shared -fPIC -Iinclude -o gdr_call_count.so \
 *            bench/probes/gdr_call_count.c -ldl
 * Counting is not thread-safe to the last call: a consumer's threads may
 * lose a count between them, never corrupt one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gdrapi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { PIN, UNPIN, MAP, UNMAP, COPY_TO, COPY_FROM, NKINDS };
static const char *const kind_names[NKINDS] = {
	"gdr_pin_buffer", "gdr_unpin_buffer", "gdr_map", "gdr_unmap",
	"gdr_copy_to_mapping", "gdr_copy_from_mapping",
};
static unsigned long calls[NKINDS], total_ns[NKINDS], sizes[NKINDS][64];

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void count(int kind, size_t n, uint64_t t0)
{
	int b = 0;

	while (b < 63 && (2ul << b) <= n)
		b++;
	calls[kind]++;
	total_ns[kind] += now_ns() - t0;
	sizes[kind][b]++;
}

__attribute__((destructor)) static void report(void)
{
	const char *dir = getenv("GDR_CALL_COUNT_DIR");
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/gdr-calls.%d", dir, (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	for (int k = 0; k < NKINDS; k++) {
		if (!calls[k])
			continue;
		fprintf(f, "%s calls %lu mean_ns %lu%s", kind_names[k],
			calls[k], total_ns[k] / calls[k],
			k == UNPIN ? "" : " sizes");
		for (int b = 0; k != UNPIN && b < 64; b++)
			if (sizes[k][b])
				fprintf(f, " %lu:%lu", 1ul << b, sizes[k][b]);
		fprintf(f, "\n");
	}
	fclose(f);
}

/*
 * The real function of this name, found once.  RTLD_NEXT finds it only
 * where libgdrapi is in the global scope (linked by the program, or one
 * of its preloads); UCX dlopens its gdr_copy module, and with it
 * libgdrapi, RTLD_LOCAL, so otherwise ask the loaded library itself.
 */
static void *real_fn(const char *name)
{
	static void *lib;
	void *f = dlsym(RTLD_NEXT, name);

	if (!f && !lib)
		lib = dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_NOLOAD);
	if (!f && lib)
		f = dlsym(lib, name);
	if (!f) {
		fprintf(stderr, "gdr_call_count: %s is in no loaded libgdrapi: %s\n",
			name, dlerror());
		abort();
	}
	return f;
}

#define REAL(fn) \
	static __typeof__(fn) *real; \
	if (!real) \
		real = (__typeof__(fn) *)real_fn(#fn)

int gdr_pin_buffer(gdr_t g, unsigned long addr, size_t size,
		   uint64_t p2p_token, uint32_t va_space, gdr_mh_t *handle)
{
	REAL(gdr_pin_buffer);
	uint64_t t0 = now_ns();
	int ret = real(g, addr, size, p2p_token, va_space, handle);

	count(PIN, size, t0);
	return ret;
}

int gdr_pin_buffer_v2(gdr_t g, unsigned long addr, size_t size,
		      uint32_t flags, gdr_mh_t *handle)
{
	REAL(gdr_pin_buffer_v2);
	uint64_t t0 = now_ns();
	int ret = real(g, addr, size, flags, handle);

	count(PIN, size, t0);
	return ret;
}

int gdr_unpin_buffer(gdr_t g, gdr_mh_t handle)
{
	REAL(gdr_unpin_buffer);
	uint64_t t0 = now_ns();
	int ret = real(g, handle);

	count(UNPIN, 0, t0);
	return ret;
}

int gdr_map(gdr_t g, gdr_mh_t handle, void **va, size_t size)
{
	REAL(gdr_map);
	uint64_t t0 = now_ns();
	int ret = real(g, handle, va, size);

	count(MAP, size, t0);
	return ret;
}

int gdr_unmap(gdr_t g, gdr_mh_t handle, void *va, size_t size)
{
	REAL(gdr_unmap);
	uint64_t t0 = now_ns();
	int ret = real(g, handle, va, size);

	count(UNMAP, size, t0);
	return ret;
}

int gdr_copy_to_mapping(gdr_mh_t handle, void *map_d_ptr, const void *h_ptr,
			size_t size)
{
	REAL(gdr_copy_to_mapping);
	uint64_t t0 = now_ns();
	int ret = real(handle, map_d_ptr, h_ptr, size);

	count(COPY_TO, size, t0);
	return ret;
}

int gdr_copy_from_mapping(gdr_mh_t handle, void *h_ptr,
			  const void *map_d_ptr, size_t size)
{
	REAL(gdr_copy_from_mapping);
	uint64_t t0 = now_ns();
	int ret = real(handle, h_ptr, map_d_ptr, size);

	count(COPY_FROM, size, t0);
	return ret;
}
