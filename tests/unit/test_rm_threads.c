// SPDX-License-Identifier: MIT
/*
 * Many threads pin at once through the rm backend, one gdr_t: each its
 * own ranges of memory of every GPU, some of them in RM objects other
 * threads pin at the same moment (buffers suballocated from one chunk,
 * UCX windows over them; two cuMemCreate allocations whose seam every
 * thread's window crosses), from no context or the owner's.  Every pin
 * maps write-combined, every byte a thread writes through its mapping is
 * what the GPU holds, and every byte the GPU holds reads back through
 * it, from poisoned buffers.  The first pins of each GPU (its probe, its
 * RM device) race too.  Afterwards nothing is left in the fake RM and no
 * CUDA call ran outside the owner's context.
 */
#include <pthread.h>

#include "rm_pins.h"

#define THREADS	6
#define ITERS	300
#define SIZE	(1UL << 20)
#define GRAN	FAKE_GRAN
#define WIN	(64UL << 10)
#define SLOT	512

static gdr_t g;
static CUdeviceptr own[THREADS], small[THREADS], pair;
static atomic_int bad_bytes, failures, pins;

static unsigned int next_rand(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* Pin [pin, +pin_n), write and read every byte of [p, +n) in its window
 * both ways; 0 or -1. */
static int one_pin(CUdeviceptr pin, size_t pin_n, CUdeviceptr p, size_t n,
		   unsigned int seed)
{
	unsigned char data[SLOT * 8], view[SLOT * 8 + 2];
	gdr_info_t info;
	gdr_mh_t mh;
	char *va = NULL, *m;
	size_t i;
	int bad = 0;

	if (n > sizeof(data) || gdr_pin_buffer(g, pin, pin_n, 0, 0, &mh))
		return -1;
	if (gdr_get_info(g, mh, &info) ||
	    gdr_map(g, mh, (void **)&va, info.mapped_size) ||
	    gdr_get_info(g, mh, &info) ||
	    info.mapping_type != GDR_MAPPING_TYPE_WC ||
	    p < info.va || p + n > info.va + info.mapped_size) {
		if (va)
			gdr_unmap(g, mh, va, info.mapped_size);
		gdr_unpin_buffer(g, mh);
		return -1;
	}
	m = va + (p - info.va);
	memset(view, POISON, n);
	pattern(data, n, seed);
	if (fake_gpu_rw(p, view, n, 1) ||
	    gdr_copy_to_mapping(mh, m, data, n) ||
	    fake_gpu_rw(p, view, n, 0))
		bad = -1;
	for (i = 0; i < n; i++)
		atomic_fetch_add(&bad_bytes, view[i] != data[i]);
	pattern(data, n, seed + 1);
	memset(view, POISON, n + 2);
	if (fake_gpu_rw(p, data, n, 1) ||
	    gdr_copy_from_mapping(mh, view + 1, m, n))
		bad = -1;
	atomic_fetch_add(&bad_bytes, view[0] != POISON);
	atomic_fetch_add(&bad_bytes, view[n + 1] != POISON);
	for (i = 0; i < n; i++)
		atomic_fetch_add(&bad_bytes, view[i + 1] != data[i]);
	if (gdr_unmap(g, mh, va, info.mapped_size) ||
	    gdr_unpin_buffer(g, mh))
		bad = -1;
	atomic_fetch_add(&pins, 1);
	return bad;
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, dev = t % FAKE_DEVS, i;
	unsigned int seed = (unsigned int)t * 7919u + 1, r;
	size_t off, n;

	/* Half the threads in the owner's context, half in none. */
	if (t & 1)
		fake_DevicePrimaryCtxRetain(&fake_cur, dev);
	for (i = 0; i < ITERS; i++) {
		r = next_rand(&seed);
		switch (i % 3) {
		case 0:	/* its own cuMemAlloc memory */
			off = r % (SIZE - 4096);
			n = 1 + next_rand(&seed) % 4000;
			if (one_pin(own[t] + off, n, own[t] + off, n, r))
				atomic_fetch_add(&failures, 1);
			break;
		case 1:	/* its buffer in the shared chunk (device 1) */
			if (one_pin(small[t], 64, small[t], 64, r))
				atomic_fetch_add(&failures, 1);
			break;
		default: /* its slot, either side of the seam of device 2's
			  * two allocations, in a window across it */
			off = t & 1 ? GRAN + (size_t)t * 2 * SLOT :
			      GRAN - (size_t)(t + 1) * 2 * SLOT;
			if (one_pin(pair + GRAN - 64, 128, pair + off, SLOT, r))
				atomic_fetch_add(&failures, 1);
		}
	}
	if (t & 1)
		fake_primary_release(dev);
	fake_cur = NULL;
	return NULL;
}

int main(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, 2 },
	};
	CUmemGenericAllocationHandle h = 0;
	pthread_t th[THREADS];
	int t, ok;

	fake_rm_install();
	for (t = 0; t < THREADS; t++)
		own[t] = legacy_alloc(t % FAKE_DEVS, SIZE);
	suballocated(1, small, THREADS, 64);
	fake_DevicePrimaryCtxRetain(&fake_cur, 2);
	ok = fake_MemAddressReserve(&pair, 2 * GRAN, 0, 0, 0) == CUDA_SUCCESS;
	for (t = 0; ok && t < 2; t++) {
		ok = fake_MemCreate(&h, GRAN, &prop, 0) == CUDA_SUCCESS &&
		     fake_MemMap(pair + t * GRAN, GRAN, 0, h, 0) ==
		     CUDA_SUCCESS;
		fake_MemRelease(h);
	}
	fake_primary_release(2);
	fake_cur = NULL;
	CHECK(ok, "two allocations side by side");

	g = rm_open();
	if (!g)
		return test_done();
	for (t = 0; t < THREADS; t++)
		CHECK(pthread_create(&th[t], NULL, worker,
				     (void *)(intptr_t)t) == 0, "thread %d", t);
	for (t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	CHECK(atomic_load(&failures) == 0, "%d pins failed; the last error: %s",
	      atomic_load(&failures), gdrmap_last_error());
	CHECK(atomic_load(&bad_bytes) == 0, "%d bytes wrong",
	      atomic_load(&bad_bytes));
	CHECK(atomic_load(&pins) == THREADS * ITERS, "%d of %d pins",
	      atomic_load(&pins), THREADS * ITERS);
	CHECK_RET(gdr_close(g), 0);
	return rm_done(FAKE_DEVS);
}
