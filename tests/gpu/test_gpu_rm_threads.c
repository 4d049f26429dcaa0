// SPDX-License-Identifier: MIT
/*
 * The rm backend learns which RM objects lie behind CUDA memory by
 * watching libcuda's own ioctl import for the length of one export call
 * (lib/backends/rm_capture.c).  This test holds it to its promise, the way UCX
 * and NCCL load the library: dlopen'ed RTLD_LOCAL, in a process whose other
 * threads make CUDA calls (copies, allocations: ioctls through libcuda)
 * and plain ioctls the whole time.
 *  - every pin maps the right memory: bytes checked both ways, every one;
 *  - every other thread's copy and ioctl gives the right answer
 *    throughout;
 *  - ioctl is not defined or replaced for the process: the global
 *    namespace gives libc's, before and after.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

#define WORKERS		4
#define SECONDS		8

static struct {
#define LIBSYM(name) __typeof__(&name) name;
	LIBSYM(gdr_open) LIBSYM(gdr_close) LIBSYM(gdr_pin_buffer)
	LIBSYM(gdr_unpin_buffer) LIBSYM(gdr_map) LIBSYM(gdr_unmap)
	LIBSYM(gdr_get_info) LIBSYM(gdr_copy_to_mapping)
	LIBSYM(gdr_copy_from_mapping) LIBSYM(gdr_get_attribute)
	LIBSYM(gdrmap_last_error)
#undef LIBSYM
} L;

static atomic_int stop;
static atomic_long worker_ops, worker_bad;
static int pipe_fd[2];

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 7919 + 1;
	unsigned char out[4096], in[4096];
	CUdeviceptr buf, tmp;
	int n, i = 0;

	if (cu.CtxSetCurrent(cu.primary[0]) != CUDA_SUCCESS ||
	    cu.MemAlloc(&buf, sizeof(out)) != CUDA_SUCCESS) {
		atomic_fetch_add(&worker_bad, 1);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		fill_random(out, sizeof(out), &seed);
		memset(in, 0, sizeof(in));
		if (cu.MemcpyHtoD(buf, out, sizeof(out)) ||
		    cu.CtxSynchronize() ||
		    cu.MemcpyDtoH(in, buf, sizeof(in)) ||
		    memcmp(in, out, sizeof(in)))
			atomic_fetch_add(&worker_bad, 1);
		n = -1;
		if (ioctl(pipe_fd[0], FIONREAD, &n) || n != 3)
			atomic_fetch_add(&worker_bad, 1);
		if (++i % 16 == 0) {
			if (cu.MemAlloc(&tmp, 1 << 16) || cu.MemFree(tmp))
				atomic_fetch_add(&worker_bad, 1);
		}
		atomic_fetch_add(&worker_ops, 1);
	}
	cu.MemFree(buf);
	return NULL;
}

static int load_library(void)
{
	void *lib = dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		CHECK(0, "dlopen libgdrapi.so.2: %s", dlerror());
		return -1;
	}
#define LIBSYM(name) L.name = (__typeof__(L.name))dlsym(lib, #name);	\
	CHECK(L.name != NULL, "libgdrapi.so.2 has %s", #name);
	LIBSYM(gdr_open) LIBSYM(gdr_close) LIBSYM(gdr_pin_buffer)
	LIBSYM(gdr_unpin_buffer) LIBSYM(gdr_map) LIBSYM(gdr_unmap)
	LIBSYM(gdr_get_info) LIBSYM(gdr_copy_to_mapping)
	LIBSYM(gdr_copy_from_mapping) LIBSYM(gdr_get_attribute)
	LIBSYM(gdrmap_last_error)
#undef LIBSYM
	return L.gdrmap_last_error ? 0 : -1;
}

/* One pin of a fresh allocation, every byte checked both ways. */
static int one_pin(gdr_t g, size_t size, unsigned int *seed)
{
	unsigned char *a = malloc(size), *b = malloc(size);
	CUdeviceptr p;
	gdr_info_t info;
	gdr_mh_t mh;
	char *map = NULL;
	int ok = 0;

	if (!a || !b || cu.MemAlloc(&p, size) != CUDA_SUCCESS)
		goto out;
	if (L.gdr_pin_buffer(g, p, size, 0, 0, &mh)) {
		CHECK(0, "pin of %zu bytes: %s", size, L.gdrmap_last_error());
		goto free;
	}
	if (L.gdr_get_info(g, mh, &info) ||
	    L.gdr_map(g, mh, (void **)&map, info.mapped_size)) {
		CHECK(0, "map of %zu bytes: %s", size, L.gdrmap_last_error());
		goto unpin;
	}
	map += p - info.va;
	fill_random(a, size, seed);
	memset(b, 0xa5, size);
	L.gdr_copy_to_mapping(mh, map, a, size);
	cu.MemcpyDtoH(b, p, size);
	ok = !memcmp(a, b, size);
	fill_random(a, size, seed);
	memset(b, 0x5a, size);
	cu.MemcpyHtoD(p, a, size);
	cu.CtxSynchronize();
	L.gdr_copy_from_mapping(mh, b, map, size);
	ok = ok && !memcmp(a, b, size);
	L.gdr_unmap(g, mh, map - (p - info.va), info.mapped_size);
unpin:
	L.gdr_unpin_buffer(g, mh);
free:
	cu.MemFree(p);
out:
	free(a);
	free(b);
	return ok;
}

int main(void)
{
	void *libc_ioctl, *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	pthread_t t[WORKERS];
	unsigned int seed = 99;
	long pins = 0, good = 0;
	double end;
	int backend = 0, i;
	gdr_t g;

	if (gpu_setup())
		return test_done();
	libc_ioctl = libc ? dlsym(libc, "ioctl") : NULL;
	CHECK(dlsym(RTLD_DEFAULT, "ioctl") == libc_ioctl,
	      "before: the process's ioctl is libc's");
	if (load_library())
		return test_done();
	CU_OK(cu.CtxSetCurrent(cu.primary[0]));
	g = L.gdr_open();
	if (!g) {
		SKIP("gdr_open: %s", L.gdrmap_last_error());
		return test_done();
	}
	L.gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &backend);
	if (backend != GDRMAP_BACKEND_RM) {
		SKIP("gdr_open chose backend %d, not rm", backend);
		L.gdr_close(g);
		return test_done();
	}
	if (pipe(pipe_fd) || write(pipe_fd[1], "abc", 3) != 3)
		abort();
	for (i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
	end = now_s() + SECONDS;
	while (now_s() < end) {
		size_t size = (size_t)8 << (rand_r(&seed) % 18);

		size += (size_t)(rand_r(&seed) % 4096);
		good += one_pin(g, size, &seed);
		pins++;
	}
	atomic_store(&stop, 1);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	CHECK(good == pins, "%ld of %ld pins mapped the right bytes both ways",
	      good, pins);
	CHECK(atomic_load(&worker_bad) == 0,
	      "%ld of %ld copies and ioctls of other threads went wrong",
	      atomic_load(&worker_bad), atomic_load(&worker_ops));
	CHECK(dlsym(RTLD_DEFAULT, "ioctl") == libc_ioctl,
	      "after: the process's ioctl is still libc's");
	printf("%ld pins checked, %ld copies and ioctls on %d other threads\n",
	       pins, atomic_load(&worker_ops), WORKERS);
	CHECK_RET(L.gdr_close(g), 0);
	return test_done();
}
