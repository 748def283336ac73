// The slice of the CUDA driver API the addon uses, declared by hand and resolved with dlsym from
// libcuda.so.1 at run time: the addon links no CUDA library, so it loads on machines without a
// driver and reports why CUDA is unavailable. test/api_check.cpp compares every declaration with
// cuda.h where the toolkit is installed.
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string>

namespace cu {

using Result = int;
using Device = int;
using DevicePtr = unsigned long long;
struct Ctx_st; using Context = Ctx_st*;
struct Mod_st; using Module = Mod_st*;
struct Func_st; using Function = Func_st*;
struct Stream_st; using Stream = Stream_st*;
struct Event_st; using Event = Event_st*;
struct Graph_st; using Graph = Graph_st*;
struct GraphExec_st; using GraphExec = GraphExec_st*;

constexpr Result SUCCESS = 0;
constexpr Result ERROR_NO_DEVICE = 100;
constexpr Result ERROR_NOT_READY = 600;
constexpr Result ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
constexpr Result ERROR_STREAM_CAPTURE_INVALIDATED = 901;
// Only the capturing thread is restricted: worker threads keep waiting on events during a capture.
constexpr int STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr int STREAM_CAPTURE_STATUS_NONE = 0;
constexpr int ATTR_MULTIPROCESSOR_COUNT = 16;
constexpr int ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int ATTR_COMPUTE_CAPABILITY_MINOR = 76;
constexpr unsigned STREAM_NON_BLOCKING = 1;
constexpr unsigned EVENT_DISABLE_TIMING = 2;
constexpr unsigned MEMHOSTALLOC_PORTABLE = 1;

/** Each entry: our name, the exported symbol, the prototype. */
#define CU_DRIVER_FUNCTIONS(X)                                                                                 \
  X(init, "cuInit", Result (*)(unsigned))                                                                        \
  X(driverGetVersion, "cuDriverGetVersion", Result (*)(int*))                                                    \
  X(getErrorString, "cuGetErrorString", Result (*)(Result, const char**))                                        \
  X(deviceGetCount, "cuDeviceGetCount", Result (*)(int*))                                                        \
  X(deviceGet, "cuDeviceGet", Result (*)(Device*, int))                                                          \
  X(deviceGetName, "cuDeviceGetName", Result (*)(char*, int, Device))                                            \
  X(deviceGetAttribute, "cuDeviceGetAttribute", Result (*)(int*, int, Device))                                   \
  X(deviceTotalMem, "cuDeviceTotalMem_v2", Result (*)(size_t*, Device))                                          \
  X(primaryCtxRetain, "cuDevicePrimaryCtxRetain", Result (*)(Context*, Device))                                  \
  X(ctxSetCurrent, "cuCtxSetCurrent", Result (*)(Context))                                                       \
  X(memGetInfo, "cuMemGetInfo_v2", Result (*)(size_t*, size_t*))                                                 \
  X(streamCreate, "cuStreamCreate", Result (*)(Stream*, unsigned))                                               \
  X(streamSynchronize, "cuStreamSynchronize", Result (*)(Stream))                                                \
  X(streamWaitEvent, "cuStreamWaitEvent", Result (*)(Stream, Event, unsigned))                                   \
  X(eventCreate, "cuEventCreate", Result (*)(Event*, unsigned))                                                  \
  X(eventRecord, "cuEventRecord", Result (*)(Event, Stream))                                                     \
  X(eventQuery, "cuEventQuery", Result (*)(Event))                                                               \
  X(eventSynchronize, "cuEventSynchronize", Result (*)(Event))                                                   \
  X(eventDestroy, "cuEventDestroy_v2", Result (*)(Event))                                                        \
  X(memAlloc, "cuMemAlloc_v2", Result (*)(DevicePtr*, size_t))                                                   \
  X(memFree, "cuMemFree_v2", Result (*)(DevicePtr))                                                              \
  X(memHostAlloc, "cuMemHostAlloc", Result (*)(void**, size_t, unsigned))                                        \
  X(memFreeHost, "cuMemFreeHost", Result (*)(void*))                                                             \
  X(memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", Result (*)(DevicePtr, const void*, size_t, Stream))                 \
  X(memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", Result (*)(void*, DevicePtr, size_t, Stream))                       \
  X(memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", Result (*)(DevicePtr, DevicePtr, size_t, Stream))                   \
  X(memsetD8Async, "cuMemsetD8Async", Result (*)(DevicePtr, unsigned char, size_t, Stream))                      \
  X(moduleLoadData, "cuModuleLoadData", Result (*)(Module*, const void*))                                        \
  X(moduleGetFunction, "cuModuleGetFunction", Result (*)(Function*, Module, const char*))                        \
  X(launchKernel, "cuLaunchKernel",                                                                              \
    Result (*)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream, void**, void**))   \
  X(streamBeginCapture, "cuStreamBeginCapture_v2", Result (*)(Stream, int))                                      \
  X(streamEndCapture, "cuStreamEndCapture", Result (*)(Stream, Graph*))                                          \
  X(streamIsCapturing, "cuStreamIsCapturing", Result (*)(Stream, int*))                                          \
  X(graphInstantiate, "cuGraphInstantiateWithFlags", Result (*)(GraphExec*, Graph, unsigned long long))          \
  X(graphLaunch, "cuGraphLaunch", Result (*)(GraphExec, Stream))                                                 \
  X(graphExecDestroy, "cuGraphExecDestroy", Result (*)(GraphExec))                                               \
  X(graphDestroy, "cuGraphDestroy", Result (*)(Graph))

/** The resolved entry points. */
struct Driver {
#define CU_FIELD(name, sym, type) \
  using name##_fn = type;     \
  name##_fn name = nullptr;
  CU_DRIVER_FUNCTIONS(CU_FIELD)
#undef CU_FIELD
  int version = 0;  // cuDriverGetVersion: 1000·major + 10·minor
};

/** The CUDA version this build's fatbin needs from the driver (CUDA 13.0 → 13000). */
constexpr int REQUIRED_DRIVER_VERSION = 13000;

/**
 * dlopen libcuda.so.1, resolve every entry point, cuInit, check the version and count devices.
 * Returns nullptr with `reason` set to the contract's wording when any step fails.
 */
const Driver* loadDriver(std::string& reason, int& deviceCount);

/** "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" style text for an error code. */
std::string errorText(const Driver& d, Result r);

}  // namespace cu
