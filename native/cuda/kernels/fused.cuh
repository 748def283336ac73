// Fused composite ops: softmax / logSoftmax along a dim, per-row cross entropy, GradScaler's
// unscale-and-check, the Adam/AdamW update and addcmul (x + t1·t2). All compute in float and round
// once on store (except where the contract asks for the decomposition's intermediate roundings).
#pragma once
#include "common.cuh"
#include "reduce.cuh"

namespace ck {

/** Sum / max of one float per thread over the block; every thread gets the result. */
KF float blockReduce(float v, bool isMax, float* scratch) {
  const int t = threadIdx.x, nt = blockDim.x;
  scratch[t] = v;
  __syncthreads();
  for (int s = nt / 2; s > 0; s >>= 1) {
    if (t < s) {
      float a = scratch[t], b = scratch[t + s];
      scratch[t] = isMax ? ((a != a || b != b) ? a + b : (a > b ? a : b)) : a + b;
    }
    __syncthreads();
  }
  float r = scratch[0];
  __syncthreads();  // everyone has read scratch[0] before it is reused
  return r;
}

/**
 * Rows of length L.inner along the softmax dim (stride innerStrideX[0] in x, `outDimStride` in out);
 * L.outer rows addressed by the kept dims. One block per row.
 */
template <typename T>
__device__ void softmaxKernel(ReduceLayout L, int64_t outDimStride, int logMode, const T* x, T* out) {
  __shared__ float scratch[REDUCE_THREADS];
  const int t = threadIdx.x, nt = blockDim.x;
  const int64_t sx = L.innerStrideX[0];
  for (int64_t row = blockIdx.x; row < L.outer; row += gridDim.x) {
    int64_t ox, oo;
    outerOffsets(L, row, ox, oo);
    float m = -INFINITY;
    for (int64_t j = t; j < L.inner; j += nt) {
      float v = Io<T>::load(x + ox + j * sx);
      m = (v != v || m != m) ? v + m : (v > m ? v : m);
    }
    m = blockReduce(m, true, scratch);
    // A row of -Inf (or +Inf) has no finite max: subtracting it would give NaN where PyTorch's
    // decomposition gives NaN as well, so no special case is needed beyond keeping m as is.
    float s = 0.f;
    for (int64_t j = t; j < L.inner; j += nt) s += expf(Io<T>::load(x + ox + j * sx) - m);
    s = blockReduce(s, false, scratch);
    float logS = logf(s);
    for (int64_t j = t; j < L.inner; j += nt) {
      float d = Io<T>::load(x + ox + j * sx) - m;
      Io<T>::store(out + oo + j * outDimStride, logMode ? d - logS : expf(d) / s);
    }
  }
}


template <typename T>
__device__ void crossEntropyKernel(CrossEntropyArgs a, const T* x, const int32_t* target, T* out) {
  __shared__ float scratch[REDUCE_THREADS];
  const int t = threadIdx.x, nt = blockDim.x;
  for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const T* xr = x + a.xOffset + row * a.xRowStride;
    const int32_t tgt = target[a.tOffset + row * a.tStride];
    float m = -INFINITY, total = 0.f;
    for (int64_t c = t; c < a.classes; c += nt) {
      float v = Io<T>::load(xr + c * a.xClassStride);
      m = (v != v || m != m) ? v + m : (v > m ? v : m);
      total += v;
    }
    m = blockReduce(m, true, scratch);
    total = blockReduce(total, false, scratch);
    float s = 0.f;
    for (int64_t c = t; c < a.classes; c += nt) s += expf(Io<T>::load(xr + c * a.xClassStride) - m);
    s = blockReduce(s, false, scratch);
    if (t == 0) {
      float loss;
      if (tgt == a.ignoreIndex) loss = 0.f;
      else if (tgt < 0 || tgt >= a.classes) loss = NAN;
      else {
        float lse = m + logf(s);
        float eps = a.labelSmoothing;
        loss = lse - (1.f - eps) * Io<T>::load(xr + tgt * a.xClassStride);
        if (eps != 0.f) loss -= (eps / (float)a.classes) * total;
      }
      Io<T>::store(out + a.outOffset + row * a.outStride, loss);
    }
  }
}

/** GS-6: foundInf[0] = 1 if any value is not finite (never cleared); then v *= invScale. */
template <typename T>
__device__ void unscaleKernel(int64_t n, T* g, float* foundInf, const float* invScale) {
  const float s = *invScale;
  CK_GRID_LOOP(i, n) {
    float v = Io<T>::load(g + i);
    if (!(v - v == 0.f)) *foundInf = 1.f;  // Inf − Inf and NaN − NaN are NaN; finite − itself is 0
    Io<T>::store(g + i, v * s);
  }
}

/**
 * out = x + t1·t2 over a strided Layout (slots: 0 out, 1 x, 2 t1, 3 t2), in float for every
 * floating type (half types rounded once on store). nvcc contracts `x + a * b` into an FMA;
 * __fmul_rn and __fadd_rn are never contracted, so the product is rounded to float before the sum,
 * as the decomposition (a mul, then an add) rounds it.
 */
template <typename T>
__device__ void addcmulKernel(Layout L, const T* x, const T* t1, const T* t2, T* out) {
  CK_GRID_LOOP(i, L.numel) {
    int64_t o[4];
    offsetsOf(L, i, o);
    const float product = __fmul_rn(Io<T>::load(t1 + o[2]), Io<T>::load(t2 + o[3]));
    Io<T>::store(out + o[0], __fadd_rn(Io<T>::load(x + o[1]), product));
  }
}

/** Round a float result to T's precision and back, as storing and reloading an intermediate would. */
template <typename T> KF float roundTo(float v) { T tmp; Io<T>::store(&tmp, v); return Io<T>::load(&tmp); }
template <> KF float roundTo<float>(float v) { return v; }


/** ATen's lerp: exact at both ends, the formula picks the side nearer to the weight. */
KF float lerpAten(float start, float end, float w) {
  return w < 0.5f ? start + w * (end - start) : end - (end - start) * (1.f - w);
}

template <typename T>
__device__ void adamKernel(AdamArgs a, T* p, const T* grad, T* m, T* v, T* vmax) {
  CK_GRID_LOOP(i, a.n) {
    float g = Io<T>::load(grad + i);
    if (a.maximize) g = -g;
    float pv = Io<T>::load(p + i);
    if (a.weightDecay != 0.f) {
      if (a.decoupled) pv = roundTo<T>(pv * a.decayFactor);
      else g = roundTo<T>(g + a.weightDecay * pv);
    }
    float mv = roundTo<T>(lerpAten(Io<T>::load(m + i), g, a.oneMinusBeta1));
    float vv = roundTo<T>(Io<T>::load(v + i) * a.beta2 + g * a.oneMinusBeta2 * g);
    Io<T>::store(m + i, mv);
    Io<T>::store(v + i, vv);
    if (a.amsgrad) {
      float old = Io<T>::load(vmax + i);
      vv = old > vv ? old : vv;
      Io<T>::store(vmax + i, vv);
    }
    float denom = roundTo<T>(roundTo<T>(roundTo<T>(sqrtf(vv)) / a.biasCorrection2Sqrt) + a.eps);
    Io<T>::store(p + i, pv + roundTo<T>(mv * -a.stepSize) / denom);
  }
}

}  // namespace ck
