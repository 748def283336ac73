#include "layouts.h"

#include <algorithm>
#include <string>

namespace rt {

/**
 * The iteration space over out's shape with every operand's strides, size-1 dims dropped and
 * neighbouring dims merged where every operand walks them contiguously (most launches become 1-D).
 */
ck::Layout elementwiseLayout(const Ref& out, std::initializer_list<const Ref*> inputs) {
  std::vector<const Ref*> ops{&out};
  ops.insert(ops.end(), inputs.begin(), inputs.end());
  for (const Ref* r : ops)
    if (r->ndim != out.ndim) throw CudaError("cuda: operand rank " + std::to_string(r->ndim) + " differs from out's " + std::to_string(out.ndim));
  struct Dim { int64_t size; int64_t stride[4]; };
  std::vector<Dim> dims;  // innermost first
  for (int d = out.ndim - 1; d >= 0; d--) {
    if (out.shape[d] == 1) continue;
    Dim cur{out.shape[d], {0, 0, 0, 0}};
    for (size_t k = 0; k < ops.size(); k++) cur.stride[k] = ops[k]->strides[d];
    if (!dims.empty()) {
      Dim& in = dims.back();
      bool mergeable = true;
      for (size_t k = 0; k < ops.size(); k++) mergeable = mergeable && cur.stride[k] == in.stride[k] * in.size;
      if (mergeable) { in.size *= cur.size; continue; }
    }
    dims.push_back(cur);
  }
  if (dims.size() > (size_t)ck::MAX_DIMS)
    throw CudaError("cuda: a strided view with " + std::to_string(dims.size()) + " non-mergeable dims exceeds the kernels' " + std::to_string(ck::MAX_DIMS));
  ck::Layout L{};
  L.ndim = (int32_t)dims.size();
  L.numel = 1;
  for (size_t i = 0; i < dims.size(); i++) {
    int d = L.ndim - 1 - (int)i;
    L.shape[d] = dims[i].size;
    L.numel *= dims[i].size;
    for (size_t k = 0; k < ops.size(); k++) L.stride[k][d] = dims[i].stride[k];
  }
  for (size_t k = 0; k < ops.size(); k++) L.offset[k] = ops[k]->offset;
  if (out.numel() == 0) L.numel = 0;
  return L;
}

/** x split into kept dims (addressed in x and out) and reduced dims (in `axes`). */
ck::ReduceLayout reduceLayout(const Ref& x, const std::vector<int>& axes, const Ref& out) {
  ck::ReduceLayout L{};
  L.outer = 1;
  L.inner = 1;
  for (int d = 0; d < x.ndim; d++) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (reduced) {
      L.inner *= x.shape[d];
      if (x.shape[d] == 1) continue;
      if (L.innerDims == ck::MAX_DIMS) throw CudaError("cuda reduce: too many reduced dims");
      L.innerShape[L.innerDims] = x.shape[d];
      L.innerStrideX[L.innerDims++] = x.strides[d];
    } else {
      L.outer *= x.shape[d];
      if (x.shape[d] == 1) continue;
      if (L.outerDims == ck::MAX_DIMS) throw CudaError("cuda reduce: too many kept dims");
      L.outerShape[L.outerDims] = x.shape[d];
      L.outerStrideX[L.outerDims] = x.strides[d];
      L.outerStrideOut[L.outerDims++] = out.strides[d];
    }
  }
  L.offsetX = x.offset;
  L.offsetOut = out.offset;
  return L;
}

unsigned reduceThreads(int64_t inner) {
  unsigned t = 32;
  while (t < (unsigned)ck::REDUCE_THREADS && (int64_t)t < inner) t *= 2;
  return t;
}

ck::MatmulArgs matmulArgs(const Ref& a, const Ref& b, const Ref& out) {
  if (a.ndim != 3 || b.ndim != 3 || out.ndim != 3) throw CudaError("cuda matmul: operands must be 3-D [batch, rows, cols]");
  ck::MatmulArgs g{};
  g.batch = out.shape[0]; g.m = out.shape[1]; g.n = out.shape[2]; g.k = a.shape[2];
  g.aOff = a.offset; g.aSb = a.shape[0] == 1 ? 0 : a.strides[0]; g.aSm = a.strides[1]; g.aSk = a.strides[2];
  g.bOff = b.offset; g.bSb = b.shape[0] == 1 ? 0 : b.strides[0]; g.bSk = b.strides[1]; g.bSn = b.strides[2];
  g.oOff = out.offset; g.oSb = out.strides[0]; g.oSm = out.strides[1]; g.oSn = out.strides[2];
  return g;
}

namespace {

/** Row-major strides from the offset on (a size-1 dim's stride never matters). */
bool contiguous(const Ref& r) {
  int64_t expected = 1;
  for (int d = r.ndim - 1; d >= 0; d--) {
    if (r.shape[d] != 1 && r.strides[d] != expected) return false;
    expected *= r.shape[d];
  }
  return true;
}

std::string shapeText(const Ref& r) {
  std::string s = "[";
  for (int d = 0; d < r.ndim; d++) s += (d ? ", " : "") + std::to_string(r.shape[d]);
  return s + "]";
}

}  // namespace

