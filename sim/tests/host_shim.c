// SPDX-License-Identifier: MIT
/*
 * Host sanity checks of the simulated GPU's libcuda shim, with no
 * /dev/nvsim (no VM): it loads as programs load libcuda, exports only the
 * driver API under both plain and versioned names, answers before cuInit,
 * and cuInit fails cleanly (CUDA_ERROR_NO_DEVICE) without a device.
 * Also checks the /dev/nvsim ioctl ABI layouts.
 */
#define GDRMAP_CUDA_NO_NAME_MACROS
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cuda_defs.h"
#include "nvsim_ioctl.h"

#ifndef SIM_SHIM_PATH
#define SIM_SHIM_PATH "libcuda.so.1"
#endif

/* The ioctl structs: fixed layouts, multiples of 8 bytes. */
_Static_assert(sizeof(struct nvsim_info) == 88, "nvsim_info");
_Static_assert(offsetof(struct nvsim_info, abi_version) == 8, "abi_version");
_Static_assert(offsetof(struct nvsim_info, uuid) == 40, "nvsim_info.uuid");
_Static_assert(offsetof(struct nvsim_info, pci_domain) == 56, "pci_domain");
_Static_assert(offsetof(struct nvsim_info, caps) == 64, "nvsim_info.caps");
_Static_assert(sizeof(struct nvsim_mem_create) == 24, "nvsim_mem_create");
_Static_assert(offsetof(struct nvsim_mem_create, device) == 16, "create.device");
_Static_assert(sizeof(struct nvsim_mem_release) == 8, "nvsim_mem_release");
_Static_assert(sizeof(struct nvsim_mem_retain) == 24, "nvsim_mem_retain");
_Static_assert(sizeof(struct nvsim_mem_info) == 24, "nvsim_mem_info");
_Static_assert(offsetof(struct nvsim_mem_info, device) == 16, "info.device");
_Static_assert(sizeof(struct nvsim_map) == 40, "nvsim_map");
_Static_assert(sizeof(struct nvsim_unmap) == 16, "nvsim_unmap");
_Static_assert(sizeof(struct nvsim_alloc) == 32, "nvsim_alloc");
_Static_assert(offsetof(struct nvsim_alloc, device) == 20, "alloc.device");
_Static_assert(sizeof(struct nvsim_query) == 80, "nvsim_query");
_Static_assert(offsetof(struct nvsim_query, va_space) == 56, "va_space");
_Static_assert(offsetof(struct nvsim_query, device) == 64, "query.device");
_Static_assert(sizeof(struct nvsim_memset) == 24, "nvsim_memset");
_Static_assert(sizeof(struct nvsim_copy) == 24, "nvsim_copy");

static void *lib;

static void *sym(const char *name)
{
	return dlsym(lib, name);
}

#define FN(type, name) ((type)sym(name))

typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*count_fn)(int *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*errstr_fn)(CUresult, const char **);
typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
			   CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*ptrattr_fn)(void *, CUpointer_attribute, CUdeviceptr);

/* Plain and versioned names that must both exist and be one function. */
static const char *const aliases[][2] = {
	{ "cuMemAlloc", "cuMemAlloc_v2" },
	{ "cuMemFree", "cuMemFree_v2" },
	{ "cuMemAllocHost", "cuMemAllocHost_v2" },
	{ "cuMemsetD8", "cuMemsetD8_v2" },
	{ "cuMemsetD32", "cuMemsetD32_v2" },
	{ "cuMemcpyHtoD", "cuMemcpyHtoD_v2" },
	{ "cuMemcpyDtoH", "cuMemcpyDtoH_v2" },
	{ "cuMemGetAddressRange", "cuMemGetAddressRange_v2" },
	{ "cuCtxCreate", "cuCtxCreate_v2" },
	{ "cuCtxDestroy", "cuCtxDestroy_v2" },
	{ "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2" },
	{ "cuDeviceTotalMem", "cuDeviceTotalMem_v2" },
};

static const char *const required[] = {
	"cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetCount",
	"cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceGetUuid",
	"cuDeviceGetUuid_v2", "cuDevicePrimaryCtxRetain", "cuCtxCreate_v4",
	"cuCtxSetCurrent", "cuCtxGetCurrent", "cuCtxGetDevice",
	"cuCtxSynchronize", "cuMemFreeHost", "cuMemcpy",
	"cuPointerGetAttribute", "cuPointerGetAttributes",
	"cuPointerSetAttribute", "cuMemCreate", "cuMemRelease",
	"cuMemAddressReserve", "cuMemAddressFree", "cuMemMap", "cuMemUnmap",
	"cuMemSetAccess", "cuMemGetAllocationGranularity",
	"cuMemRetainAllocationHandle",
	"cuMemGetAllocationPropertiesFromHandle",
	"cuMemExportToShareableHandle", "cuGetErrorName", "cuGetErrorString",
	"cuGetProcAddress", "cuGetProcAddress_v2",
	"cuMemGetHandleForAddressRange", "cuMemAllocManaged",
	"cuDeviceGetPCIBusId", "cuMemcpyDtoD_v2", "cuMemsetD16_v2",
	"cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2",
};

static void check_symbols(void)
{
	size_t i;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		CHECK(sym(required[i]), "%s not exported", required[i]);
	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		void *a = sym(aliases[i][0]), *b = sym(aliases[i][1]);

		CHECK(a && a == b, "%s and %s differ", aliases[i][0],
		      aliases[i][1]);
	}
	/* Internals stay hidden. */
	CHECK(!sym("need_ctx") && !sym("shim_lock") && !sym("reserve_va"),
	      "internal symbols exported");
}

