// SPDX-License-Identifier: MIT
/*
 * Data moves both ways between the CPU mapping and what the GPU sees
 * (cuMemcpy), for pins at unaligned addresses and sizes and copies at
 * unaligned offsets; bytes outside a written range keep their poison.
 * On every GPU, from every kind of current context (gpu.h).
 */
#include <stdio.h>

#include "gpu.h"

#define ALLOC_SIZE	(8UL << 20)
#define POISON		0xDEADBEEFu

static unsigned int seed = 12345;

/* The first byte outside [from, to) that lost the poison, or -1. */
static long poison_lost(const unsigned char *dev, size_t from, size_t to)
{
	const uint32_t poison = POISON;
	const unsigned char *pb = (const unsigned char *)&poison;
	size_t i;

	for (i = 0; i < ALLOC_SIZE; i++) {
		if (i == from)
			i = to;
		if (i < ALLOC_SIZE && dev[i] != pb[i & 3])
			return (long)i;
	}
	return -1;
}

/* One pin of [base + off, +size) of GPU dev and copies inside it. */
static void check_pin(gdr_t g, int dev, CUdeviceptr base, size_t off,
		      size_t size)
{
	unsigned long addr = (unsigned long)base + off;
	unsigned char *data = malloc(size), *back = malloc(size + 128);
	unsigned char *seen = malloc(ALLOC_SIZE);
	gdr_info_t info;
	gdr_mh_t mh;
	char *va, *p;
	size_t sub, n;
	long bad;
	int i;

	if (!data || !back || !seen)
		abort();
	LIB(gdr_pin_buffer(g, addr, size, 0, 0, &mh), 0);
	LIB(gdr_map(g, mh, (void **)&va, size), 0);
	LIB(gdr_get_info(g, mh, &info), 0);
	CHECK(info.va <= addr && addr + size <= info.va + info.mapped_size,
	      "window [0x%llx, +%llu) covers the pin",
	      (unsigned long long)info.va,
	      (unsigned long long)info.mapped_size);
	p = va + (addr - info.va);

	/* GPU -> CPU: the GPU writes, the CPU reads sub-ranges. */
	fill_random(data, size, &seed);
	CU_ON(dev, cu.MemcpyHtoD(addr, data, size));
	/* From pageable memory, cuMemcpyHtoD may return before the data
	 * has landed. */
	CU_ON(dev, cu.CtxSynchronize());
	for (i = 0; i < 8; i++) {
		sub = i == 0 ? 0 : (size_t)rand_r(&seed) % size;
		n = i == 0 ? size : 1 + (size_t)rand_r(&seed) % (size - sub);
		memset(back, 0x5a, n + 128);
		LIB(gdr_copy_from_mapping(mh, back + 64, p + sub, n), 0);
		bad = first_diff(back + 64, data + sub, n);
		CHECK(bad < 0, "read off %zu+%zu size %zu: byte %ld differs",
		      off, sub, n, bad);
		CHECK(back[63] == 0x5a && back[64 + n] == 0x5a,
		      "read off %zu+%zu size %zu wrote outside its destination",
		      off, sub, n);
	}

	/* CPU -> GPU: the CPU writes sub-ranges, the GPU keeps the rest. */
	for (i = 0; i < 8; i++) {
		sub = i == 0 ? 0 : (size_t)rand_r(&seed) % size;
		n = i == 0 ? size : 1 + (size_t)rand_r(&seed) % (size - sub);
		CU_ON(dev, cu.MemsetD32(base, POISON, ALLOC_SIZE / 4));
		CU_ON(dev, cu.CtxSynchronize());
		fill_random(data, n, &seed);
		LIB(gdr_copy_to_mapping(mh, p + sub, data, n), 0);
		CU_ON(dev, cu.MemcpyDtoH(seen, base, ALLOC_SIZE));
		bad = first_diff(seen + off + sub, data, n);
		CHECK(bad < 0, "write off %zu+%zu size %zu: GPU sees byte %ld differ",
		      off, sub, n, bad);
		bad = poison_lost(seen, off + sub, off + sub + n);
		CHECK(bad < 0, "write off %zu+%zu size %zu changed byte %ld outside it",
		      off, sub, n, bad);
	}
	LIB(gdr_unmap(g, mh, va, size), 0);
	LIB(gdr_unpin_buffer(g, mh), 0);
	free(data);
	free(back);
	free(seen);
}

static void one_case(const struct gpu_case *c)
{
	static const struct { size_t off, size; } pins[] = {
		{ 0, ALLOC_SIZE }, { 3, 1000 }, { 65536 - 5, 77 },
		{ (1 << 20) + 12345, 300000 }, { 7, 1 }, { 4095, 2 },
		{ 64, 64 }, { 3, 1024 }, { ALLOC_SIZE - 100, 100 },
	};
	unsigned long base = 0;
	unsigned int i;

	LIB(gdrmap_mem_alloc(c->dev, ALLOC_SIZE, &base), 0);
	if (!base)
		return;
	for (i = 0; i < sizeof(pins) / sizeof(pins[0]); i++)
		check_pin(c->g, c->dev, base, pins[i].off, pins[i].size);
	LIB(gdrmap_mem_free(base), 0);
}

int main(void)
{
	return gpu_run(one_case);
}
