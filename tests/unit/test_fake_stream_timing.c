// SPDX-License-Identifier: MIT
/*
 * The fake driver's copies on a stream (fake_cuda.c) take the harsher
 * side of the real one's timing, so that a copy path that does not wait
 * where it must gets wrong bytes in the unit tests: a copy to the GPU
 * reads its source only when something waits for it (the stream, an
 * event recorded after it, a copy queued after it on the stream, freeing
 * GPU memory, destroying the stream), and a copy from the GPU lands at
 * once.  A staged write that refilled a chunk of the ring without waiting
 * for its copy passed the unit tests when the fake copied at once, and
 * fails them now.  Every byte is checked against its pattern, the GPU
 * poisoned first.
 */
#include <string.h>

#include "check.h"
#include "fake_cuda.h"

#define N	4096
#define POISON	0x5a

static unsigned char host[N], back[N];

static int gpu_is(CUdeviceptr p, unsigned char v)
{
	unsigned char got[N];
	int i;

	if (fake_gpu_rw(p, got, N, 0))
		return 0;
	for (i = 0; i < N; i++)
		if (got[i] != v)
			return 0;
	return 1;
}

static int all(const unsigned char *b, unsigned char v)
{
	int i;

	for (i = 0; i < N; i++)
		if (b[i] != v)
			return 0;
	return 1;
}

static void poison(CUdeviceptr p)
{
	unsigned char b[N];

	memset(b, POISON, N);
	fake_gpu_rw(p, b, N, 1);
}

/* Its source is read when the stream is waited for, not when queued. */
static void read_late(CUstream st, CUdeviceptr d)
{
	poison(d);
	memset(host, 0x11, N);
	CHECK_RET(fake_MemcpyHtoDAsync(d, host, N, st), CUDA_SUCCESS);
	CHECK(gpu_is(d, POISON), "a queued copy to the GPU has not landed");
	memset(host, 0x22, N);
	CHECK_RET(fake_StreamSynchronize(st), CUDA_SUCCESS);
	CHECK(gpu_is(d, 0x22),
	      "the copy sends the source as it is at the wait");
}

/* An event waits for the copies before it, not for those after. */
static void event_order(CUstream st, CUdeviceptr d)
{
	static unsigned char second[N];
	CUevent ev;

	poison(d);
	poison(d + N);
	memset(host, 0x33, N);
	memset(second, 0x44, N);
	CHECK_RET(fake_EventCreate(&ev, CU_EVENT_DISABLE_TIMING),
		  CUDA_SUCCESS);
	CHECK_RET(fake_MemcpyHtoDAsync(d, host, N, st), CUDA_SUCCESS);
	CHECK_RET(fake_EventRecord(ev, st), CUDA_SUCCESS);
	CHECK_RET(fake_MemcpyHtoDAsync(d + N, second, N, st), CUDA_SUCCESS);
	CHECK_RET(fake_EventSynchronize(ev), CUDA_SUCCESS);
	CHECK(gpu_is(d, 0x33), "the copy before the event has landed");
	CHECK(gpu_is(d + N, POISON), "the copy after it has not");
	CHECK_RET(fake_StreamSynchronize(st), CUDA_SUCCESS);
	CHECK(gpu_is(d + N, 0x44), "the stream's wait lands it");
	CHECK_RET(fake_EventDestroy(ev), CUDA_SUCCESS);
}

/* A copy from the GPU lands at once, after the stream's copies before it. */
static void stream_order(CUstream st, CUdeviceptr d)
{
	poison(d);
	memset(host, 0x55, N);
	memset(back, POISON, N);
	CHECK_RET(fake_MemcpyHtoDAsync(d, host, N, st), CUDA_SUCCESS);
	CHECK_RET(fake_MemcpyDtoHAsync(back, d, N, st), CUDA_SUCCESS);
	CHECK(all(back, 0x55),
	      "a copy back sees the copy queued before it, at once");
	CHECK_RET(fake_StreamSynchronize(st), CUDA_SUCCESS);
}

/* Freeing GPU memory and destroying a stream wait for the copies. */
static void waits_of_others(CUstream st, CUdeviceptr d)
{
	CUdeviceptr other;

	CHECK_RET(fake_MemAlloc(&other, N), CUDA_SUCCESS);
	memset(host, 0x66, N);
	CHECK_RET(fake_MemcpyHtoDAsync(other, host, N, st), CUDA_SUCCESS);
	CHECK_RET(fake_MemFree(other), CUDA_SUCCESS);
	CHECK_RET(fake_StreamSynchronize(st), CUDA_SUCCESS);

	poison(d);
	memset(host, 0x77, N);
	CHECK_RET(fake_MemcpyHtoDAsync(d, host, N, st), CUDA_SUCCESS);
	CHECK_RET(fake_StreamDestroy(st), CUDA_SUCCESS);
	CHECK(gpu_is(d, 0x77), "destroying the stream lands its copies");
}

int main(void)
{
	CUdeviceptr d;
	CUstream st;

	fake_enter_start(START_OWN_PRIMARY, 0);
	CHECK_RET(fake_MemAlloc(&d, 2 * N), CUDA_SUCCESS);
	CHECK_RET(fake_StreamCreate(&st, CU_STREAM_NON_BLOCKING),
		  CUDA_SUCCESS);
	read_late(st, d);
	event_order(st, d);
	stream_order(st, d);
	waits_of_others(st, d);
	CHECK_RET(fake_MemFree(d), CUDA_SUCCESS);
	return test_done();
}
