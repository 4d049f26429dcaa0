// SPDX-License-Identifier: MIT
/*
 * Reads are never stale: a GPU kernel increments a 64-bit counter without
 * pause while the CPU reads it 20,000 times through gdr_copy_from_mapping,
 * at copy sizes 8, 64 and 256 (the counter at the start of the copy).  No
 * read may return a value smaller than the one before it.  GDRCopy 2.6
 * fails this on an H200 (hundreds of backward reads per 20,000).
 * On every GPU, from every kind of current context (gpu.h).
 */
#include <dlfcn.h>
#include <stdio.h>

#include "gpu.h"
#include "kernels.h"

#define READS 20000

static void one_case(const struct gpu_case *c)
{
	static const size_t sizes[] = { 8, 64, 256 };
	unsigned char buf[256 + 64];
	unsigned long base = 0;
	uint64_t prev, now, first = 0, last = 0;
	uint32_t stop = 1;
	CUmodule mod;
	CUfunction fn;
	CUstream stream;
	gdr_info_t info;
	gdr_mh_t mh;
	char *va, *counter, *stopp;
	unsigned int s, i, backwards;
	void *args[2];
	CUdeviceptr dcounter, dstop;
	gdr_t g = c->g;

	if (!gpu_has_kernels()) {
		SKIP("this libcuda runs no kernels");
		return;
	}
	LIB(gdrmap_mem_alloc(c->dev, 1 << 20, &base), 0);
	if (!base)
		return;
	LIB(gdr_pin_buffer(g, base, 4096, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, (void **)&va, 4096), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	counter = va + (base - info.va);
	stopp = counter + 1024;
	dcounter = base;
	dstop = base + 1024;
	CU_ON(c->dev, cu.ModuleLoadData(&mod, test_kernels_ptx));
	CU_ON(c->dev, cu.ModuleGetFunction(&fn, mod, "count_until_stop"));
	/* 0x01 in every byte: the copies must return the counter, not it. */
	memset(buf, 1, sizeof(buf));
	LIB(gdr_copy_to_mapping(mh, counter, buf, 256), 0);
	stop = 0;
	LIB(gdr_copy_to_mapping(mh, stopp, &stop, sizeof(stop)), 0);
	CU_ON(c->dev, cu.StreamCreate(&stream, 1 /* CU_STREAM_NON_BLOCKING */));
	args[0] = &dcounter;
	args[1] = &dstop;
	CU_ON(c->dev, cu.LaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, args,
				      NULL));

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		/* Wait until the kernel runs. */
		for (i = 0; i < 1000000; i++) {
			LIB(gdr_copy_from_mapping(mh, &prev, counter, 8), 0);
			if (prev != 0x0101010101010101ULL)
				break;
		}
		first = prev;
		backwards = 0;
		for (i = 0; i < READS; i++) {
			gdr_copy_from_mapping(mh, buf, counter, sizes[s]);
			memcpy(&now, buf, 8);
			if (now < prev)
				backwards++;
			prev = now;
		}
		last = prev;
		CHECK(last > first, "size %zu: the counter moved (%llu -> %llu)",
		      sizes[s], (unsigned long long)first,
		      (unsigned long long)last);
		CHECK(backwards == 0, "size %zu: %u of %d reads went backwards",
		      sizes[s], backwards, READS);
		printf("GPU %d, %s, size %3zu: %d reads, %u backwards, counter advanced %llu\n",
		       c->dev, gpu_start_names[c->start], sizes[s], READS,
		       backwards,
		       (unsigned long long)(last - first));
	}
	/*
	 * The same test through GDRCopy 2.6's read routine, when GDRCOPY_LIB
	 * names its library: it has no fence, and its backward reads show
	 * that this test sees the hazard it guards against.  Informational:
	 * it counts nothing.
	 */
	if (getenv("GDRCOPY_LIB") && c->start == START_NONE) {
		void *lib = dlopen(getenv("GDRCOPY_LIB"), RTLD_NOW);
		void (*load)(void *, const void *, size_t) = NULL;

		if (lib)
			*(void **)&load = dlsym(lib, "memcpy_uncached_load_avx2");
		for (s = 0; load && s < 2; s++) {
			size_t n = s ? 256 : 64;

			load(buf, counter, n);
			memcpy(&prev, buf, 8);
			for (backwards = 0, i = 0; i < READS; i++) {
				load(buf, counter, n);
				memcpy(&now, buf, 8);
				backwards += now < prev;
				prev = now;
			}
			printf("control, GDRCopy 2.6 load_avx2, size %3zu: %d reads, %u backwards\n",
			       n, READS, backwards);
		}
	}

	stop = 1;
	LIB(gdr_copy_to_mapping(mh, stopp, &stop, sizeof(stop)), 0);
	CU_ON(c->dev, cu.StreamSynchronize(stream));
	CU_ON(c->dev, cu.StreamDestroy(stream));
	CU_ON(c->dev, cu.ModuleUnload(mod));
	LIB(gdr_unmap(g, mh, va, 4096), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
	LIB(gdrmap_mem_free(base), 0);
}

int main(void)
{
	return gpu_run(one_case);
}
