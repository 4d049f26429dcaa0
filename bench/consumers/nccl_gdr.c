// SPDX-License-Identifier: MIT
/*
 * NCCL on two GPUs, for the consumer suite (bench/consumers/run.sh): with
 * NCCL_GDRCOPY_ENABLE=1 and gdrmap's libgdrapi.so first on the library
 * path, NCCL's network transport keeps its proxy's synchronisation words
 * in GPU memory that it maps through gdrmap.
 *
 *   nccl_gdr check [-s]         all-reduce (out of place and in place),
 *                               all-gather and broadcast (from each root)
 *                               at sizes from 1 element to 16 MiB, every
 *                               output poisoned first and checked byte by
 *                               byte on every rank
 *   nccl_gdr lat [-r R] [-n N]  all-reduce latency, 8 B .. 64 KiB: N
 *                               back-to-back calls timed R times per size;
 *                               rank 0 prints "allreduce,BYTES,REP,US"
 *
 * Two processes, one GPU each, as PyTorch and MPI jobs run NCCL (each with
 * its own gdr_t and proxy thread); -s runs both ranks in one process
 * instead (ncclCommInitAll), where one library instance serves both GPUs.
 * libnccl.so.2 is the one NCCL_LIB names, else the first the dynamic
 * loader finds; CUDA and NCCL are loaded at run time with declarations
 * written here (the CUDA ones from common/cuda_defs.h), so this builds
 * with a plain C compiler anywhere and skips (77) where there is no
 * NCCL or fewer than two GPUs.  Exit 0 when every check passed, 1 if one
 * failed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GDRMAP_CUDA_NO_NAME_MACROS
#include "cuda_defs.h"
#include "cuda_funcs.h"
#include "cuda_load.h"

/* NCCL's ABI (nccl.h): stable since NCCL 2.0. */
typedef struct { char internal[128]; } nccl_id;
typedef struct nccl_comm_st *nccl_comm;
enum { NC_UINT8 = 1, NC_INT32 = 2 };	/* ncclDataType_t */
enum { NC_SUM = 0 };			/* ncclRedOp_t */

#define NCCL_FUNCS(X)							\
	X(GetVersion, int, (int *))					\
	X(GetUniqueId, int, (nccl_id *))				\
	X(CommInitRank, int, (nccl_comm *, int, nccl_id, int))		\
	X(CommInitAll, int, (nccl_comm *, int, const int *))		\
	X(CommDestroy, int, (nccl_comm))				\
	X(AllReduce, int, (const void *, void *, size_t, int, int,	\
			   nccl_comm, CUstream))			\
	X(AllGather, int, (const void *, void *, size_t, int, nccl_comm, \
			   CUstream))					\
	X(Broadcast, int, (const void *, void *, size_t, int, int,	\
			   nccl_comm, CUstream))			\
	X(GroupStart, int, (void))					\
	X(GroupEnd, int, (void))					\
	X(GetErrorString, const char *, (int))

#define CUDA_FUNCS(X)							\
	CUDA_FN(X, Init)						\
	CUDA_FN(X, DeviceGetCount)					\
	CUDA_FN(X, DeviceGet)						\
	CUDA_FN(X, DevicePrimaryCtxRetain)				\
	CUDA_FN(X, CtxSetCurrent)					\
	CUDA_FN(X, MemAlloc)						\
	CUDA_FN(X, MemFree)						\
	CUDA_FN(X, MemcpyHtoD)						\
	CUDA_FN(X, MemcpyDtoH)						\
	CUDA_FN(X, MemsetD8)						\
	CUDA_FN(X, StreamCreate)					\
	CUDA_FN(X, StreamSynchronize)

static struct {
#define NCCL_FIELD(name, ret, args) ret (*name) args;
	NCCL_FUNCS(NCCL_FIELD)
#undef NCCL_FIELD
} nc;

static struct {
#define CUDA_FIELD(name, sym) __typeof__(&sym) name;
	CUDA_FUNCS(CUDA_FIELD)
#undef CUDA_FIELD
} cu;

#define NRANKS 2

/* A rank this process drives. */
struct rank {
	int rank;		/* = its GPU */
	CUcontext ctx;
	nccl_comm comm;
	CUstream stream;
	CUdeviceptr send, recv;
	unsigned char *host;
};

static struct rank ranks[NRANKS];
static int nlocal;
static int failures;

#define FAIL(...)							\
	do {								\
		failures++;						\
		fprintf(stderr, "FAIL: " __VA_ARGS__);			\
		fputc('\n', stderr);					\
	} while (0)

