// SPDX-License-Identifier: MIT
/*
 * lib/base/cuda_scope.c's scopes on a fake CUDA of FAKE_DEVS devices: entering
 * a device or the owner of a pointer, from every starting context (none, a
 * context of the owner, primary or the caller's own, or of another
 * device), makes a context of the right device current and leaving
 * restores exactly the caller's; the primary context is created once per
 * device, not per scope; failures change nothing; threads and nesting.
 */
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "fake_cuda.h"

static CUdeviceptr legacy[FAKE_DEVS], vmm[FAKE_DEVS];

/* The device of the current context, -1 for none. */
static int cur_dev(void)
{
	CUdevice d;

	return fake_CtxGetDevice(&d) == CUDA_SUCCESS ? d : -1;
}

/* Legacy memory (in a context of the test's own, as an application
 * would) and VMM memory on every device. */
static void allocate(void)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { CU_MEM_LOCATION_TYPE_DEVICE, 0 },
	};
	CUmemGenericAllocationHandle h;
	int d;

	for (d = 0; d < FAKE_DEVS; d++) {
		fake_ctx_create(d, 2);
		CHECK(fake_MemAlloc(&legacy[d], 1 << 20) == CUDA_SUCCESS,
		      "legacy allocation on %d", d);
		prop.location.id = d;
		CHECK(fake_MemCreate(&h, FAKE_GRAN, &prop, 0) == CUDA_SUCCESS &&
		      fake_MemAddressReserve(&vmm[d], FAKE_GRAN, 0, 0, 0) ==
		      CUDA_SUCCESS &&
		      fake_MemMap(vmm[d], FAKE_GRAN, 0, h, 0) == CUDA_SUCCESS &&
		      fake_MemRelease(h) == CUDA_SUCCESS,
		      "VMM allocation on %d", d);
	}
	fake_cur = NULL;
	atomic_store(&fake_wrong_ctx, 0);
}

/* gdr_cuda_enter(dev) from st: the right device inside, st's context
 * after; the caller's own context of dev is kept, not switched. */
static void enter_device(int dev, enum fake_start st)
{
	struct gdr_cuda_scope s;
	CUcontext start = fake_enter_start(st, dev), now;
	CUresult res = gdr_cuda_enter(dev, &s);

	CHECK(res == CUDA_SUCCESS && s.call, "enter %d from %s: %d", dev,
	      fake_start_names[st], res);
	CHECK(cur_dev() == dev, "inside, the current context is of device %d, not %d (from %s)",
	      dev, cur_dev(), fake_start_names[st]);
	fake_CtxGetCurrent(&now);
	if (st == START_OWN_PRIMARY || st == START_OWN_USER)
		CHECK(now == start, "from %s the caller's context is kept",
		      fake_start_names[st]);
	else
		CHECK(now == &fake_primary[dev],
		      "from %s device %d's primary context is used",
		      fake_start_names[st], dev);
	gdr_cuda_leave(&s);
	fake_CtxGetCurrent(&now);
	CHECK(now == start && !s.call, "after leaving, %s is current again",
	      fake_start_names[st]);
	fake_leave_start(st, dev);
}

/* gdr_cuda_enter_owner for memory of dev from st: the memory queries
 * answer inside; st's context after. */
static void enter_owner(int dev, CUdeviceptr p, enum fake_start st)
{
	struct gdr_cuda_scope s;
	CUcontext start = fake_enter_start(st, dev), now;
	CUdeviceptr base = 0;
	size_t size = 0;
	CUresult res = gdr_cuda_enter_owner(p + 4096, &s);

	CHECK(res == CUDA_SUCCESS && s.dev == dev, "owner of 0x%llx from %s: %d, device %d",
	      (unsigned long long)p, fake_start_names[st], res, s.dev);
	if (res == CUDA_SUCCESS) {
		res = s.call->MemGetAddressRange(&base, &size, p + 4096);
		CHECK(res == CUDA_SUCCESS && base == p,
		      "cuMemGetAddressRange answers inside (from %s): %d",
		      fake_start_names[st], res);
		gdr_cuda_leave(&s);
	}
	fake_CtxGetCurrent(&now);
	CHECK(now == start, "after leaving, %s is current again",
	      fake_start_names[st]);
	fake_leave_start(st, dev);
}