ck::AttentionArgs attentionArgs(const Ref& q, const Ref& k, const Ref& v, const Ref* mask, const Ref& out, const Ref& lse, float scale, bool causal) {
  const std::string shapes = "q " + shapeText(q) + ", k " + shapeText(k) + ", v " + shapeText(v) + ", out " + shapeText(out) + ", logSumExp " +
                             shapeText(lse) + (mask ? ", mask " + shapeText(*mask) : "");
  if (q.ndim != 3 || k.ndim != 3 || v.ndim != 3 || out.ndim != 3 || lse.ndim != 2 || (mask && mask->ndim != 3))
    throw CudaError("cuda attention: expects q [B, L, E], k [B, S, E], v [B, S, Ev], out [B, L, Ev], logSumExp [B, L] and mask [B, L, S]; got " + shapes);
  ck::AttentionArgs a{};
  a.batch = q.shape[0]; a.L = q.shape[1]; a.E = q.shape[2]; a.S = k.shape[1]; a.Ev = v.shape[2];
  const bool fits = k.shape[0] == a.batch && k.shape[2] == a.E && v.shape[0] == a.batch && v.shape[1] == a.S && out.shape[0] == a.batch &&
                    out.shape[1] == a.L && out.shape[2] == a.Ev && lse.shape[0] == a.batch && lse.shape[1] == a.L &&
                    (!mask || (mask->shape[0] == a.batch && mask->shape[1] == a.L && mask->shape[2] == a.S));
  if (!fits) throw CudaError("cuda attention: the shapes do not agree (" + shapes + ")");
  if (a.batch < 1 || a.L < 1 || a.S < 1 || a.E < 1 || a.Ev < 1) throw CudaError("cuda attention: every dim must be at least 1 (" + shapes + ")");
  if (a.Ev > (int64_t)ck::ATT_COLUMNS * 65535) throw CudaError("cuda attention: Ev " + std::to_string(a.Ev) + " needs more than 65535 blocks along y");
  const bool floating = out.dtype == ck::F32 || out.dtype == ck::F16 || out.dtype == ck::BF16;
  if (!floating || q.dtype != out.dtype || k.dtype != out.dtype || v.dtype != out.dtype || (mask && mask->dtype != out.dtype) || lse.dtype != ck::F32)
    throw CudaError("cuda attention: q, k, v, mask and out must share one floating dtype and logSumExp must be float32");
  for (const Ref* r : {&q, &k, &v, &out, &lse})
    if (!contiguous(*r)) throw CudaError("cuda attention: q, k, v, out and logSumExp must be contiguous (" + shapes + ")");
  a.qOff = q.offset; a.kOff = k.offset; a.vOff = v.offset; a.outOff = out.offset; a.lseOff = lse.offset;
  if (mask) {
    a.hasMask = 1;
    a.maskOff = mask->offset; a.maskSb = mask->strides[0]; a.maskSl = mask->strides[1]; a.maskSs = mask->strides[2];
  }
  a.scale = scale;
  a.causal = causal;
  return a;
}

int attentionColumns(int64_t ev) { return ev <= ck::ATT_COLUMNS_SMALL ? ck::ATT_COLUMNS_SMALL : ck::ATT_COLUMNS; }

ck::Layout indexLayout(const Ref& iter, const Ref& index, const Ref& target, int dim, int64_t& dimStride) {
  if (index.ndim == 0 && iter.ndim == 0 && target.ndim <= 1) {
    // A 0-dim index picks one element of a 0-dim (or, as core passes it, 1-element 1-D) target.
    Ref t = target;
    dimStride = target.ndim ? target.strides[0] : 0;
    t.ndim = 0;
    return elementwiseLayout(iter, {&index, &t});
  }
  if (iter.ndim != index.ndim || target.ndim != index.ndim)
    throw CudaError("cuda gather/scatterAdd: operands must have the index's rank (index " + std::to_string(index.ndim) + ", values " +
                    std::to_string(iter.ndim) + ", target " + std::to_string(target.ndim) + ")");
  if (index.ndim > 0 && (dim < 0 || dim >= index.ndim)) throw CudaError("cuda gather/scatterAdd: dim " + std::to_string(dim) + " out of range");
  // target walked over the index's positions, its dim coordinate supplied by the index values.
  Ref t = target;
  for (int d = 0; d < index.ndim; d++) t.shape[d] = index.shape[d];
  dimStride = index.ndim > 0 ? target.strides[dim] : 0;
  if (index.ndim > 0) t.strides[dim] = 0;
  Ref it = iter;
  for (int d = 0; d < index.ndim; d++) it.shape[d] = index.shape[d];
  return elementwiseLayout(it, {&index, &t});
}

Ref axisLast(const Ref& r, int axis) {
  Ref m = r;
  int k = 0;
  for (int d = 0; d < r.ndim; d++) {
    if (d == axis) continue;
    m.shape[k] = r.shape[d];
    m.strides[k++] = r.strides[d];
  }
  m.shape[k] = r.shape[axis];
  m.strides[k] = r.strides[axis];
  return m;
}

Ref withoutAxis(const Ref& r, int axis) {
  Ref m = axisLast(r, axis);
  m.ndim = r.ndim - 1;
  return m;
}

Ref asVector(const Ref& r) {
  if (r.ndim > 0) return r;
  Ref v = r;
  v.ndim = 1;
  v.shape[0] = 1;
  v.strides[0] = 1;
  return v;
}

LtOperand ltOperand(int64_t rows, int64_t cols, int64_t sR, int64_t sC) {
  const int64_t r1 = std::max<int64_t>(rows, 1), c1 = std::max<int64_t>(cols, 1);
  if ((sC == 1 || cols == 1) && (rows == 1 || sR >= c1)) return {true, false, rows == 1 ? c1 : sR};
  if ((sR == 1 || rows == 1) && (cols == 1 || sC >= r1)) return {true, true, cols == 1 ? r1 : sC};
  return {false, false, 0};
}

}  // namespace rt
