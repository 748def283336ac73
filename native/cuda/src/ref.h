// A strided view as the TypeScript side passes it, and the error type of the native side.
#pragma once
#include <stdint.h>

#include <stdexcept>

#include "../kernels/args.h"

namespace rt {

/** The largest rank the addon accepts (views are merged down to ck::MAX_DIMS for the kernels). */
constexpr int MAX_REF_DIMS = 16;

/** A strided view as the TypeScript side passes it (TensorRef with the storage's device pointer). */
struct Ref {
  unsigned long long ptr = 0;  // the device address (cu::DevicePtr)
  int dtype = ck::F32;
  int ndim = 0;
  int64_t shape[MAX_REF_DIMS] = {};
  int64_t strides[MAX_REF_DIMS] = {};
  int64_t offset = 0;
  int64_t numel() const { int64_t n = 1; for (int d = 0; d < ndim; d++) n *= shape[d]; return n; }
};

/** An error with the driver's text; the addon turns it into a JS Error. */
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/**
 * Thrown, before anything is queued or changed, by an operation that must not join a stream capture
 * (a host copy, an allocation, cuBLASLt, another device): the prepared program makes that call as a call.
 */
struct NotCapturable : CudaError {
  using CudaError::CudaError;
};

}  // namespace rt
