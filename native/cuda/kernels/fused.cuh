// Fused composite ops: softmax / logSoftmax along a dim, per-row cross entropy, GradScaler's
// unscale-and-check, the Adam/AdamW update, addcmul (x + t1·t2) and attention's forward pass. All
// compute in float and round once on store (except where the contract asks for the decomposition's
// intermediate roundings).
#pragma once
#include "common.cuh"
#include "reduce.cuh"

namespace ck {

/** The larger of a and b, NaN if either is (as PyTorch's max reductions propagate NaN). */
KF float maxOrNan(float a, float b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }

/** Sum / max of one float per thread over the block; every thread gets the result. */
KF float blockReduce(float v, bool isMax, float* scratch) {
  const int t = threadIdx.x, nt = blockDim.x;
  scratch[t] = v;
  __syncthreads();
  for (int s = nt / 2; s > 0; s >>= 1) {
    if (t < s) {
      float a = scratch[t], b = scratch[t + s];
      scratch[t] = isMax ? maxOrNan(a, b) : a + b;
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
      m = maxOrNan(m, v);
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
      m = maxOrNan(m, v);
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

/**
 * Scaled dot-product attention's forward pass, flash-style: the [L, S] scores never leave the
 * block. A block owns ATT_ROWS query rows of one batch (one thread per row) and DV columns of Ev
 * (blockIdx.y picks them; a wider Ev takes several blocks, each recomputing the scores). Keys stream
 * through shared memory ATT_KEYS at a time, their E dims ATT_DEPTH at a time, so every E and Ev
 * runs with the same fixed registers and 4·ATT_KEYS·(ATT_DEPTH + DV) bytes of shared memory. Each
 * thread keeps an online softmax: the running max m, the sum l of exp(score − m) and the DV
 * accumulators, all rescaled by exp(m_old − m_new) when the max grows.
 *
 * The keys taking part in a row are a prefix of every tile (the keys below S, and with isCausal
 * those ≤ the row), so a thread simply stops at its row's limit; tiles past the block's last
 * causal key are never loaded. A row whose keys all score −∞ keeps m = −∞ and l = 0: out is
 * 0/0 = NaN and logSumExp −∞ + log 0 = −∞. A NaN score makes m NaN, and with it the whole row.
 */
template <typename T, int DV>
__device__ void attentionKernel(AttentionArgs a, const T* q, const T* k, const T* v, const T* mask, T* out, float* lse) {
  static_assert(sizeof(float) * ATT_KEYS * (ATT_DEPTH + DV) <= 48 * 1024, "within the default 48 KiB of static shared memory");
  __shared__ float Ks[ATT_KEYS][ATT_DEPTH];
  __shared__ float Vs[ATT_KEYS][DV];
  const int t = threadIdx.x;
  const int64_t rowTiles = (a.L + ATT_ROWS - 1) / ATT_ROWS;
  const int64_t c0 = (int64_t)blockIdx.y * DV;  // this block's Ev columns: [c0, c0 + DV) ∩ [0, Ev)
  for (int64_t task = blockIdx.x; task < a.batch * rowTiles; task += gridDim.x) {
    const int64_t b = task / rowTiles, row0 = (task % rowTiles) * ATT_ROWS, row = row0 + t;
    const int64_t rowsEnd = row0 + ATT_ROWS < a.L ? row0 + ATT_ROWS : a.L;
    // Keys [0, keysEnd) take part in some row of the block; keys [0, limit) in this thread's row.
    const int64_t keysEnd = a.causal && rowsEnd < a.S ? rowsEnd : a.S;
    const int64_t limit = row >= a.L ? 0 : a.causal && row + 1 < a.S ? row + 1 : a.S;
    const T* qRow = q + a.qOff + (b * a.L + (row < a.L ? row : 0)) * a.E;
    const T* kb = k + a.kOff + b * a.S * a.E;
    const T* vb = v + a.vOff + b * a.S * a.Ev;
    float m = -INFINITY, l = 0.f, acc[DV];
    CK_UNROLL for (int c = 0; c < DV; c++) acc[c] = 0.f;
    for (int64_t s0 = 0; s0 < keysEnd; s0 += ATT_KEYS) {
      float p[ATT_KEYS];  // the tile's scores, then their weights exp(score − m)
      CK_UNROLL for (int j = 0; j < ATT_KEYS; j++) p[j] = 0.f;
      for (int64_t e0 = 0; e0 < a.E; e0 += ATT_DEPTH) {
        for (int i = t; i < ATT_KEYS * ATT_DEPTH; i += blockDim.x) {
          const int j = i / ATT_DEPTH, e = i % ATT_DEPTH;
          Ks[j][e] = s0 + j < keysEnd && e0 + e < a.E ? Io<T>::load(kb + (s0 + j) * a.E + e0 + e) : 0.f;
        }
        __syncthreads();
        if (limit > s0) {
          float qs[ATT_DEPTH];
          CK_UNROLL for (int e = 0; e < ATT_DEPTH; e++) qs[e] = e0 + e < a.E ? Io<T>::load(qRow + e0 + e) : 0.f;
          CK_UNROLL for (int j = 0; j < ATT_KEYS; j++)
            CK_UNROLL for (int e = 0; e < ATT_DEPTH; e++) p[j] += qs[e] * Ks[j][e];
        }
        __syncthreads();
      }
      const int64_t n = limit - s0;  // this row's keys in the tile: the first n (none when ≤ 0)
      float mNew = m;
      CK_UNROLL for (int j = 0; j < ATT_KEYS; j++)
        if (j < n) {
          p[j] *= a.scale;
          if (a.hasMask) p[j] += Io<T>::load(mask + a.maskOff + b * a.maskSb + row * a.maskSl + (s0 + j) * a.maskSs);
          mNew = maxOrNan(mNew, p[j]);
        }
      // While every score so far is −∞, measure from 0: exp(−∞ − 0) = 0 rather than exp(NaN).
      const float base = mNew == -INFINITY ? 0.f : mNew;
      const float rescale = expf(m - base);
      l *= rescale;
      CK_UNROLL for (int j = 0; j < ATT_KEYS; j++)
        if (j < n) {
          p[j] = expf(p[j] - base);
          l += p[j];
        }
      m = mNew;
      for (int i = t; i < ATT_KEYS * DV; i += blockDim.x) {
        const int j = i / DV, c = i % DV;
        Vs[j][c] = s0 + j < keysEnd && c0 + c < a.Ev ? Io<T>::load(vb + (s0 + j) * a.Ev + c0 + c) : 0.f;
      }
      __syncthreads();
      CK_UNROLL for (int c = 0; c < DV; c++) {
        float x = acc[c] * rescale;
        CK_UNROLL for (int j = 0; j < ATT_KEYS; j++)
          if (j < n) x += p[j] * Vs[j][c];
        acc[c] = x;
      }
      __syncthreads();
    }
    if (row < a.L) {
      T* o = out + a.outOff + (b * a.L + row) * a.Ev + c0;
      CK_UNROLL for (int c = 0; c < DV; c++)
        if (c0 + c < a.Ev) Io<T>::store(o + c, acc[c] / l);
      if (blockIdx.y == 0) lse[a.lseOff + b * a.L + row] = m + logf(l);
    }
  }
}

}  // namespace ck
