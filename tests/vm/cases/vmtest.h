/* SPDX-License-Identifier: MIT */
/*
 * Helpers for the VM test cases: the simulated GPU through the libcuda
 * shim, raw gdrdrv ioctls, data patterns and the leak counters.
 *
 * Every case runs inside the test VM (tests/vm/init), with nvsim.ko and
 * gdrdrv.ko loaded; GET_ATTR tells a case which gdrdrv mode it runs in.
 */
#ifndef GDRMAP_VMTEST_H
#define GDRMAP_VMTEST_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuda_test.h"
#include "nvsim_count.h"
#include "uapi/gdrdrv_ioctl.h"

#define KiB (1024UL)
#define MiB (1024UL * 1024)
#define GPU_PAGE (64 * KiB)

/* Make the simulated GPU's primary context current in this thread. */
static inline void vm_cuda_init(void)
{
	static CUcontext ctx;
	CUdevice dev;

	if (!ctx) {
		CU_OK(cuInit(0));
		CU_OK(cuDeviceGet(&dev, 0));
		CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
	}
	CU_OK(cuCtxSetCurrent(ctx));
}

/* Allocate GPU memory; sizes of 64 KiB and up come back 64 KiB aligned. */
static inline CUdeviceptr vm_alloc(size_t size)
{
	CUdeviceptr d = 0;

	CU_OK(cuMemAlloc(&d, size));
	return d;
}

/* A pattern with no zero byte, different for each seed and offset. */
static inline uint8_t pattern_byte(size_t i, unsigned seed)
{
	uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + 0x9e37u;
	uint8_t b = (uint8_t)(x >> 15);

	return b ? b : 0xa5;
}

static inline void fill_pattern(void *buf, size_t n, unsigned seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < n; i++)
		p[i] = pattern_byte(i, seed);
}

/* The first offset where buf differs from the pattern, or -1. */
static inline long find_mismatch(const void *buf, size_t n, unsigned seed)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < n; i++)
		if (p[i] != pattern_byte(i, seed))
			return (long)i;
	return -1;
}

/* Write the pattern to GPU memory through cuMemcpyHtoD. */
static inline void gpu_fill(CUdeviceptr d, size_t n, unsigned seed)
{
	void *buf = malloc(n);

	REQUIRE(buf, "malloc %zu", n);
	fill_pattern(buf, n, seed);
	CU_OK(cuMemcpyHtoD(d, buf, n));
	free(buf);
}

/* Check GPU memory against the pattern through cuMemcpyDtoH. */
static inline long gpu_mismatch(CUdeviceptr d, size_t n, unsigned seed)
{
	void *buf = malloc(n);
	long bad;

	REQUIRE(buf, "malloc %zu", n);
	CU_OK(cuMemcpyDtoH(buf, d, n));
	bad = find_mismatch(buf, n, seed);
	free(buf);
	return bad;
}

/* Check a CPU mapping against the pattern, one volatile byte at a time so
 * that every byte really is read through the BAR. */
static inline long map_mismatch(const volatile uint8_t *p, size_t n,
				unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != pattern_byte(i, seed))
			return (long)i;
	return -1;
}

static inline void map_fill(volatile uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern_byte(i, seed);
}

/* ---- raw gdrdrv ---- */

static inline int gdrdrv_open(void)
{
	int fd = open(GDRDRV_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	REQUIRE(fd >= 0, "open %s: %s", GDRDRV_DEVICE_PATH, strerror(errno));
	return fd;
}

/* ioctl returning 0 or -errno, so that CHECKs can name the error. */
static inline int gioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int gdrdrv_pin(int fd, uint64_t addr, uint64_t size,
			     uint64_t *handle)
{
	struct gdrdrv_pin_buffer_params p = { .addr = addr, .size = size };
	int rc = gioctl(fd, GDRDRV_IOC_PIN_BUFFER, &p);

	*handle = rc ? ~0ULL : p.handle;
	return rc;
}

static inline int gdrdrv_unpin(int fd, uint64_t handle)
{
	struct gdrdrv_unpin_buffer_params p = { .handle = handle };

	return gioctl(fd, GDRDRV_IOC_UNPIN_BUFFER, &p);
}

static inline int gdrdrv_info(int fd, uint64_t handle,
			      struct gdrdrv_get_info_v2_params *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return gioctl(fd, GDRDRV_IOC_GET_INFO_V2, info);
}

static inline int gdrdrv_cb_flag(int fd, uint64_t handle, uint32_t *flag)
{
	struct gdrdrv_get_cb_flag_params p = { .handle = handle };
	int rc = gioctl(fd, GDRDRV_IOC_GET_CB_FLAG, &p);

	*flag = p.flag;
	return rc;
}

static inline int gdrdrv_attr(int fd, uint32_t attr, uint32_t *val)
{
	struct gdrdrv_get_attr_params p = { .attr = attr };
	int rc = gioctl(fd, GDRDRV_IOC_GET_ATTR, &p);

	*val = p.val;
	return rc;
}

static inline int gdrdrv_persistent(int fd)
{
	uint32_t v = 0;

	REQUIRE(gdrdrv_attr(fd, GDRDRV_ATTR_USE_PERSISTENT_MAPPING, &v) == 0,
		"GET_ATTR USE_PERSISTENT_MAPPING failed");
	return v;
}

/* mmap a handle as libgdrapi does; MAP_FAILED and errno on failure. */
static inline void *gdrdrv_mmap(int fd, uint64_t handle, size_t size)
{
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)(handle * (uint64_t)sysconf(_SC_PAGESIZE)));
}

