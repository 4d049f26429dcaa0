// SPDX-License-Identifier: MIT
/*
 * A device-buffer ping-pong between two MPI ranks, as OSU's osu_latency
 * -d cuda measures it: rank 0 sends n bytes, rank 1 receives them and
 * sends them back, 1,000 times per size after 100 warm-up rounds; the
 * one-way latency is half the round trip.  CUDA-aware MPI (Open MPI with
 * pml ucx) moves device buffers itself, so the buffers are passed to MPI
 * as they are.
 *
 * usage: mpi_pingpong [-b D|H,D|H] [-a legacy|vmm] [-n iters]
 *   -b  where each rank's buffer lives: D (GPU) or H (host); default D,D
 *   -a  how GPU buffers are allocated: legacy (cuMemAlloc, as
 *       cudaMalloc) or vmm (cuMemCreate with the POSIX fd handle type,
 *       GPUDirect RDMA capable: memory gdrmap's module-free backend maps);
 *       default legacy
 *
 * Before timing each size, the data is checked both ways: the receiver's
 * buffer is poisoned, the sender's filled with a pattern that depends on
 * the size and the direction, and every byte received is compared (a GPU
 * buffer through cuMemcpyDtoH).  A wrong byte fails the run (exit 1).
 * Output, from rank 0: one line per size: bytes, p50 and mean one-way
 * latency in microseconds.
 *
 * CUDA is loaded at run time (common/cuda_defs.h): this builds with any C
 * compiler and the MPI headers.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"
#include "cuda_funcs.h"
#include "cuda_load.h"

#define MAX_SIZE	(64 << 10)
#define WARMUP		100

static struct {
	__typeof__(&CUDA_FN_NAME(Init)) Init;
	__typeof__(&CUDA_FN_NAME(DeviceGet)) DeviceGet;
	__typeof__(&CUDA_FN_NAME(DevicePrimaryCtxRetain)) PrimaryCtxRetain;
	__typeof__(&CUDA_FN_NAME(CtxSetCurrent)) CtxSetCurrent;
	__typeof__(&CUDA_FN_NAME(MemAlloc)) MemAlloc;
	__typeof__(&CUDA_FN_NAME(MemcpyHtoD)) HtoD;
	__typeof__(&CUDA_FN_NAME(MemcpyDtoH)) DtoH;
	__typeof__(&CUDA_FN_NAME(MemCreate)) Create;
	__typeof__(&CUDA_FN_NAME(MemAddressReserve)) Reserve;
	__typeof__(&CUDA_FN_NAME(MemMap)) Map;
	__typeof__(&CUDA_FN_NAME(MemSetAccess)) SetAccess;
	__typeof__(&CUDA_FN_NAME(MemGetAllocationGranularity)) Granularity;
} cu;

static int rank;

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "rank %d: %s\n", rank, what);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static void cuda_check(CUresult res, const char *what)
{
	char msg[128];

	if (res == CUDA_SUCCESS)
		return;
	snprintf(msg, sizeof(msg), "%s failed: CUDA error %d", what, res);
	die(msg);
}

static void load_cuda(void)
{
	const struct cuda_sym syms[] = {
		CUDA_FN_SYM(Init, &cu.Init),
		CUDA_FN_SYM(DeviceGet, &cu.DeviceGet),
		CUDA_FN_SYM(DevicePrimaryCtxRetain, &cu.PrimaryCtxRetain),
		CUDA_FN_SYM(CtxSetCurrent, &cu.CtxSetCurrent),
		CUDA_FN_SYM(MemAlloc, &cu.MemAlloc),
		CUDA_FN_SYM(MemcpyHtoD, &cu.HtoD),
		CUDA_FN_SYM(MemcpyDtoH, &cu.DtoH),
		CUDA_FN_SYM(MemCreate, &cu.Create),
		CUDA_FN_SYM(MemAddressReserve, &cu.Reserve),
		CUDA_FN_SYM(MemMap, &cu.Map),
		CUDA_FN_SYM(MemSetAccess, &cu.SetAccess),
		CUDA_FN_SYM(MemGetAllocationGranularity, &cu.Granularity),
	};
	const char *what;
	char msg[160];
	CUcontext ctx;
	CUdevice dev;

	switch (cuda_load_syms(syms, sizeof(syms) / sizeof(syms[0]), &what)) {
	case CUDA_LOADED:
		break;
	case CUDA_NO_LIBRARY:
		die("libcuda.so.1 cannot be loaded: this needs an NVIDIA GPU");
	default:
		snprintf(msg, sizeof(msg), "no %s", what);
		die(msg);
	}
	cuda_check(cu.Init(0), "cuInit");
	cuda_check(cu.DeviceGet(&dev, 0), "cuDeviceGet");
	/* The primary context, which the CUDA runtime and UCX use too. */
	cuda_check(cu.PrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	cuda_check(cu.CtxSetCurrent(ctx), "cuCtxSetCurrent");
}