/* What fails changes nothing. */
static void failures(void)
{
	struct gdr_cuda_scope s;
	CUcontext start = fake_enter_start(START_OTHER_USER, 0), now;
	char msg[256];
	CUresult res;

	res = gdr_cuda_enter(FAKE_DEVS, &s);
	fake_CtxGetCurrent(&now);
	CHECK(res == CUDA_ERROR_INVALID_DEVICE && !s.call && now == start,
	      "enter of a device that does not exist: %d", res);
	gdr_cuda_scope_error(&s, res, msg, sizeof(msg));
	CHECK(strstr(msg, "no CUDA device 3") != NULL, "message: %s", msg);
	res = gdr_cuda_enter(-1, &s);
	CHECK(res == CUDA_ERROR_INVALID_DEVICE && !s.call, "enter of -1: %d",
	      res);
	res = gdr_cuda_enter_owner(0x1234, &s);
	fake_CtxGetCurrent(&now);
	CHECK(res == CUDA_ERROR_INVALID_VALUE && s.dev == -1 && !s.call &&
	      now == start, "owner of an unknown address: %d, %d", res, s.dev);
	gdr_cuda_scope_error(&s, res, msg, sizeof(msg));
	CHECK(strstr(msg, "0x1234 is not GPU memory CUDA knows") != NULL,
	      "message: %s", msg);
	fake_leave_start(START_OTHER_USER, 0);
}

/* Scopes of several devices inside each other unwind in order. */
static void nesting(void)
{
	struct gdr_cuda_scope s[FAKE_DEVS];
	CUcontext start = fake_enter_start(START_OWN_USER, 1), now;
	int d;

	for (d = 0; d < FAKE_DEVS; d++) {
		CHECK(gdr_cuda_enter(d, &s[d]) == CUDA_SUCCESS &&
		      cur_dev() == d, "nested enter of %d", d);
	}
	for (d = FAKE_DEVS - 1; d >= 0; d--) {
		gdr_cuda_leave(&s[d]);
		CHECK(cur_dev() == (d ? d - 1 : 1), "leaving %d: device %d current",
		      d, cur_dev());
	}
	fake_CtxGetCurrent(&now);
	CHECK(now == start, "the caller's context after nested scopes");
	fake_leave_start(START_OWN_USER, 1);
}

static atomic_int thread_errors;

/* Each thread starts in its own context and enters every device. */
static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, i, d;
	CUcontext start = t % 2 ? &fake_user[t % FAKE_DEVS][3] : NULL, now;
	struct gdr_cuda_scope s;

	fake_cur = start;
	for (i = 0; i < 2000; i++) {
		d = (i + t) % FAKE_DEVS;
		if (gdr_cuda_enter_owner(vmm[d], &s) != CUDA_SUCCESS ||
		    cur_dev() != d) {
			atomic_fetch_add(&thread_errors, 1);
			continue;
		}
		gdr_cuda_leave(&s);
		fake_CtxGetCurrent(&now);
		if (now != start)
			atomic_fetch_add(&thread_errors, 1);
	}
	return NULL;
}

int main(void)
{
	pthread_t th[6];
	int d, st, i;

	gdr_cuda_use_syms(&fake_syms);
	CHECK(gdr_cuda_get(NULL, 0) && gdr_cuda_get(NULL, 0)->device_count ==
	      FAKE_DEVS, "the fake CUDA loads with %d devices", FAKE_DEVS);
	allocate();
	/* The library's own reference comes first, so that the releases
	 * of the application's references below destroy nothing. */
	for (d = 0; d < FAKE_DEVS; d++)
		enter_device(d, START_NONE);
	for (d = 0; d < FAKE_DEVS; d++) {
		for (st = 0; st < NR_STARTS; st++) {
			enter_device(d, st);
			enter_owner(d, legacy[d], st);
			enter_owner(d, vmm[d], st);
		}
	}
	failures();
	nesting();

	for (d = 0; d < FAKE_DEVS; d++)
		fake_user[d][3] = (struct CUctx_st){ d, 1, 0 };
	for (i = 0; i < 6; i++)
		pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
	for (i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	CHECK(atomic_load(&thread_errors) == 0,
	      "%d wrong contexts in concurrent threads",
	      atomic_load(&thread_errors));

	for (d = 0; d < FAKE_DEVS; d++)
		CHECK(fake_primary_created[d] == 1 && fake_primary_refs[d] == 1,
		      "device %d's primary context created %d times, %d references held: once, and kept",
		      d, fake_primary_created[d], fake_primary_refs[d]);
	CHECK(atomic_load(&fake_wrong_ctx) == 0,
	      "%d memory calls outside the owner's context",
	      atomic_load(&fake_wrong_ctx));
	return test_done();
}
