/* SPDX-License-Identifier: MIT */
/*
 * The few CUDA driver API declarations gdrmap needs, written in-tree from
 * the API's documented names, values and layouts, so that nothing here
 * needs the CUDA toolkit to build.  libgdrapi loads libcuda.so.1 at run
 * time (dlopen) and calls through pointers of these types; the simulated
 * GPU's libcuda shim (sim/libcuda) implements them; test programs call them.
 *
 * Only what is used is declared.  Values are the driver API's (CUDA 12/13).
 */
#ifndef GDRMAP_CUDA_DEFS_H
#define GDRMAP_CUDA_DEFS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUmemGenericAllocationHandle;

typedef struct CUuuid_st {
	char bytes[16];
} CUuuid;

/* CUresult values */
#define CUDA_SUCCESS				0
#define CUDA_ERROR_INVALID_VALUE		1
#define CUDA_ERROR_OUT_OF_MEMORY		2
#define CUDA_ERROR_NOT_INITIALIZED		3
#define CUDA_ERROR_DEINITIALIZED		4
#define CUDA_ERROR_STUB_LIBRARY			34
#define CUDA_ERROR_NO_DEVICE			100
#define CUDA_ERROR_INVALID_DEVICE		101
#define CUDA_ERROR_INVALID_CONTEXT		201
#define CUDA_ERROR_CONTEXT_ALREADY_CURRENT	202
#define CUDA_ERROR_MAP_FAILED			205
#define CUDA_ERROR_ALREADY_MAPPED		208
#define CUDA_ERROR_NOT_MAPPED			211
#define CUDA_ERROR_INVALID_HANDLE		400
#define CUDA_ERROR_NOT_FOUND			500
#define CUDA_ERROR_NOT_READY			600
#define CUDA_ERROR_ILLEGAL_ADDRESS		700
#define CUDA_ERROR_NOT_PERMITTED		800
#define CUDA_ERROR_NOT_SUPPORTED		801
#define CUDA_ERROR_CONTEXT_IS_DESTROYED		709
#define CUDA_ERROR_SYSTEM_DRIVER_MISMATCH	803
#define CUDA_ERROR_UNKNOWN			999

/* CUdevice_attribute values */
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK			1
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X				2
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y				3
#define CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z				4
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X				5
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y				6
#define CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z				7
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK			8
#define CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY			9
#define CU_DEVICE_ATTRIBUTE_WARP_SIZE					10
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE					13
#define CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE				36
#define CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH			37
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT			16
#define CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY				19
#define CU_DEVICE_ATTRIBUTE_PCI_BUS_ID					33
#define CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID				34
#define CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING				41
#define CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID				50
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR			75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR			76
#define CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES	100
#define CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED		102
#define CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED	103
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED	110
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED			116
#define CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS	117
#define CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED				124

/* CUpointer_attribute values */
typedef int CUpointer_attribute;
#define CU_POINTER_ATTRIBUTE_CONTEXT			1
#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE		2
#define CU_POINTER_ATTRIBUTE_DEVICE_POINTER		3
#define CU_POINTER_ATTRIBUTE_HOST_POINTER		4
#define CU_POINTER_ATTRIBUTE_P2P_TOKENS			5
#define CU_POINTER_ATTRIBUTE_SYNC_MEMOPS		6
#define CU_POINTER_ATTRIBUTE_BUFFER_ID			7
#define CU_POINTER_ATTRIBUTE_IS_MANAGED			8
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL		9
#define CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE	10
#define CU_POINTER_ATTRIBUTE_RANGE_START_ADDR		11
#define CU_POINTER_ATTRIBUTE_RANGE_SIZE			12
#define CU_POINTER_ATTRIBUTE_MAPPED			13
#define CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES	14
#define CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE	15

/* CUmemorytype values */
#define CU_MEMORYTYPE_HOST	1
#define CU_MEMORYTYPE_DEVICE	2

/* CU_POINTER_ATTRIBUTE_P2P_TOKENS result */
typedef struct CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_st {
	unsigned long long p2pToken;
	unsigned int vaSpaceToken;
} CUDA_POINTER_ATTRIBUTE_P2P_TOKENS;

/* cuCtxCreate_v4 parameters (CUDA 13); the pointed-to types are opaque here. */
typedef struct CUctxCreateParams_st {
	void *execAffinityParams;
	int numExecAffinityParams;
	void *cigParams;
} CUctxCreateParams;

/* cuGetProcAddress */
typedef unsigned long long cuuint64_t;
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM		(1 << 0)
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM	(1 << 1)
typedef int CUdriverProcAddressQueryResult;
#define CU_GET_PROC_ADDRESS_SUCCESS			0
#define CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND		1

/* Virtual memory management (cuMemCreate and friends) */
typedef int CUmemAllocationHandleType;
#define CU_MEM_HANDLE_TYPE_NONE			0x0
#define CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR	0x1

typedef int CUmemAllocationType;
#define CU_MEM_ALLOCATION_TYPE_PINNED		0x1

typedef int CUmemLocationType;
#define CU_MEM_LOCATION_TYPE_DEVICE		0x1

typedef int CUmemAccess_flags;
#define CU_MEM_ACCESS_FLAGS_PROT_NONE		0x0
#define CU_MEM_ACCESS_FLAGS_PROT_READ		0x1
#define CU_MEM_ACCESS_FLAGS_PROT_READWRITE	0x3

