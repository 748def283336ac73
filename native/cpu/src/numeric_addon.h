// The addon's entry points for random numbers, reductions and the fused kernels (their JavaScript
// surface is declared in packages/backend-cpu/src/native.ts):
//   random(out, params)                  Philox4x32-10 uniform or randint values into a Float32Array or Int32Array
//   reduce(op, x, out, params)           sum, max or min over any axes of a strided f32/f16/bf16 x
//   softmax(x, out, params)              float32 softmax or log-softmax of contiguous rows
//   crossEntropy(x, target, out, params) float32 per-row cross entropy against int32 targets
//   adamw(p, g, m, v, vmax, params)      one float32 Adam/AdamW update in place (vmax: a Float32Array or null)
//   adadelta(p, g, v, u, params)         one float32 Adadelta update in place
//   rmsprop(p, g, v, b, a, params)       one float32 RMSprop update in place (b, a: a Float32Array or null)
// Each params is a Float64Array laid out as its function below reads it. Every element an entry
// point reaches is checked against its array before anything runs.
#pragma once
#include <napi.h>

namespace core_cpu {

/** Adds random, reduce, softmax, crossEntropy, adamw, adadelta and rmsprop to the addon's exports. */
void addNumericExports(Napi::Env env, Napi::Object exports);

}  // namespace core_cpu