/* Exit 77 with a reason where this machine cannot run the test. */
__attribute__((format(printf, 1, 2), noreturn))
static void skip(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "SKIP: %s\n", msg);	/* one write per process */
	exit(77);
}

static void load(void)
{
	const char *path = getenv("NCCL_LIB");
	void *lib;

#define CUDA_LOAD(name, sym) CUDA_SYM(sym, &cu.name),
	const struct cuda_sym syms[] = { CUDA_FUNCS(CUDA_LOAD) };
#undef CUDA_LOAD
	const char *what;

	switch (cuda_load_syms(syms, sizeof(syms) / sizeof(syms[0]), &what)) {
	case CUDA_LOADED:
		break;
	case CUDA_NO_LIBRARY:
		skip("%s", "no libcuda.so.1: this needs NVIDIA GPUs");
	default:
		skip("libcuda.so.1 lacks %s", what);
	}
	lib = dlopen(path && *path ? path : "libnccl.so.2", RTLD_NOW);
	if (!lib)
		skip("no NCCL: %s (set NCCL_LIB to libnccl.so.2)", dlerror());
#define NCCL_LOAD(name, ret, args)					\
	*(void **)&nc.name = dlsym(lib, "nccl" #name);			\
	if (!nc.name)							\
		skip("libnccl.so.2 lacks %s", "nccl" #name);
	NCCL_FUNCS(NCCL_LOAD)
#undef NCCL_LOAD
}

static int gpus(void)
{
	int n = 0;

	if (cu.Init(0) != CUDA_SUCCESS || cu.DeviceGetCount(&n) != CUDA_SUCCESS)
		return 0;
	return n;
}

static void must_cu(CUresult res, const char *what, int rank)
{
	if (res != CUDA_SUCCESS) {
		fprintf(stderr, "rank %d: %s failed: CUDA error %d\n", rank, what,
			res);
		exit(1);
	}
}

static void must_nccl(int res, const char *what, int rank)
{
	if (res) {
		fprintf(stderr, "rank %d: %s failed: %s\n", rank, what,
			nc.GetErrorString(res));
		exit(1);
	}
}

/* Make r's GPU current (its primary context, which NCCL uses too). */
static void use(struct rank *r)
{
	must_cu(cu.CtxSetCurrent(r->ctx), "cuCtxSetCurrent", r->rank);
}

#define MAX_COUNT	((4UL << 20) + 3)	/* int32 elements */
#define BUF_BYTES	(NRANKS * MAX_COUNT * 4)

static void setup_rank(struct rank *r, int rank)
{
	CUdevice dev;

	r->rank = rank;
	must_cu(cu.DeviceGet(&dev, rank), "cuDeviceGet", rank);
	must_cu(cu.DevicePrimaryCtxRetain(&r->ctx, dev),
		"cuDevicePrimaryCtxRetain", rank);
	use(r);
	must_cu(cu.StreamCreate(&r->stream, 1), "cuStreamCreate", rank);
	must_cu(cu.MemAlloc(&r->send, BUF_BYTES), "cuMemAlloc", rank);
	must_cu(cu.MemAlloc(&r->recv, BUF_BYTES), "cuMemAlloc", rank);
	r->host = malloc(BUF_BYTES);
	if (!r->host)
		exit(1);
}

/* Rank r's i-th int32: different per rank and element, never 0, small
 * enough that sums do not overflow. */
static int32_t value(int r, size_t i)
{
	return (int32_t)(((uint32_t)i * 2654435761u + (uint32_t)r * 40503u +
			  12345u) & 0x7fffff) + 1;
}

static unsigned char byte_of(int root, size_t i)
{
	return (unsigned char)((i * 7 + (size_t)root * 13 + 1) & 0xff);
}

enum op { AR, AR_INPLACE, AG, BCAST0, BCAST1, NR_OPS };
static const char *const op_names[NR_OPS] = {
	"allreduce", "allreduce-inplace", "allgather", "broadcast-root0",
	"broadcast-root1",
};

/* Inputs written, outputs poisoned, on every local rank. */
static void prepare(enum op op, size_t count)
{
	int32_t *v;
	size_t i;
	int k;

	for (k = 0; k < nlocal; k++) {
		struct rank *r = &ranks[k];

		use(r);
		v = (int32_t *)r->host;
		/* Only the root's input may reach the outputs. */
		if (op == BCAST0 || op == BCAST1)
			for (i = 0; i < count; i++)
				r->host[i] = r->rank == (int)(op - BCAST0) ?
					     byte_of(op - BCAST0, i) :
					     (unsigned char)~byte_of(op - BCAST0, i);
		else
			for (i = 0; i < count; i++)
				v[i] = value(r->rank, i);
		must_cu(cu.MemcpyHtoD(r->send, r->host, count * 4), "cuMemcpyHtoD",
			r->rank);
		must_cu(cu.MemsetD8(r->recv, 0xa5, BUF_BYTES), "cuMemsetD8",
			r->rank);
		if (op == AR_INPLACE)
			must_cu(cu.MemcpyHtoD(r->recv, r->host, count * 4),
				"cuMemcpyHtoD", r->rank);
	}
}

static void launch(enum op op, size_t count)
{
	int k, res = 0;

	nc.GroupStart();
	for (k = 0; k < nlocal && !res; k++) {
		struct rank *r = &ranks[k];

		use(r);
		switch (op) {
		case AR:
			res = nc.AllReduce((void *)r->send, (void *)r->recv, count,
					   NC_INT32, NC_SUM, r->comm, r->stream);
			break;
		case AR_INPLACE:
			res = nc.AllReduce((void *)r->recv, (void *)r->recv, count,
					   NC_INT32, NC_SUM, r->comm, r->stream);
			break;
		case AG:
			res = nc.AllGather((void *)r->send, (void *)r->recv, count,
					   NC_INT32, r->comm, r->stream);
			break;
		default:
			res = nc.Broadcast((void *)r->send, (void *)r->recv, count,
					   NC_UINT8, op - BCAST0, r->comm,
					   r->stream);
		}
	}
	must_nccl(res, op_names[op], ranks[0].rank);
	must_nccl(nc.GroupEnd(), "ncclGroupEnd", ranks[0].rank);
}

static void sync_all(void)
{
	int k;

	for (k = 0; k < nlocal; k++) {
		use(&ranks[k]);
		must_cu(cu.StreamSynchronize(ranks[k].stream),
			"cuStreamSynchronize", ranks[k].rank);
	}
}

/* What rank r's output must hold, byte b of it; the poison beyond. */
static unsigned char expected(enum op op, size_t count, size_t b)
{
	size_t i = b / 4, out = op == AG ? NRANKS * count * 4 : op >= BCAST0 ?
		   count : count * 4;
	int32_t v;

	if (b >= out)
		return 0xa5;
	if (op >= BCAST0)
		return byte_of(op - BCAST0, b);
	if (op == AG)
		v = value((int)(i / count), i % count);
	else
		v = value(0, i) + value(1, i);
	return ((unsigned char *)&v)[b % 4];
}

static void check(enum op op, size_t count)
{
	size_t b, n = (op == AG ? NRANKS * count * 4 : count * 4) + 4096;
	long bad;
	int k;

	if (n > BUF_BYTES)
		n = BUF_BYTES;
	prepare(op, count);
	launch(op, count);
	sync_all();
	for (k = 0; k < nlocal; k++) {
		struct rank *r = &ranks[k];

		use(r);
		memset(r->host, 0x3c, n);
		must_cu(cu.MemcpyDtoH(r->host, r->recv, n), "cuMemcpyDtoH",
			r->rank);
		for (bad = -1, b = 0; b < n && bad < 0; b++)
			if (r->host[b] != expected(op, count, b))
				bad = (long)b;
		if (bad >= 0)
			FAIL("rank %d %s of %zu elements: byte %ld is 0x%02x, not 0x%02x",
			     r->rank, op_names[op], count, bad, r->host[bad],
			     expected(op, count, (size_t)bad));
		else if (r->rank == 0)
			printf("ok %s %zu elements\n", op_names[op], count);
	}
}

static void run_checks(void)
{
	static const size_t counts[] = { 1, 3, 1000, 4097, 65543, 1UL << 20,
					 MAX_COUNT };
	unsigned int c;
	int op;

	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
		for (op = 0; op < NR_OPS; op++)
			check(op, counts[c]);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void run_latency(int reps, int iters)
{
	size_t bytes;
	int rep, it;
	double t0;

	for (bytes = 8; bytes <= 65536; bytes *= 2) {
		for (it = 0; it < 50; it++)
			launch(AR, bytes / 4);
		sync_all();
		for (rep = 0; rep < reps; rep++) {
			t0 = now_us();
			for (it = 0; it < iters; it++)
				launch(AR, bytes / 4);
			sync_all();
			if (ranks[0].rank == 0)
				printf("allreduce,%zu,%d,%.3f\n", bytes, rep,
				       (now_us() - t0) / iters);
		}
	}
}

struct args {
	int lat, single, reps, iters;
};

static void run(const struct args *a)
{
	int k;

	if (a->lat)
		run_latency(a->reps, a->iters);
	else
		run_checks();
	for (k = 0; k < nlocal; k++) {
		use(&ranks[k]);
		nc.CommDestroy(ranks[k].comm);
	}
}

/* One rank of two, in its own process; the id comes through fd. */
static int rank_main(const struct args *a, int rank, int fd)
{
	nccl_id id;

	load();
	if (gpus() < NRANKS)
		skip("%s", "NCCL between GPUs needs 2 GPUs; this machine has fewer");
	nlocal = 1;
	setup_rank(&ranks[0], rank);
	if (rank == 0) {
		int v = 0;

		nc.GetVersion(&v);
		printf("nccl %d, 2 processes\n", v);
		fflush(stdout);
		must_nccl(nc.GetUniqueId(&id), "ncclGetUniqueId", rank);
		if (write(fd, &id, sizeof(id)) != (ssize_t)sizeof(id))
			exit(1);
	} else if (read(fd, &id, sizeof(id)) != (ssize_t)sizeof(id)) {
		exit(1);
	}
	must_nccl(nc.CommInitRank(&ranks[0].comm, NRANKS, id, rank),
		  "ncclCommInitRank", rank);
	run(a);
	return failures ? 1 : 0;
}

static int single_main(const struct args *a)
{
	static const int devs[NRANKS] = { 0, 1 };
	nccl_comm comms[NRANKS];
	int k, v = 0;

	load();
	if (gpus() < NRANKS)
		skip("%s", "NCCL between GPUs needs 2 GPUs; this machine has fewer");
	nc.GetVersion(&v);
	printf("nccl %d, one process driving 2 GPUs\n", v);
	nlocal = NRANKS;
	for (k = 0; k < NRANKS; k++)
		setup_rank(&ranks[k], k);
	must_nccl(nc.CommInitAll(comms, NRANKS, devs), "ncclCommInitAll", 0);
	for (k = 0; k < NRANKS; k++)
		ranks[k].comm = comms[k];
	run(a);
	return failures ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: nccl_gdr check|lat [-s] [-r REPS] [-n ITERS]\n");
	return 2;
}

/* The closing line and exit status of a run of nranks ranks. */
static int verdict(int nranks, int failed, int skipped)
{
	if (skipped) {
		printf("0 passed, 0 failed, 1 skipped\n");
		return 77;
	}
	printf("%d passed, %d failed\n", nranks - failed, failed);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct args a = { .reps = 7, .iters = 1000 };
	int fds[2], st, r, k, opt, failed = 0, skipped = 0;
	pid_t pid[NRANKS], done;

	if (argc < 2 || (strcmp(argv[1], "check") && strcmp(argv[1], "lat")))
		return usage();
	a.lat = !strcmp(argv[1], "lat");
	optind = 2;
	while ((opt = getopt(argc, argv, "sr:n:")) != -1) {
		if (opt == 's')
			a.single = 1;
		else if (opt == 'r' && atoi(optarg) > 0)
			a.reps = atoi(optarg);
		else if (opt == 'n' && atoi(optarg) > 0)
			a.iters = atoi(optarg);
		else
			return usage();
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (a.single) {
		if (!fork())
			exit(single_main(&a));
		if (wait(&st) < 0 || !WIFEXITED(st))
			return verdict(1, 1, 0);
		return verdict(1, WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 77,
			       WEXITSTATUS(st) == 77);
	}
	/* Nothing of CUDA or NCCL in the parent: it would not survive
	 * fork in the children. */
	if (pipe(fds))
		return 1;
	for (r = 0; r < NRANKS; r++) {
		pid[r] = fork();
		if (pid[r] < 0)
			return 1;
		if (!pid[r]) {
			close(r ? fds[1] : fds[0]);
			exit(rank_main(&a, r, r ? fds[0] : fds[1]));
		}
	}
	close(fds[0]);
	close(fds[1]);
	for (k = 0; k < NRANKS; k++) {
		done = wait(&st);
		if (done < 0)
			break;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			skipped++;
			continue;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			continue;
		failed++;
		/* The other rank would wait for this one forever. */
		for (r = 0; r < NRANKS; r++)
			if (pid[r] != done)
				kill(pid[r], SIGKILL);
	}
	return verdict(NRANKS, failed, skipped == NRANKS);
}
