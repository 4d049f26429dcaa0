/* SPDX-License-Identifier: MIT */
/*
 * pplat's GPU side, as PTX text loaded with cuModuleLoadData, so building
 * needs no nvcc (the driver compiles it for the GPU at load time).
 *
 * pingpong(u32 *flag, u32 *answer, u32 n, u64 timeout_ns): one thread;
 * for i = 1..n it polls *flag (volatile: every poll reaches memory, be it
 * video memory or pinned host memory) until it reads i, then stores i to
 * *answer (pinned host memory).  If no new value arrives for timeout_ns
 * (the GPU's global timer), it gives up, so a CPU side that died never
 * leaves a kernel spinning.
 */
#ifndef GDRMAP_TOOLS_PPLAT_PTX_H
#define GDRMAP_TOOLS_PPLAT_PTX_H

static const char pplat_ptx[] =
	".version 7.8\n"
	".target sm_80\n"
	".address_size 64\n"
	"\n"
	".visible .entry pingpong(.param .u64 flag, .param .u64 answer,\n"
	"			  .param .u32 n, .param .u64 timeout_ns)\n"
	"{\n"
	"	.reg .u64 %rd<8>;\n"
	"	.reg .u32 %r<4>;\n"
	"	.reg .pred %p<4>;\n"
	"\n"
	"	ld.param.u64 %rd1, [flag];\n"
	"	ld.param.u64 %rd2, [answer];\n"
	"	ld.param.u32 %r1, [n];\n"
	"	ld.param.u64 %rd3, [timeout_ns];\n"
	"	cvta.to.global.u64 %rd1, %rd1;\n"
	"	cvta.to.global.u64 %rd2, %rd2;\n"
	"	mov.u32 %r2, 1;\n"
	"NEXT:\n"
	"	setp.gt.u32 %p1, %r2, %r1;\n"
	"	@%p1 bra DONE;\n"
	"	mov.u64 %rd4, %globaltimer;\n"
	"WAIT:\n"
	"	ld.volatile.global.u32 %r3, [%rd1];\n"
	"	setp.eq.u32 %p2, %r3, %r2;\n"
	"	@%p2 bra GOT;\n"
	"	mov.u64 %rd5, %globaltimer;\n"
	"	sub.u64 %rd6, %rd5, %rd4;\n"
	"	setp.gt.u64 %p3, %rd6, %rd3;\n"
	"	@%p3 bra DONE;\n"
	"	bra WAIT;\n"
	"GOT:\n"
	"	st.volatile.global.u32 [%rd2], %r2;\n"
	"	add.u32 %r2, %r2, 1;\n"
	"	bra NEXT;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

#endif /* GDRMAP_TOOLS_PPLAT_PTX_H */
