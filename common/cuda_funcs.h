/* SPDX-License-Identifier: MIT */
/*
 * Every libcuda.so.1 function the tree calls: the field tables call it by,
 * and its symbol, cu<field> but for those listed here, whose symbol is the
 * versioned one cuda.h maps the name to (the plain one is an older ABI).
 * Each loader's table names the fields it wants, CUDA_FN(X, field), which
 * calls X(field, symbol).
 */
#ifndef GDRMAP_CUDA_FUNCS_H
#define GDRMAP_CUDA_FUNCS_H

#define CUDA_FN(X, field)	X(field, CUDA_FN_NAME(field))
/* The symbol: CUDA_V_<field>, where listed, is ", symbol", which moves
 * the symbol into CUDA_FN_2ND_'s second place ahead of cu<field>. */
#define CUDA_FN_NAME(field)	CUDA_FN_PICK_(CUDA_V_##field, cu##field)
#define CUDA_FN_PICK_(v, plain)	CUDA_FN_2ND_(v, plain, )
#define CUDA_FN_2ND_(a, b, ...)	b
/* A struct cuda_sym (cuda_load.h) for one function, into *fieldp. */
#define CUDA_FN_SYM(field, fieldp)	CUDA_FN_SYM_(CUDA_FN_NAME(field), fieldp)
#define CUDA_FN_SYM_(sym, fieldp)	CUDA_SYM(sym, fieldp)

#define CUDA_V_CtxDestroy		, cuCtxDestroy_v2
#define CUDA_V_CtxPopCurrent		, cuCtxPopCurrent_v2
#define CUDA_V_CtxPushCurrent		, cuCtxPushCurrent_v2
#define CUDA_V_DeviceTotalMem		, cuDeviceTotalMem_v2
#define CUDA_V_EventDestroy		, cuEventDestroy_v2
#define CUDA_V_MemAlloc			, cuMemAlloc_v2
#define CUDA_V_MemAllocHost		, cuMemAllocHost_v2
#define CUDA_V_MemFree			, cuMemFree_v2
#define CUDA_V_MemGetAddressRange	, cuMemGetAddressRange_v2
#define CUDA_V_MemHostRegister		, cuMemHostRegister_v2
#define CUDA_V_MemcpyDtoH		, cuMemcpyDtoH_v2
#define CUDA_V_MemcpyDtoHAsync		, cuMemcpyDtoHAsync_v2
#define CUDA_V_MemcpyHtoD		, cuMemcpyHtoD_v2
#define CUDA_V_MemcpyHtoDAsync		, cuMemcpyHtoDAsync_v2
#define CUDA_V_MemsetD32		, cuMemsetD32_v2
#define CUDA_V_MemsetD8			, cuMemsetD8_v2
#define CUDA_V_StreamDestroy		, cuStreamDestroy_v2

#endif /* GDRMAP_CUDA_FUNCS_H */
