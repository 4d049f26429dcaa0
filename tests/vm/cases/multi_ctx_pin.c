/* SPDX-License-Identifier: MIT */
/*
 * Memory of every GPU k, cuMemAlloc and VMM, pinned, mapped and copied
 * both ways through libgdrapi (its default backend: gdrdrv here) from a
 * thread whose current context is each possible one j: none, each GPU's
 * primary context, a context created on each.  The thread's context is
 * the same after every call, and the data right byte for byte.
 */
#include "multigpu.h"

int main(void)
{
	struct vm_ctx ctxs[1 + 2 * MAX_GPUS];
	struct vm_mem m;
	unsigned int seed = 1;
	int ngpus, nctx, k, j, vmm;
	gdr_t g;

	ngpus = multi_init(1);
	nctx = vm_contexts(ctxs, ngpus);

	CU_OK(cuCtxSetCurrent(NULL));
	g = gdr_open();
	REQUIRE(g, "gdr_open failed: %s", gdrmap_last_error());
	CHECK(current_ctx() == NULL, "gdr_open made a context current");
	vm_cuda_init();

	for (k = 0; k < ngpus; k++) {
		for (vmm = 0; vmm < 2; vmm++) {
			vm_mem_alloc(&m, k, vmm);
			for (j = 0; j < nctx; j++, seed += 2)
				pin_from_context(g, &m, &ctxs[j],
						 GPU_PAGE + 100,
						 3 * GPU_PAGE + 3, seed);
			vm_mem_free(&m);
		}
	}
	CHECK_RET(gdr_close(g), 0);
	CHECK(nvsim_count("outstanding_pins") == 0,
	      "nvsim outstanding_pins %ld at the end",
	      nvsim_count("outstanding_pins"));
	return test_done();
}