static void check_before_init(void)
{
	int n = -1, v = 0;
	const char *s = NULL;
	CUdeviceptr d = 0;

	CHECK(FN(count_fn, "cuDriverGetVersion")(&v) == CUDA_SUCCESS &&
	      v >= 12000, "cuDriverGetVersion %d", v);
	CHECK(FN(count_fn, "cuDriverGetVersion")(NULL) ==
	      CUDA_ERROR_INVALID_VALUE, "NULL version");
	CHECK(FN(count_fn, "cuDeviceGetCount")(&n) ==
	      CUDA_ERROR_NOT_INITIALIZED, "cuDeviceGetCount before cuInit");
	CHECK(FN(alloc_fn, "cuMemAlloc_v2")(&d, 4096) ==
	      CUDA_ERROR_NOT_INITIALIZED, "cuMemAlloc before cuInit");
	CHECK(FN(errstr_fn, "cuGetErrorName")(CUDA_ERROR_NO_DEVICE, &s) ==
	      CUDA_SUCCESS && s && !strcmp(s, "CUDA_ERROR_NO_DEVICE"),
	      "cuGetErrorName: %s", s ? s : "(null)");
	CHECK(FN(errstr_fn, "cuGetErrorString")(CUDA_ERROR_INVALID_VALUE, &s) ==
	      CUDA_SUCCESS && s && *s, "cuGetErrorString");
	s = "x";
	CHECK(FN(errstr_fn, "cuGetErrorName")(12345, &s) ==
	      CUDA_ERROR_INVALID_VALUE && !s, "unknown error code");
	CHECK(FN(errstr_fn, "cuGetErrorName")(0, NULL) ==
	      CUDA_ERROR_INVALID_VALUE, "NULL string pointer");
}

static void check_proc_address(void)
{
	gpa_fn gpa = FN(gpa_fn, "cuGetProcAddress_v2");
	gpa1_fn gpa1 = FN(gpa1_fn, "cuGetProcAddress");
	CUdriverProcAddressQueryResult st = -1;
	void *p = NULL;

	CHECK(gpa("cuMemAlloc", &p, 12000, 0, &st) == CUDA_SUCCESS &&
	      p == sym("cuMemAlloc_v2") && st == CU_GET_PROC_ADDRESS_SUCCESS,
	      "cuMemAlloc -> cuMemAlloc_v2");
	CHECK(gpa("cuCtxCreate", &p, 13000, 0, NULL) == CUDA_SUCCESS &&
	      p == sym("cuCtxCreate_v4"), "cuCtxCreate at 13.0 -> _v4");
	CHECK(gpa("cuCtxCreate", &p, 12080, 0, NULL) == CUDA_SUCCESS &&
	      p == sym("cuCtxCreate_v2"), "cuCtxCreate at 12.8 -> _v2");
	CHECK(gpa("cuGetProcAddress", &p, 13000, 0, NULL) == CUDA_SUCCESS &&
	      p == (void *)gpa, "cuGetProcAddress -> _v2");
	CHECK(gpa1("cuInit", &p, 13030, 0) == CUDA_SUCCESS &&
	      p == sym("cuInit"), "4-argument cuGetProcAddress");
	CHECK(gpa("cuPointerGetAttribute", &p, 13030,
		  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL) ==
	      CUDA_SUCCESS && p == sym("cuPointerGetAttribute"),
	      "per-thread flag");
	st = -1;
	CHECK(gpa("cuNoSuchThing", &p, 13000, 0, &st) == CUDA_ERROR_NOT_FOUND &&
	      !p && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	      "unknown symbol");
	CHECK(gpa("cuInit", &p, 13000, 8, NULL) == CUDA_ERROR_INVALID_VALUE,
	      "bad flags");
	CHECK(gpa(NULL, &p, 13000, 0, NULL) == CUDA_ERROR_INVALID_VALUE,
	      "NULL symbol");
}

/* cuInit against a given device path, in a child (cuInit's result sticks). */
static int init_with(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		CUresult r1, r2;
		int n;

		setenv("NVSIM_DEVICE", path, 1);
		r1 = FN(init_fn, "cuInit")(0);
		r2 = FN(init_fn, "cuInit")(0);
		if (r1 != r2)
			_exit(200);
		if (FN(count_fn, "cuDeviceGetCount")(&n) !=
		    CUDA_ERROR_NOT_INITIALIZED)
			_exit(201);
		_exit(r1 == CUDA_ERROR_NO_DEVICE ? 0 : 202);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

int main(void)
{
	int rc;

	lib = dlopen(SIM_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen %s: %s\n", SIM_SHIM_PATH, dlerror());
		return 1;
	}
	check_symbols();
	check_before_init();
	check_proc_address();

	CHECK(FN(init_fn, "cuInit")(1) == CUDA_ERROR_INVALID_VALUE,
	      "cuInit(1)");
	rc = init_with("/nonexistent/nvsim");
	CHECK(rc == 0, "cuInit without a device node: child status %d", rc);
	rc = init_with("/dev/null");	/* opens, but is not nvsim */
	CHECK(rc == 0, "cuInit on a non-nvsim node: child status %d", rc);

	dlclose(lib);
	return test_done();
}
