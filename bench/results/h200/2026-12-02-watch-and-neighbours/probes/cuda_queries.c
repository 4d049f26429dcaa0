/* Probe: what the DMA path's questions to CUDA cost. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static unsigned long long now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}
static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? -1 : x > y;
}
#define N 4000
#define K 12
static unsigned long long s[K][N];
int main(void)
{
	CUdevice d; CUcontext c; CUdeviceptr g; CUstream st;
	void *pin, *pag; int i, k;
	cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
	cuMemAlloc(&g, 1 << 20); cuMemAllocHost(&pin, 1 << 20); pag = malloc(1 << 20); memset(pag, 1, 1 << 20);
	cuStreamCreate(&st, CU_STREAM_NON_BLOCKING);
	const char *names[K] = { "ptr7 dev", "ptr5 dev(no range)", "ptr1 bufid", "ptr4 host pinned", "ptr4 host pageable",
		"ctxgetcurrent", "dtoh16K+sync", "dtoh16K+sync+2q+ctx", "dtoh32K+sync", "ptr2 host(type,managed) pinned", "ptr3 dev(ctx,dev,id)", "empty" };
	for (i = 0; i < N; i++) {
		for (k = 0; k < K; k++) {
			unsigned long long t0 = now();
			CUpointer_attribute a7[] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE };
			CUpointer_attribute a4[] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE };
			CUpointer_attribute a3[] = { CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_CONTEXT, CU_POINTER_ATTRIBUTE_BUFFER_ID };
			unsigned long long v[8]; void *dv[8] = { &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7] };
			CUcontext cur;
			memset(v, 0, sizeof(v));
			switch (k) {
			case 0: cuPointerGetAttributes(7, a7, dv, g + 4096); break;
			case 1: cuPointerGetAttributes(5, a7, dv, g + 4096); break;
			case 2: cuPointerGetAttribute(&v[0], CU_POINTER_ATTRIBUTE_BUFFER_ID, g + 4096); break;
			case 3: cuPointerGetAttributes(4, a4, dv, (CUdeviceptr)pin + 64); break;
			case 4: cuPointerGetAttributes(4, a4, dv, (CUdeviceptr)pag + 64); break;
			case 5: cuCtxGetCurrent(&cur); break;
			case 6: cuMemcpyDtoHAsync(pin, g, 16384, st); cuStreamSynchronize(st); break;
			case 7: cuPointerGetAttributes(7, a7, dv, g); cuPointerGetAttributes(4, a4, dv, (CUdeviceptr)pin);
				cuCtxGetCurrent(&cur); cuMemcpyDtoHAsync(pin, g, 16384, st); cuStreamSynchronize(st); break;
			case 8: cuMemcpyDtoHAsync(pin, g, 32768, st); cuStreamSynchronize(st); break;
			case 9: cuPointerGetAttributes(2, a4, dv, (CUdeviceptr)pin + 64); break;
			case 10: cuPointerGetAttributes(3, a3, dv, g + 4096); break;
			case 11: break;
			}
			s[k][i] = now() - t0;
		}
	}
	for (k = 0; k < K; k++) {
		qsort(s[k], N, sizeof(s[k][0]), cmp);
		printf("%-32s p10 %6llu p50 %6llu p90 %6llu ns\n", names[k], s[k][N / 10], s[k][N / 2], s[k][N * 9 / 10]);
	}
	return 0;
}
