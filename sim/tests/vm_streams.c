// SPDX-License-Identifier: MIT
/*
 * The simulated GPU's copies on streams (sim/libcuda/stream.c) take the
 * harsher side of NVIDIA's timing, so that a copy path that does not wait
 * where it must moves the wrong bytes in the VM suite: a copy to the GPU
 * on a stream reads its source only when something waits for it (the
 * stream, an event recorded after it, a copy queued after it on the
 * stream, the context, freeing memory, destroying the stream), a copy
 * from the GPU lands at once, and the legacy default stream waits for
 * the blocking streams only.  Each byte is checked, the GPU poisoned
 * first.
 */
#include "vm_sim.h"

#define N	4096
#define POISON	0x5a

static unsigned char host[N];

/* Whether the N bytes at d all read v (through the legacy stream). */
static int gpu_is(CUdeviceptr d, unsigned char v)
{
	unsigned char got[N];
	int i;

	CU_OK(cuMemcpyDtoH(got, d, N));
	for (i = 0; i < N; i++)
		if (got[i] != v)
			return 0;
	return 1;
}

static void queue(CUstream st, CUdeviceptr d, unsigned char v)
{
	memset(host, v, N);
	CU_OK(cuMemcpyHtoDAsync(d, host, N, st));
}

static void read_late(CUstream st, CUdeviceptr d)
{
	CU_OK(cuMemsetD8(d, POISON, N));
	queue(st, d, 0x11);
	CHECK(gpu_is(d, POISON), "a queued copy to the GPU has not landed");
	memset(host, 0x22, N);
	CU_OK(cuStreamSynchronize(st));
	CHECK(gpu_is(d, 0x22), "it sends the source as it is at the wait");
}

static void event_order(CUstream st, CUdeviceptr d)
{
	static unsigned char second[N];
	CUevent ev;

	CU_OK(cuMemsetD8(d, POISON, 2 * N));
	CU_OK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	queue(st, d, 0x33);
	CU_OK(cuEventRecord(ev, st));
	memset(second, 0x44, N);
	CU_OK(cuMemcpyHtoDAsync(d + N, second, N, st));
	CU_OK(cuEventSynchronize(ev));
	CHECK(gpu_is(d, 0x33), "the copy before the event has landed");
	CHECK(gpu_is(d + N, POISON), "the copy after it has not");
	CU_OK(cuStreamSynchronize(st));
	CHECK(gpu_is(d + N, 0x44), "the stream's wait lands it");
	CU_OK(cuEventDestroy_v2(ev));
}

static void stream_order(CUstream st, CUdeviceptr d)
{
	unsigned char back[N];
	int i, same = 1;

	CU_OK(cuMemsetD8(d, POISON, N));
	memset(back, POISON, N);
	queue(st, d, 0x55);
	CU_OK(cuMemcpyDtoHAsync(back, d, N, st));
	for (i = 0; i < N; i++)
		same &= back[i] == 0x55;
	CHECK(same, "a copy back sees the copy queued before it, at once");
	CU_OK(cuStreamSynchronize(st));
}

/* The legacy stream waits for a blocking stream, the context for all. */
static void legacy_and_context(CUstream st, CUdeviceptr d)
{
	CUstream blocking;

	CU_OK(cuStreamCreate(&blocking, 0));
	CU_OK(cuMemsetD8(d, POISON, N));
	queue(blocking, d, 0x66);
	CHECK(gpu_is(d, 0x66), "the legacy stream waits for blocking ones");
	CU_OK(cuStreamDestroy_v2(blocking));
	queue(st, d, 0x77);
	CU_OK(cuCtxSynchronize());
	CHECK(gpu_is(d, 0x77), "the context's wait lands every stream's");
}

/* Freeing GPU memory and destroying a stream wait for the copies. */
static void waits_of_others(CUstream st, CUdeviceptr d)
{
	CUdeviceptr other;

	CU_OK(cuMemAlloc(&other, N));
	queue(st, other, 0x88);
	CU_OK(cuMemFree(other));
	CU_OK(cuStreamSynchronize(st));
	CU_OK(cuMemsetD8(d, POISON, N));
	queue(st, d, 0x99);
	CU_OK(cuStreamDestroy_v2(st));
	CHECK(gpu_is(d, 0x99), "destroying the stream lands its copies");
}

int main(void)
{
	CUdeviceptr d;
	CUstream st;

	sim_cuda_init();
	CU_OK(cuMemAlloc(&d, 2 * N));
	CU_OK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	read_late(st, d);
	event_order(st, d);
	stream_order(st, d);
	legacy_and_context(st, d);
	waits_of_others(st, d);
	CU_OK(cuMemFree(d));
	return test_done();
}
