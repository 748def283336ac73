// cuBLASLt, loaded at run time when present (libcublasLt.so.13, else .12): the prototypes and enum
// values below are declared by hand because its headers are not part of the toolkit we build with.
// Values from cublasLt.h / cublas_api.h / library_types.h (CUDA 12–13).
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <string>

#include "driver_api.h"

namespace lt {

using Status = int;
using Handle = struct LtContext*;
using MatmulDesc = struct LtMatmulDescOpaque*;
using MatrixLayout = struct LtMatrixLayoutOpaque*;

constexpr Status SUCCESS = 0;
constexpr int COMPUTE_32F = 68;                 // cublasComputeType_t: fp32 accumulation, no TF32
constexpr int R_32F = 0, R_16F = 2, R_16BF = 14;  // cudaDataType_t
constexpr int DESC_TRANSA = 3, DESC_TRANSB = 4;   // cublasLtMatmulDescAttributes_t
constexpr int LAYOUT_BATCH_COUNT = 5, LAYOUT_STRIDED_BATCH_OFFSET = 6;  // cublasLtMatrixLayoutAttribute_t
constexpr int32_t OP_N = 0, OP_T = 1;            // cublasOperation_t

#define LT_FUNCTIONS(X)                                                                                              \
  X(create, "cublasLtCreate", Status (*)(Handle*))                                                                   \
  X(descCreate, "cublasLtMatmulDescCreate", Status (*)(MatmulDesc*, int, int))                                       \
  X(descDestroy, "cublasLtMatmulDescDestroy", Status (*)(MatmulDesc))                                                \
  X(descSet, "cublasLtMatmulDescSetAttribute", Status (*)(MatmulDesc, int, const void*, size_t))                     \
  X(layoutCreate, "cublasLtMatrixLayoutCreate", Status (*)(MatrixLayout*, int, uint64_t, uint64_t, int64_t))         \
  X(layoutDestroy, "cublasLtMatrixLayoutDestroy", Status (*)(MatrixLayout))                                          \
  X(layoutSet, "cublasLtMatrixLayoutSetAttribute", Status (*)(MatrixLayout, int, const void*, size_t))               \
  X(matmul, "cublasLtMatmul",                                                                                        \
    Status (*)(Handle, MatmulDesc, const void*, const void*, MatrixLayout, const void*, MatrixLayout, const void*,   \
               const void*, MatrixLayout, void*, MatrixLayout, const void*, void*, size_t, cu::Stream))

struct Lib {
#define LT_FIELD(name, sym, type) \
  using name##_fn = type;     \
  name##_fn name = nullptr;
  LT_FUNCTIONS(LT_FIELD)
#undef LT_FIELD
  std::string soname;
};

/** The library, or nullptr with `why` set (not found, or a symbol missing). Loaded once. */
const Lib* load(std::string& why);

}  // namespace lt