/* ---- /proc and /sys ---- */

/* Writes text to a /proc or /sys file: 0, or -1 and errno. */
static inline int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/* ---- the dmabuf backend ---- */

#define NVSIM_DMABUF_PARAM "/sys/module/nvsim/parameters/dmabuf"

/* nvsim's dmabuf parameter as the case found it (-1: not read). */
static inline int *vm_dmabuf_was(void)
{
	static int was = -1;

	return &was;
}

/* Write v to nvsim's dmabuf parameter; what it was, or -1. */
static inline int vm_set_dmabuf(int v)
{
	char was = 0;
	FILE *f = fopen(NVSIM_DMABUF_PARAM, "r+");

	if (!f)
		return -1;
	if (fread(&was, 1, 1, f) != 1 || fseek(f, 0, SEEK_SET) ||
	    fprintf(f, "%d\n", v) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : (was == 'Y' || was == '1');
}

static inline void vm_restore_dmabuf(void)
{
	if (*vm_dmabuf_was() >= 0)
		vm_set_dmabuf(*vm_dmabuf_was());
}

/*
 * Make this case use the dmabuf backend: nvsim's dmabuf=1 (put back as it
 * was however the case ends) and GDRMAP_BACKEND=dmabuf.
 */
static inline void vm_use_dmabuf_backend(void)
{
	*vm_dmabuf_was() = vm_set_dmabuf(1);
	REQUIRE(*vm_dmabuf_was() >= 0, "cannot set %s: %s",
		NVSIM_DMABUF_PARAM, strerror(errno));
	atexit(vm_restore_dmabuf);
	REQUIRE(setenv("GDRMAP_BACKEND", "dmabuf", 1) == 0, "setenv");
}

/* ---- leak counters ---- */

/* gdrdrv's count of pins held, or -1. */
static inline long gdrdrv_refcount(void)
{
	return read_count("/proc/driver/gdrdrv/nv_get_pages_refcount");
}

/*
 * pid's line of /proc/driver/gdrdrv/pinned ("pid bytes pins left"): 0 and
 * its numbers, or -1 if it has none.  left is -1 where the line has no
 * fourth field.
 */
static inline int pinned_line(pid_t pid, unsigned long long *bytes,
			      int *pins, int *left)
{
	FILE *f = fopen("/proc/driver/gdrdrv/pinned", "r");
	unsigned long long b;
	char line[128];
	int p, n, l, found = -1;

	*bytes = 0;
	*pins = 0;
	*left = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		l = -1;
		if (sscanf(line, "%d %llu %d %d", &p, &b, &n, &l) < 3 ||
		    p != pid)
			continue;
		*bytes = b;
		*pins = n;
		*left = l;
		found = 0;
	}
	fclose(f);
	return found;
}

/* The references that keep a module loaded (/sys/module/M/refcnt), or -1. */
static inline long module_refcnt(const char *mod)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", mod);
	return read_count(path);
}

/* ---- faults ---- */

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;

static inline void fault_handler(int sig)
{
	fault_sig = sig;
	siglongjmp(fault_jmp, 1);
}

/* Read one byte at p; the signal that reading raised (SIGBUS, SIGSEGV), or
 * 0 if the read worked. */
static inline int read_faults(const volatile uint8_t *p, uint8_t *out)
{
	struct sigaction sa = { .sa_handler = fault_handler }, obus, osegv;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &obus);
	sigaction(SIGSEGV, &sa, &osegv);
	fault_sig = 0;
	if (!sigsetjmp(fault_jmp, 1))
		*out = *p;
	sigaction(SIGBUS, &obus, NULL);
	sigaction(SIGSEGV, &osegv, NULL);
	return fault_sig;
}

#endif /* GDRMAP_VMTEST_H */
