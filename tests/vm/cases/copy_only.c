/* SPDX-License-Identifier: MIT */
/*
 * Copy-only pins (lib/paths/copy_only_pins.h) on the simulated GPUs, with the
 * dmabuf backend (GDRMAP_BACKEND=dmabuf, nvsim's dmabuf=1; set and restored):
 * one dma-buf covers one allocation, so the 64 KiB window UCX pins around
 * a 16-byte cuMemAlloc buffer cannot be exported and is pinned copy-only.
 * On every GPU, the buffers allocated in a context created on it (the
 * shim copies legacy memory only from its own context, the stricter
 * reading of the driver), from a thread whose current context is each
 * possible one: the window pins and maps, gdr_get_info says it has no CPU
 * mapping, the buffer is written and read through gdr_copy_* (checked
 * with cuMemcpy, poison around it kept), a load through the pointer
 * faults, and the caller's context is the same after every call.  Then
 * GDRMAP_COPY_ONLY=0 refuses the pin and says so, and no dma-buf is left.
 */
#include "multigpu.h"

#define LIB_CTX(expr, want, ctx)					\
	do {								\
		CHECK_RET(expr, want);					\
		CHECK(current_ctx() == (ctx),				\
		      "%s changed the current context", #expr);		\
	} while (0)

/* The window around small, from context c; data checked both ways. */
static void window(gdr_t g, CUcontext owner, CUdeviceptr small,
		   const struct vm_ctx *c, unsigned int seed)
{
	CUdeviceptr start = small & ~(CUdeviceptr)(GPU_PAGE - 1);
	uint8_t buf[16 + 2], check_buf[16];
	gdr_info_t info;
	gdr_mh_t mh;
	char *va = NULL, *p;
	long bad;

	CU_OK(cuCtxSetCurrent(c->ctx));
	LIB_CTX(gdr_pin_buffer(g, start, GPU_PAGE, 0, 0, &mh), 0, c->ctx);
	LIB_CTX(gdr_map(g, mh, (void **)&va, GPU_PAGE), 0, c->ctx);
	LIB_CTX(gdr_get_info(g, mh, &info), 0, c->ctx);
	CHECK(info.mapping_type == GDR_MAPPING_TYPE_NONE && !info.mapped,
	      "from %s: copy-only (mapping type %d)", c->name,
	      info.mapping_type);
	if (!va)
		return;
	p = va + (small - info.va);

	fill_pattern(buf + 1, 16, seed);
	LIB_CTX(gdr_copy_to_mapping(mh, p, buf + 1, 16), 0, c->ctx);
	CU_OK(cuCtxSetCurrent(owner));
	CU_OK(cuMemcpyDtoH(check_buf, small, 16));
	bad = find_mismatch(check_buf, 16, seed);
	CHECK(bad < 0, "from %s: written byte %ld wrong", c->name, bad);
	gpu_fill(small, 16, seed + 1);
	CU_OK(cuCtxSetCurrent(c->ctx));
	memset(buf, 0xA5, sizeof(buf));
	LIB_CTX(gdr_copy_from_mapping(mh, buf + 1, p, 16), 0, c->ctx);
	bad = find_mismatch(buf + 1, 16, seed + 1);
	CHECK(bad < 0 && buf[0] == 0xA5 && buf[17] == 0xA5,
	      "from %s: read byte %ld wrong", c->name, bad);
	CHECK(read_faults((const volatile uint8_t *)p, buf) == SIGSEGV,
	      "from %s: a load through the pointer faults", c->name);
	LIB_CTX(gdr_unmap(g, mh, va, GPU_PAGE), 0, c->ctx);
	LIB_CTX(gdr_unpin_buffer(g, mh), 0, c->ctx);
}

int main(void)
{
	struct vm_ctx ctxs[1 + 2 * MAX_GPUS];
	CUdeviceptr small[MAX_GPUS][3];
	CUcontext owner[MAX_GPUS];
	unsigned int seed = 7;
	int ngpus, nctx, k, j, i;
	gdr_mh_t mh;
	gdr_t g;

	ngpus = multi_init(1);
	nctx = vm_contexts(ctxs, ngpus);
	vm_use_dmabuf_backend();
	g = gdr_open();
	REQUIRE(g, "gdr_open with GDRMAP_BACKEND=dmabuf failed: %s",
		gdrmap_last_error());

	for (k = 0; k < ngpus; k++) {
		CU_OK(cuCtxCreate(&owner[k], 0, k));	/* current now */
		for (i = 0; i < 3; i++)
			CU_OK(cuMemAlloc(&small[k][i], 16));
		CU_OK(cuCtxPopCurrent(NULL));
		for (j = 0; j < nctx; j++, seed += 2)
			window(g, owner[k], small[k][1], &ctxs[j], seed);
	}

	/* GDRMAP_COPY_ONLY=0: refused, the setting named. */
	REQUIRE(setenv("GDRMAP_COPY_ONLY", "0", 1) == 0, "setenv");
	CHECK_RET(gdr_pin_buffer(g, small[0][1] & ~(CUdeviceptr)(GPU_PAGE - 1),
				 GPU_PAGE, 0, 0, &mh), EINVAL);
	CHECK(strstr(gdrmap_last_error(), "GDRMAP_COPY_ONLY=0") != NULL,
	      "the refusal names GDRMAP_COPY_ONLY=0: %s", gdrmap_last_error());
	unsetenv("GDRMAP_COPY_ONLY");

	CHECK_RET(gdr_close(g), 0);
	for (k = 0; k < ngpus; k++)
		CU_OK(cuCtxDestroy(owner[k]));
	CHECK(nvsim_count("dmabufs") == 0, "nvsim dmabufs %ld at the end",
	      nvsim_count("dmabufs"));
	return test_done();
}
