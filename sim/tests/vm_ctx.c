// SPDX-License-Identifier: MIT
/*
 * The simulated GPUs' contexts, device by device (inside the VM, nvsim.ko
 * loaded; every pair of GPUs when there are several): each device its own
 * primary context, memory on the device it was asked of, and which query
 * answers about whose memory under which current context, as NVIDIA's
 * driver answers (sim/README.md, "Several GPUs and their contexts";
 * bench/probes/cuda_ctx_probe.c prints the same table on a real machine).
 * Turns nvsim's dmabuf parameter on for the export column, and restores it.
 */
#include <stdbool.h>
#include <sys/mman.h>

#include "vm_sim.h"

#define MAXDEV 4
#define SIZE (2 * SIM_MIB)

struct mem {
	char name[32];
	CUdeviceptr p;
	int dev;
	bool vmm;
	CUcontext owner;	/* allocating context; NULL for VMM memory */
};

struct cur {
	char name[32];
	CUcontext c;		/* NULL: no current context */
	int dev;		/* -1 with no context */
};

static struct mem mems[3 * MAXDEV];
static struct cur curs[1 + 2 * MAXDEV];
static int nmem, ncur;
static CUcontext prim0;		/* device 0's primary context */

/* What cuMemGetAddressRange answers. */
static CUresult want_range(const struct cur *c, const struct mem *m)
{
	if (c->dev < 0)
		return CUDA_ERROR_INVALID_CONTEXT;
	return c->dev == m->dev ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

static void query(const struct cur *c, const struct mem *m)
{
	CUmemGenericAllocationHandle h = 0;
	CUmemAllocationProp prop;
	unsigned long long types = 7;
	unsigned int type = 0;
	CUdeviceptr start = 0, base = 0;
	CUcontext got = (CUcontext)&types, now;
	size_t size = 0;
	int ord = -1, fd = -1;
	CUresult r, want = want_range(c, m);

	CU_OK(cuCtxSetCurrent(c->c));
	/* Pointer attributes answer under any context, or none. */
	r = cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				  m->p + 5);
	CHECK(r == CUDA_SUCCESS && ord == m->dev,
	      "%s, %s: DEVICE_ORDINAL %d (%d), want %d", c->name, m->name,
	      ord, r, m->dev);
	r = cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_CONTEXT, m->p);
	CHECK(r == CUDA_SUCCESS && got == m->owner,
	      "%s, %s: CONTEXT %p (%d), want %p", c->name, m->name,
	      (void *)got, r, (void *)m->owner);
	r = cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
				  m->p + 100);
	CHECK(r == CUDA_SUCCESS && start == m->p,
	      "%s, %s: RANGE_START_ADDR %#llx (%d)", c->name, m->name, start, r);
	r = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m->p);
	CHECK(r == CUDA_SUCCESS && type == CU_MEMORYTYPE_DEVICE,
	      "%s, %s: MEMORY_TYPE %u (%d)", c->name, m->name, type, r);
	r = cuPointerGetAttribute(&types, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES,
				  m->p);
	CHECK(r == CUDA_SUCCESS && types == 0,
	      "%s, %s: ALLOWED_HANDLE_TYPES %llu (%d)", c->name, m->name,
	      types, r);

	/* The address range: only under a context of the owner. */
	r = cuMemGetAddressRange(&base, &size, m->p + 100);
	CHECK(r == want, "%s, %s: cuMemGetAddressRange %d, want %d", c->name,
	      m->name, r, want);
	if (r == CUDA_SUCCESS)
		CHECK(base == m->p && size == SIZE, "%s, %s: range %#llx+%zu",
		      c->name, m->name, base, size);

	/* VMM memory's handle under any context; legacy memory has none. */
	r = cuMemRetainAllocationHandle(&h, (void *)(uintptr_t)m->p);
	CHECK(r == (m->vmm ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE),
	      "%s, %s: cuMemRetainAllocationHandle %d", c->name, m->name, r);
	if (r == CUDA_SUCCESS) {
		memset(&prop, 0, sizeof(prop));
		CU_OK(cuMemGetAllocationPropertiesFromHandle(&prop, h));
		CHECK(prop.location.id == m->dev, "%s, %s: handle on device %d",
		      c->name, m->name, prop.location.id);
		CU_OK(cuMemRelease(h));
	}

	/* dma-buf export: under any context, unlike the address range. */
	want = c->dev < 0 ? CUDA_ERROR_INVALID_CONTEXT : CUDA_SUCCESS;
	r = cuMemGetHandleForAddressRange(&fd, m->p, SIM_PAGE,
					  CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	CHECK(r == want, "%s, %s: cuMemGetHandleForAddressRange %d, want %d",
	      c->name, m->name, r, want);
	if (r == CUDA_SUCCESS)
		close(fd);

	CU_OK(cuCtxGetCurrent(&now));
	CHECK(now == c->c, "%s, %s: the queries changed the current context",
	      c->name, m->name);
}

