// Compile-time check of src/driver_api.h (declared by hand) against the toolkit's cuda.h: every
// constant has cuda.h's value, every symbol we dlsym exists with the same arity, and every
// parameter has the same size. Built by the package's test script where cuda.h is installed; it
// never links or runs (there may be no driver).
#include <cuda.h>
#include <library_types.h>

#include "../src/cublaslt_api.h"
#include "../src/driver_api.h"

static_assert(cu::SUCCESS == CUDA_SUCCESS, "CUDA_SUCCESS");
static_assert(cu::ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE");
static_assert(cu::ERROR_NOT_READY == CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY");
static_assert(cu::ATTR_MULTIPROCESSOR_COUNT == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count");
static_assert(cu::ATTR_COMPUTE_CAPABILITY_MAJOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cc major");
static_assert(cu::ATTR_COMPUTE_CAPABILITY_MINOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "cc minor");
static_assert(cu::ERROR_STREAM_CAPTURE_UNSUPPORTED == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED");
static_assert(cu::ERROR_STREAM_CAPTURE_INVALIDATED == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED");
static_assert(cu::STREAM_CAPTURE_MODE_THREAD_LOCAL == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, "CU_STREAM_CAPTURE_MODE_THREAD_LOCAL");
static_assert(cu::STREAM_CAPTURE_STATUS_NONE == CU_STREAM_CAPTURE_STATUS_NONE, "CU_STREAM_CAPTURE_STATUS_NONE");
static_assert(sizeof(CUstreamCaptureMode) == sizeof(int) && sizeof(CUstreamCaptureStatus) == sizeof(int), "capture enums are int-sized");
static_assert(cu::STREAM_NON_BLOCKING == CU_STREAM_NON_BLOCKING, "CU_STREAM_NON_BLOCKING");
static_assert(cu::EVENT_DISABLE_TIMING == CU_EVENT_DISABLE_TIMING, "CU_EVENT_DISABLE_TIMING");
static_assert(cu::MEMHOSTALLOC_PORTABLE == CU_MEMHOSTALLOC_PORTABLE, "CU_MEMHOSTALLOC_PORTABLE");
static_assert(sizeof(cu::DevicePtr) == sizeof(CUdeviceptr), "CUdeviceptr");
static_assert(sizeof(cu::Device) == sizeof(CUdevice), "CUdevice");
static_assert(sizeof(cu::Result) == sizeof(CUresult), "CUresult");
// cuBLASLt's data types come from library_types.h, which the toolkit ships without cuBLAS.
static_assert(lt::R_32F == CUDA_R_32F && lt::R_16F == CUDA_R_16F && lt::R_16BF == CUDA_R_16BF, "cudaDataType_t");

namespace {
template <typename R, typename... A>
constexpr size_t arity(R (*)(A...)) { return sizeof...(A); }
template <typename R, typename... A>
constexpr size_t paramBytes(R (*)(A...)) { return (0 + ... + sizeof(A)); }
template <typename R, typename... A>
constexpr size_t resultBytes(R (*)(A...)) { return sizeof(R); }
}  // namespace

// Each entry of CU_DRIVER_FUNCTIONS against the cuda.h declaration of the symbol we dlsym.
#define CHECK(ours, theirs)                                                                                      \
  static_assert(arity((cu::Driver::ours##_fn) nullptr) == arity(&theirs), #theirs " arity");                  \
  static_assert(paramBytes((cu::Driver::ours##_fn) nullptr) == paramBytes(&theirs), #theirs " parameter sizes"); \
  static_assert(resultBytes((cu::Driver::ours##_fn) nullptr) == resultBytes(&theirs), #theirs " result");
CHECK(init, cuInit)
CHECK(driverGetVersion, cuDriverGetVersion)
CHECK(getErrorString, cuGetErrorString)
CHECK(deviceGetCount, cuDeviceGetCount)
CHECK(deviceGet, cuDeviceGet)
CHECK(deviceGetName, cuDeviceGetName)
CHECK(deviceGetAttribute, cuDeviceGetAttribute)
CHECK(deviceTotalMem, cuDeviceTotalMem_v2)
CHECK(primaryCtxRetain, cuDevicePrimaryCtxRetain)
CHECK(ctxSetCurrent, cuCtxSetCurrent)
CHECK(memGetInfo, cuMemGetInfo_v2)
CHECK(streamCreate, cuStreamCreate)
CHECK(streamSynchronize, cuStreamSynchronize)
CHECK(streamWaitEvent, cuStreamWaitEvent)
CHECK(eventCreate, cuEventCreate)
CHECK(eventRecord, cuEventRecord)
CHECK(eventQuery, cuEventQuery)
CHECK(eventSynchronize, cuEventSynchronize)
CHECK(eventDestroy, cuEventDestroy_v2)
CHECK(memAlloc, cuMemAlloc_v2)
CHECK(memFree, cuMemFree_v2)
CHECK(memHostAlloc, cuMemHostAlloc)
CHECK(memFreeHost, cuMemFreeHost)
CHECK(memcpyHtoDAsync, cuMemcpyHtoDAsync_v2)
CHECK(memcpyDtoHAsync, cuMemcpyDtoHAsync_v2)
CHECK(memcpyDtoDAsync, cuMemcpyDtoDAsync_v2)
CHECK(memsetD8Async, cuMemsetD8Async)
CHECK(moduleLoadData, cuModuleLoadData)
CHECK(moduleGetFunction, cuModuleGetFunction)
CHECK(launchKernel, cuLaunchKernel)
// cuda.h maps cuStreamBeginCapture to cuStreamBeginCapture_v2 and cuGraphInstantiate to
// cuGraphInstantiateWithFlags: the symbols we dlsym.
CHECK(streamBeginCapture, cuStreamBeginCapture_v2)
CHECK(streamEndCapture, cuStreamEndCapture)
CHECK(streamIsCapturing, cuStreamIsCapturing)
CHECK(graphInstantiate, cuGraphInstantiateWithFlags)
CHECK(graphLaunch, cuGraphLaunch)
CHECK(graphExecDestroy, cuGraphExecDestroy)
CHECK(graphDestroy, cuGraphDestroy)

// NVRTC (src/nvrtc_api.h), where the toolkit ships nvrtc.h (a toolkit without the NVRTC component has none).
#if __has_include(<nvrtc.h>)
#include <nvrtc.h>

#include "../src/nvrtc_api.h"
static_assert(nv::SUCCESS == NVRTC_SUCCESS, "NVRTC_SUCCESS");
static_assert(nv::ERROR_COMPILATION == NVRTC_ERROR_COMPILATION, "NVRTC_ERROR_COMPILATION");
static_assert(sizeof(nv::Result) == sizeof(nvrtcResult), "nvrtcResult");
static_assert(sizeof(nv::Program) == sizeof(nvrtcProgram), "nvrtcProgram");
#define CHECK_NVRTC(ours, theirs)                                                                                \
  static_assert(arity((nv::Lib::ours##_fn) nullptr) == arity(&theirs), #theirs " arity");                      \
  static_assert(paramBytes((nv::Lib::ours##_fn) nullptr) == paramBytes(&theirs), #theirs " parameter sizes");  \
  static_assert(resultBytes((nv::Lib::ours##_fn) nullptr) == resultBytes(&theirs), #theirs " result");
CHECK_NVRTC(version, nvrtcVersion)
CHECK_NVRTC(getErrorString, nvrtcGetErrorString)
CHECK_NVRTC(createProgram, nvrtcCreateProgram)
CHECK_NVRTC(compileProgram, nvrtcCompileProgram)
CHECK_NVRTC(getProgramLogSize, nvrtcGetProgramLogSize)
CHECK_NVRTC(getProgramLog, nvrtcGetProgramLog)
CHECK_NVRTC(getPTXSize, nvrtcGetPTXSize)
CHECK_NVRTC(getPTX, nvrtcGetPTX)
CHECK_NVRTC(getCUBINSize, nvrtcGetCUBINSize)
CHECK_NVRTC(getCUBIN, nvrtcGetCUBIN)
CHECK_NVRTC(destroyProgram, nvrtcDestroyProgram)
#endif