typedef int CUmemAllocationGranularity_flags;
#define CU_MEM_ALLOC_GRANULARITY_MINIMUM	0x0
#define CU_MEM_ALLOC_GRANULARITY_RECOMMENDED	0x1

typedef int CUmemRangeHandleType;
#define CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD	0x1
#define CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE	0x1

typedef struct CUmemLocation_st {
	CUmemLocationType type;
	int id;
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
	CUmemAllocationType type;
	CUmemAllocationHandleType requestedHandleTypes;
	CUmemLocation location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc_st {
	CUmemLocation location;
	CUmemAccess_flags flags;
} CUmemAccessDesc;

/*
 * Prototypes, under the symbol names libcuda.so.1 exports.  Where cuda.h
 * maps a name to a versioned symbol (cuMemAlloc -> cuMemAlloc_v2), the
 * versioned symbol is the one declared; the macro below gives source code
 * the usual name.
 */
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGet(CUdevice *dev, int ordinal);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev);
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxGetCurrent(CUcontext *pctx);
CUresult cuCtxGetDevice(CUdevice *dev);
CUresult cuCtxSynchronize(void);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
CUresult cuMemFreeHost(void *p);
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char uc, size_t n);
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t n);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size,
				 CUdeviceptr dptr);
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
			       CUdeviceptr ptr);
CUresult cuPointerGetAttributes(unsigned int count,
				CUpointer_attribute *attributes, void **data,
				CUdeviceptr ptr);
CUresult cuPointerSetAttribute(const void *value,
			       CUpointer_attribute attribute, CUdeviceptr ptr);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
			     CUdeviceptr addr, unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle,
		  unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
			const CUmemAccessDesc *desc, size_t count);
CUresult cuMemGetAllocationGranularity(size_t *granularity,
				       const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option);
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
				     void *addr);
CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
					CUmemGenericAllocationHandle handle);
CUresult cuMemExportToShareableHandle(void *shareable,
				      CUmemGenericAllocationHandle handle,
				      CUmemAllocationHandleType type,
				      unsigned long long flags);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
			  cuuint64_t flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
			     cuuint64_t flags,
			     CUdriverProcAddressQueryResult *symbolStatus);
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags,
				    int *active);
CUresult cuCtxCreate_v3(CUcontext *pctx, void *paramsArray, int numParams,
			unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params,
			unsigned int flags, CUdevice dev);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext *pctx);
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short us, size_t n);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuGetErrorName(CUresult error, const char **str);
CUresult cuGetErrorString(CUresult error, const char **str);

/* dma-buf export (gdrmap's dmabuf backend) */
CUresult cuMemGetHandleForAddressRange(void *handle, CUdeviceptr dptr,
				       size_t size,
				       CUmemRangeHandleType handleType,
				       unsigned long long flags);

/* Kernels, streams and managed memory (tests and tools on a real GPU) */
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
#define CU_MEM_ATTACH_GLOBAL	0x1
#define CU_MEM_ATTACH_HOST	0x2
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleUnload(CUmodule module);
CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module,
			     const char *name);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridX, unsigned int gridY,
			unsigned int gridZ, unsigned int blockX,
			unsigned int blockY, unsigned int blockZ,
			unsigned int sharedMemBytes, CUstream stream,
			void **kernelParams, void **extra);
CUresult cuStreamCreate(CUstream *stream, unsigned int flags);
CUresult cuStreamDestroy_v2(CUstream stream);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
			      CUstream stream);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
			      CUstream stream);
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags);
/* cuStreamCreate: no implicit synchronisation with the NULL stream */
#define CU_STREAM_NON_BLOCKING	0x1
/* Events: a point in a stream's work that a thread can wait for. */
typedef struct CUevent_st *CUevent;
#define CU_EVENT_DISABLE_TIMING	0x2
CUresult cuEventCreate(CUevent *event, unsigned int flags);
CUresult cuEventDestroy_v2(CUevent event);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventSynchronize(CUevent event);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
			   unsigned int flags);

#ifndef GDRMAP_CUDA_NO_NAME_MACROS
#define cuDevicePrimaryCtxRelease	cuDevicePrimaryCtxRelease_v2
#define cuDeviceTotalMem		cuDeviceTotalMem_v2
#define cuCtxCreate			cuCtxCreate_v2
#define cuCtxDestroy			cuCtxDestroy_v2
#define cuMemAlloc			cuMemAlloc_v2
#define cuMemFree			cuMemFree_v2
#define cuMemAllocHost			cuMemAllocHost_v2
#define cuMemsetD8			cuMemsetD8_v2
#define cuMemsetD32			cuMemsetD32_v2
#define cuMemsetD16			cuMemsetD16_v2
#define cuMemcpyDtoD			cuMemcpyDtoD_v2
#define cuCtxPushCurrent		cuCtxPushCurrent_v2
#define cuCtxPopCurrent			cuCtxPopCurrent_v2
#define cuMemcpyHtoD			cuMemcpyHtoD_v2
#define cuMemcpyDtoH			cuMemcpyDtoH_v2
#define cuMemGetAddressRange		cuMemGetAddressRange_v2
#define cuStreamDestroy			cuStreamDestroy_v2
#define cuMemcpyHtoDAsync		cuMemcpyHtoDAsync_v2
#define cuMemcpyDtoHAsync		cuMemcpyDtoHAsync_v2
#endif

#ifdef __cplusplus
}
#endif

#endif /* GDRMAP_CUDA_DEFS_H */
