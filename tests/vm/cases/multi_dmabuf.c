/* SPDX-License-Identifier: MIT */
/*
 * The dmabuf backend (GDRMAP_BACKEND=dmabuf, nvsim's dmabuf=1) on every
 * GPU: memory of GPU k, cuMemAlloc and VMM, pinned, mapped and copied both
 * ways from a thread whose current context is each possible one j (none,
 * each GPU's primary, one created on each).  The dma-buf export is a CUDA
 * call made for the pointer, so it must run in the owner's context; the
 * caller's context is the same afterwards.  Sets nvsim's parameter itself
 * and restores it.
 */
#include "multigpu.h"

int main(void)
{
	struct vm_ctx ctxs[1 + 2 * MAX_GPUS];
	struct vm_mem m;
	unsigned int seed = 1;
	int ngpus, nctx, k, j, vmm, backend = 0;
	CUcontext opener;
	gdr_t g;

	ngpus = multi_init(1);
	nctx = vm_contexts(ctxs, ngpus);
	vm_use_dmabuf_backend();

	/* Opened (and probed) under the last GPU's created context. */
	opener = ctxs[nctx - 1].ctx;
	CU_OK(cuCtxSetCurrent(opener));
	g = gdr_open();
	REQUIRE(g, "gdr_open with GDRMAP_BACKEND=dmabuf failed: %s",
		gdrmap_last_error());
	CHECK(current_ctx() == opener, "gdr_open changed the current context");
	CHECK_RET(gdr_get_attribute(g, GDRMAP_ATTR_BACKEND, &backend), 0);
	REQUIRE(backend == GDRMAP_BACKEND_DMABUF, "backend %d, want dmabuf",
		backend);
	vm_cuda_init();

	for (k = 0; k < ngpus; k++) {
		for (vmm = 0; vmm < 2; vmm++) {
			vm_mem_alloc(&m, k, vmm);
			for (j = 0; j < nctx; j++, seed += 2)
				pin_from_context(g, &m, &ctxs[j], 4096 + 100,
						 2 * GPU_PAGE + 3, seed);
			vm_mem_free(&m);
		}
	}
	CHECK_RET(gdr_close(g), 0);
	CHECK(nvsim_count("dmabufs") == 0, "nvsim dmabufs %ld at the end",
	      nvsim_count("dmabufs"));
	return test_done();
}
