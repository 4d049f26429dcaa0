/* SPDX-License-Identifier: MIT */
/*
 * GPU code for the tests, as PTX text loaded with cuModuleLoadData, so
 * that building needs no nvcc.
 *
 * count_until_stop(u64 *counter, u32 *stop): one thread adds 1 to
 * *counter and stores it, without pause, until *stop becomes non-zero;
 * volatile accesses so every value reaches memory.
 */
#ifndef GDRMAP_TEST_KERNELS_H
#define GDRMAP_TEST_KERNELS_H

static const char test_kernels_ptx[] =
	".version 7.8\n"
	".target sm_80\n"
	".address_size 64\n"
	"\n"
	".visible .entry count_until_stop(.param .u64 counter,\n"
	"				  .param .u64 stop)\n"
	"{\n"
	"	.reg .u64 %rd<5>;\n"
	"	.reg .u32 %r<2>;\n"
	"	.reg .pred %p<2>;\n"
	"\n"
	"	ld.param.u64 %rd1, [counter];\n"
	"	ld.param.u64 %rd2, [stop];\n"
	"	cvta.to.global.u64 %rd1, %rd1;\n"
	"	cvta.to.global.u64 %rd2, %rd2;\n"
	"	mov.u64 %rd3, 0;\n"
	"LOOP:\n"
	"	add.u64 %rd3, %rd3, 1;\n"
	"	st.volatile.global.u64 [%rd1], %rd3;\n"
	"	ld.volatile.global.u32 %r1, [%rd2];\n"
	"	setp.eq.u32 %p1, %r1, 0;\n"
	"	@%p1 bra LOOP;\n"
	"	ret;\n"
	"}\n";

#endif /* GDRMAP_TEST_KERNELS_H */