/* Memory of each kind on device d; its contexts. */
static void setup_device(int d)
{
	CUcontext prim = gpu_primary(d), user;
	CUdevice dev = -1;
	CUdeviceptr p;
	int ord = -1;
	long allocs = nvsim_gpu_count(d, "allocations");

	CU_OK(cuCtxSetCurrent(prim));
	CU_OK(cuCtxGetDevice(&dev));
	CHECK(dev == d, "primary context of %d is on device %d", d, dev);
	CU_OK(cuMemAlloc(&p, SIZE));
	mems[nmem++] = (struct mem){ "", p, d, false, prim };
	snprintf(mems[nmem - 1].name, 32, "legacy@%d", d);
	CHECK(nvsim_gpu_count(d, "allocations") == allocs + 1,
	      "cuMemAlloc under device %d's context: allocations %ld, was %ld",
	      d, nvsim_gpu_count(d, "allocations"), allocs);

	/* cuMemCreate: on the location asked for, whatever is current. */
	CU_OK(cuCtxSetCurrent(prim0));
	p = vmm_alloc(d, SIZE);
	mems[nmem++] = (struct mem){ "", p, d, true, NULL };
	snprintf(mems[nmem - 1].name, 32, "vmm@%d", d);
	CU_OK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
	CHECK(ord == d, "cuMemCreate on %d under device 0's context: on %d",
	      d, ord);

	CU_OK(cuCtxCreate(&user, 0, d));	/* pushed: now current */
	CU_OK(cuCtxGetDevice(&dev));
	CHECK(dev == d, "created context of %d is on device %d", d, dev);
	CU_OK(cuMemAlloc(&p, SIZE));
	mems[nmem++] = (struct mem){ "", p, d, false, user };
	snprintf(mems[nmem - 1].name, 32, "legacy-user@%d", d);
	CU_OK(cuCtxSetCurrent(NULL));

	curs[ncur] = (struct cur){ "", prim, d };
	snprintf(curs[ncur++].name, 32, "primary@%d", d);
	curs[ncur] = (struct cur){ "", user, d };
	snprintf(curs[ncur++].name, 32, "user@%d", d);
}

/* Each device's primary context is its own, counted on its own. */
static void check_primary_contexts(int n)
{
	unsigned int flags;
	int active, d;
	CUcontext c;

	for (d = 1; d < n; d++) {
		CU_OK(cuDevicePrimaryCtxGetState(d, &flags, &active));
		CHECK(!active, "device %d active before its retain", d);
	}
	if (n < 2)
		return;
	CU_OK(cuDevicePrimaryCtxRetain(&c, 1));
	CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
	CHECK(active, "device 1 inactive after its retain");
	CHECK(c != prim0, "devices 0 and 1 share a primary context");
	CU_OK(cuDevicePrimaryCtxRelease(1));
	CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
	CHECK(!active, "device 1 active after its release");
	CU_OK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	CHECK(active, "device 0 inactive after device 1's release");
	CU_IS(cuDevicePrimaryCtxRelease(1), CUDA_ERROR_INVALID_CONTEXT);
}

/* Copies reach any device's memory from any context (unified addressing). */
static void check_cross_copies(int n)
{
	uint8_t out[512], in[512];

	if (n < 2)
		return;
	CU_OK(cuCtxSetCurrent(prim0));
	sim_fill(out, sizeof(out), 0, 41);
	CU_OK(cuMemcpyHtoD(mems[3].p + 7, out, sizeof(out)));	/* legacy@1 */
	CU_OK(cuMemcpyDtoD(mems[0].p, mems[3].p + 7, sizeof(out)));
	memset(in, 0, sizeof(in));
	CU_OK(cuMemcpyDtoH(in, mems[0].p, sizeof(in)));
	CHECK(sim_mismatch(in, sizeof(in), 0, 41) < 0,
	      "device 1 -> device 0 copy differs at %ld",
	      sim_mismatch(in, sizeof(in), 0, 41));
	CU_OK(cuCtxSetCurrent(NULL));
	CU_IS(cuMemcpyDtoH(in, mems[3].p, sizeof(in)),
	      CUDA_ERROR_INVALID_CONTEXT);
}

/* Releasing device 1's primary context frees its memory, not device 0's. */
static void check_release_frees(int n)
{
	long a0, a1;
	unsigned int type;

	if (n < 2)
		return;
	a0 = nvsim_gpu_count(0, "allocations");
	a1 = nvsim_gpu_count(1, "allocations");
	CU_OK(cuDevicePrimaryCtxRelease(1));	/* setup_device's retain */
	CHECK(nvsim_gpu_count(1, "allocations") == a1 - 1 &&
	      nvsim_gpu_count(0, "allocations") == a0,
	      "after device 1's primary release: allocations %ld/%ld, were %ld/%ld",
	      nvsim_gpu_count(0, "allocations"), nvsim_gpu_count(1, "allocations"),
	      a0, a1);
	CU_IS(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				    mems[3].p), CUDA_ERROR_INVALID_VALUE);
	CU_OK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
				    mems[0].p));
}

int main(void)
{
	int was_on = sim_get_param("dmabuf"), n, d, i, j;

	if (was_on < 0) {
		SKIP("no nvsim dmabuf parameter");
		return test_done();
	}
	prim0 = sim_cuda_init();
	n = gpu_count();
	if (n > MAXDEV)
		n = MAXDEV;
	printf("%d simulated GPUs\n", n);
	REQUIRE(sim_set_param("dmabuf", 1) == 0, "cannot set dmabuf=1");

	curs[ncur++] = (struct cur){ "none", NULL, -1 };
	check_primary_contexts(n);
	for (d = 0; d < n; d++)
		setup_device(d);
	for (i = 0; i < nmem; i++)
		for (j = 0; j < ncur; j++)
			query(&curs[j], &mems[i]);
	check_cross_copies(n);
	check_release_frees(n);

	sim_set_param("dmabuf", was_on);
	return test_done();
}
