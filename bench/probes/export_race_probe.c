// SPDX-License-Identifier: MIT
/*
 * Is cuMemGetHandleForAddressRange safe while other threads allocate and
 * free?  test_gpu_rm_threads died 3 times in 16 runs (H200, driver
 * 580.159.04, 2026-12-02) with a NULL dereference inside libcuda, in the
 * rm backend's export of a pin's 64 KiB-aligned window, while four
 * threads cuMemAlloc and cuMemFree small buffers; since the backend
 * exports only the allocations asked for, 0 in 32.  One mode per process
 * (a crash ends only it), for SECONDS: four threads allocate and free
 * BYTES and 64 KiB buffers; the main thread, once they run, allocates a
 * BYTES buffer of its own among theirs and exports one range over and
 * over:
 *   window  the 64 KiB-aligned window around its buffer, where other
 *           threads' buffers come and go (what the rm backend exported
 *           up to 2026-12-02);
 *   pages   its buffer's pages, and the neighbours that share them
 *           (what the rm backend exports now).
 * BYTES defaults to 4096; below a page, the buffers share pages, and in
 * "pages" mode other threads' buffers are freed inside the range too.
 * Prints exports done and refused, the workers' allocations, and how
 * many of those landed inside the exported range.
 *
 * Build: cc -O2 -o export_race_probe export_race_probe.c \
 *   -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda -lpthread
 * usage: export_race_probe window|pages SECONDS [BYTES]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"

static atomic_int stop;
static atomic_long allocs, inside;
static _Atomic CUdeviceptr range_lo, range_hi;
static CUcontext ctx;
static size_t small = 4096;

static void seen(CUdeviceptr p, size_t n)
{
	if (p < atomic_load(&range_hi) && p + n > atomic_load(&range_lo))
		atomic_fetch_add(&inside, 1);
}

static void *worker(void *arg)
{
	CUdeviceptr a, b;

	(void)arg;
	MUST(cuCtxSetCurrent(ctx));
	while (!atomic_load(&stop)) {
		MUST(cuMemAlloc(&a, small));
		MUST(cuMemAlloc(&b, 65536));
		seen(a, small);
		seen(b, 65536);
		MUST(cuMemFree(a));
		MUST(cuMemFree(b));
		atomic_fetch_add(&allocs, 2);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "window";
	double secs = argc > 2 ? atof(argv[2]) : 5, end;
	long page = sysconf(_SC_PAGESIZE), done = 0, failed = 0;
	CUdeviceptr mem, lo, hi;
	size_t size;
	pthread_t t[4];
	char name[128];
	int drv, i, fd;

	if (argc > 3 && atol(argv[3]) > 0)
		small = (size_t)atol(argv[3]);
	size = small;
	probe_cuda_start(name, sizeof(name), &drv);
	MUST(cuCtxGetCurrent(&ctx));
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	usleep(100000);
	MUST(cuMemAlloc(&mem, size));
	lo = mem & ~(CUdeviceptr)(page - 1);
	hi = (mem + size + page - 1) & ~(CUdeviceptr)(page - 1);
	if (!strcmp(mode, "window")) {
		lo &= ~(CUdeviceptr)0xffff;
		hi = (hi + 0xffff) & ~(CUdeviceptr)0xffff;
	}
	atomic_store(&range_lo, lo);
	atomic_store(&range_hi, hi);
	printf("%s, CUDA %d: mode %s, allocation 0x%llx +%zu, exporting [0x%llx, +%llu) for %.0f s\n",
	       name, drv, mode, (unsigned long long)mem, size,
	       (unsigned long long)lo, (unsigned long long)(hi - lo), secs);
	fflush(stdout);
	end = now_us() + secs * 1e6;
	while (now_us() < end) {
		fd = -1;
		if (cuMemGetHandleForAddressRange(&fd, lo, hi - lo,
				CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) ==
		    CUDA_SUCCESS) {
			close(fd);
			done++;
		} else {
			failed++;
		}
	}
	atomic_store(&stop, 1);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("mode %s: %ld exports, %ld refused; %ld allocations by 4 threads, %ld of them inside the range: no crash\n",
	       mode, done, failed, atomic_load(&allocs),
	       atomic_load(&inside));
	return 0;
}