static CUdeviceptr gpu_alloc(size_t size, int vmm)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
	};
	CUmemAccessDesc access = {
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	CUdeviceptr p = 0;
	size_t gran = 0;

	if (!vmm) {
		cuda_check(cu.MemAlloc(&p, size), "cuMemAlloc");
		return p;
	}
	prop.allocFlags.gpuDirectRDMACapable = 1;
	cuda_check(cu.Granularity(&gran, &prop,
				  CU_MEM_ALLOC_GRANULARITY_MINIMUM),
		   "cuMemGetAllocationGranularity");
	size = (size + gran - 1) / gran * gran;
	cuda_check(cu.Create(&h, size, &prop, 0), "cuMemCreate");
	cuda_check(cu.Reserve(&p, size, gran, 0, 0), "cuMemAddressReserve");
	cuda_check(cu.Map(p, size, 0, h, 0), "cuMemMap");
	cuda_check(cu.SetAccess(p, size, &access, 1), "cuMemSetAccess");
	return p;
}

/* Fill (on the GPU or the host) n bytes of buf with a pattern. */
static void fill(void *buf, int on_gpu, size_t n, unsigned int seed,
		 unsigned char *scratch)
{
	size_t i;

	for (i = 0; i < n; i++)
		scratch[i] = (unsigned char)((i * 131 + seed * 17 + 1) % 251 + 1);
	if (on_gpu)
		cuda_check(cu.HtoD((CUdeviceptr)(uintptr_t)buf, scratch, n),
			   "cuMemcpyHtoD");
	else
		memcpy(buf, scratch, n);
}

/* Whether n bytes of buf hold the pattern of seed. */
static int holds(void *buf, int on_gpu, size_t n, unsigned int seed,
		 unsigned char *scratch)
{
	size_t i;

	if (on_gpu)
		cuda_check(cu.DtoH(scratch, (CUdeviceptr)(uintptr_t)buf, n),
			   "cuMemcpyDtoH");
	else
		memcpy(scratch, buf, n);
	for (i = 0; i < n; i++)
		if (scratch[i] != (unsigned char)((i * 131 + seed * 17 + 1) %
						  251 + 1))
			return 0;
	return 1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 64, 1024, 4096, 16384, 65536 };
	int on_gpu[2] = { 1, 1 }, vmm = 0, iters = 1000, opt, nranks, peer;
	unsigned char *scratch = malloc(MAX_SIZE), poison[256];
	double *t = NULL, t0, sum;
	void *buf;
	size_t s, n;
	int i, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((opt = getopt(argc, argv, "b:a:n:")) != -1) {
		if (opt == 'b' && strlen(optarg) == 3 && optarg[1] == ',') {
			on_gpu[0] = optarg[0] == 'D';
			on_gpu[1] = optarg[2] == 'D';
		} else if (opt == 'a') {
			vmm = !strcmp(optarg, "vmm");
		} else if (opt == 'n') {
			iters = atoi(optarg);
		} else {
			die("usage: mpi_pingpong [-b D|H,D|H] [-a legacy|vmm] [-n iters]");
		}
	}
	if (nranks != 2 || iters < 1 || !scratch)
		die("run with 2 ranks (mpirun -np 2)");
	t = malloc(sizeof(*t) * (size_t)iters);
	if (!t)
		die("out of memory");
	peer = 1 - rank;
	if (on_gpu[0] || on_gpu[1])
		load_cuda();
	if (on_gpu[rank])
		buf = (void *)(uintptr_t)gpu_alloc(MAX_SIZE, vmm);
	else if (!(buf = malloc(MAX_SIZE)))
		die("out of memory");
	memset(poison, 0xA5, sizeof(poison));
	if (rank == 0)
		printf("# buffers: rank 0 %s, rank 1 %s; GPU memory from %s\n# bytes  p50_us  mean_us\n",
		       on_gpu[0] ? "GPU" : "host", on_gpu[1] ? "GPU" : "host",
		       vmm ? "cuMemCreate" : "cuMemAlloc");

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		n = sizes[s];
		/* The data, checked both ways. */
		for (i = 0; i < 2; i++) {
			unsigned int seed = (unsigned int)(n + (size_t)i * 7);

			if (rank == i) {
				fill(buf, on_gpu[rank], n, seed, scratch);
				MPI_Send(buf, (int)n, MPI_BYTE, peer, 1,
					 MPI_COMM_WORLD);
			} else {
				fill(buf, on_gpu[rank], n, 999, scratch);
				MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				if (!holds(buf, on_gpu[rank], n, seed, scratch)) {
					fprintf(stderr, "rank %d: %zu bytes from rank %d arrived wrong\n",
						rank, n, peer);
					bad = 1;
				}
			}
		}
		MPI_Barrier(MPI_COMM_WORLD);
		/* Rank 0 times each round trip; rank 1 echoes. */
		for (i = -WARMUP; i < iters; i++) {
			t0 = MPI_Wtime();
			if (rank == 0) {
				MPI_Send(buf, (int)n, MPI_BYTE, 1, 0,
					 MPI_COMM_WORLD);
				MPI_Recv(buf, (int)n, MPI_BYTE, 1, 0,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)n, MPI_BYTE, 0, 0,
					 MPI_COMM_WORLD);
			}
			if (i >= 0)
				t[i] = (MPI_Wtime() - t0) * 1e6 / 2;
		}
		if (rank == 0) {
			for (sum = 0, i = 0; i < iters; i++)
				sum += t[i];
			qsort(t, (size_t)iters, sizeof(*t), cmp_double);
			printf("%7zu %7.2f %8.2f\n", n, t[iters / 2],
			       sum / iters);
			fflush(stdout);
		}
	}
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("# data %s\n", bad ? "WRONG" : "checked both ways: right");
	MPI_Finalize();
	return bad;
}
