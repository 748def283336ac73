// The WebAssembly kernels: each takes the cases it handles well (matmul, the common elementwise
// ops, compares, where, copies and casts in float32 and the half types, float32 sums, arg-max/min,
// gather and scatter-add along an axis, and the fused softmax, cross entropy and Adam) when every
// operand lives in the wasm heap, and hands everything else — other dtypes, odd layouts, plain
// host arrays, bad arguments (whose errors the TypeScript kernels word) — to the TypeScript kernels.
import type { AdamSpec, BinaryOp, CompareOp, CrossEntropySpec, DTypeName, FusedKernels, Kernels, ReduceOp, UnaryOp } from '@core/tensor';
import type { CpuStorage } from '../storage.js';
import { sameShape, type Ref } from '../kernels/io.js';
import { bytesPerElement } from '../storage.js';
import { contiguousStrides, isContiguous, sizeOf } from '../kernels/strided.js';
import type { WasmRuntime } from './runtime.js';

// Op codes of elementwise_task (kernels.c).
const BINARY_CODES: Partial<Record<BinaryOp, number>> = { add: 0, sub: 1, mul: 2, div: 3 };
const UNARY_CODES: Partial<Record<UnaryOp, number>> = { neg: 16, abs: 17, relu: 18, sqrt: 19 };
/** Copy op codes by element size in bytes. */
const COPY_CODES: Readonly<Record<number, number>> = { 4: 20, 2: 21, 1: 22 };
const COMPARE_CODES: Record<CompareOp, number> = { eq: 32, ne: 33, lt: 34, le: 35, gt: 36, ge: 37 };
const COMPARE_I32_CODES: Record<CompareOp, number> = { eq: 40, ne: 41, lt: 42, le: 43, gt: 44, ge: 45 };
const WHERE = 48;
const ADDCMUL = 8;
const BOOL_TO_F32 = 56;
/** Cast op codes by "from→to". */
const CAST_CODES: Readonly<Record<string, number>> = {
  'float32→float16': 64, 'float32→bfloat16': 65, 'float16→float32': 66, 'bfloat16→float32': 67,
};
/** Element type codes of floating operands (kernels.c T_*). */
const FLOAT_TYPES: Partial<Record<DTypeName, number>> = { float32: 0, float16: 1, bfloat16: 2 };
const MAX_DIMS = 8;

/** Below this many flops a matmul runs on one thread (waking workers costs more than it saves). */
const GEMM_PARALLEL_FLOPS = 1 << 18;
/** Below this many elements an elementwise op or a reduction runs on one thread. */
const ELEMENTWISE_PARALLEL_NUMEL = 1 << 15;

/** The element type code (kernels.c T_*) when every ref is in the heap with one float32/float16/bfloat16 dtype; else undefined. */
function floatType(...refs: Ref[]): number | undefined {
  const type = FLOAT_TYPES[refs[0].dtype];
  if (type === undefined) return undefined;
  for (const ref of refs) if (ref.dtype !== refs[0].dtype || ref.storage.address < 0) return undefined;
  return type;
}

/** True when every ref is a float32 tensor in the wasm heap. */
function inHeap(...refs: Ref[]): boolean {
  return floatType(...refs) === FLOAT_TYPES.float32;
}

/** True when every ref lives in the wasm heap with the given element size in bytes. */
function inHeapAs(bytes: number, ...refs: Ref[]): boolean {
  for (const ref of refs) if (ref.storage.address < 0 || bytesPerElement(ref.dtype) !== bytes) return false;
  return true;
}

/** Byte address of a ref's first element. */
function addressOf(ref: Ref): number {
  return ref.storage.address + ref.offset * bytesPerElement(ref.dtype);
}

/**
 * Drops size-1 dims and merges neighbours that every operand walks as one (stride[d−1] =
 * stride[d]·shape[d]), so most elementwise calls become one or two loops.
 */
function collapse(shape: readonly number[], strides: readonly (readonly number[])[]): { shape: number[]; strides: number[][] } {
  const outShape: number[] = [];
  const outStrides: number[][] = strides.map(() => []);
  for (let d = 0; d < shape.length; d++) {
    if (shape[d] === 1) continue;
    const last = outShape.length - 1;
    if (last >= 0 && strides.every((s, i) => outStrides[i][last] === s[d] * shape[d])) {
      outShape[last] *= shape[d];
      strides.forEach((s, i) => (outStrides[i][last] = s[d]));
    } else {
      outShape.push(shape[d]);
      strides.forEach((s, i) => outStrides[i].push(s[d]));
    }
  }
  if (outShape.length === 0) {
    outShape.push(1);
    outStrides.forEach((s) => s.push(1));
  }
  return { shape: outShape, strides: outStrides };
}

/** No operand, or one laid out row-major with no gaps (its offset may be anything). */
function isDense(ref: Ref | null): boolean {
  return ref === null || isContiguous(ref.shape, ref.strides);
}

const UNIT_STRIDES: readonly (readonly number[])[] = [[1], [1], [1], [1]];

/** The collapsed form of dense operands: one loop of `numel` with unit strides. */
function oneRun(numel: number): { shape: number[]; strides: readonly (readonly number[])[] } {
  return { shape: [numel], strides: UNIT_STRIDES };
}

/** Splits `count` units into tasks for the pool: one task when small, else a few per thread. */
function chunking(rt: WasmRuntime, count: number, parallel: boolean): { chunk: number; tasks: number } {
  const threads = parallel ? rt.threads : 1;
  if (threads === 1 || count <= 1) return { chunk: Math.max(count, 1), tasks: 1 };
  const tasks = Math.min(count, threads * 4);
  const chunk = Math.ceil(count / tasks);
  return { chunk, tasks: Math.ceil(count / chunk) };
}

/** Rough costs for choosing GEMM tiles: ns per packed element and per flop on one thread. */
const PACK_NS = 0.6;
const FLOP_NS = 1 / 45;

/** The GEMM packing buffers, in elements (kernels.c gemm_tile_limits). */
interface GemmLimits {
  readonly mc: number;
  readonly nc: number;
  readonly kc: number;
}

/**
 * The C tile of one GEMM task. Every task packs its own rows of A and columns of B, so smaller
 * tiles repack more; more tasks balance threads better. Among tiles that halve the largest ones
 * (multiples of MR×NR that fit the packing buffers, which hold taller and wider tiles when K is
 * small), take the one with the smallest estimated finish time: the busiest thread's tasks ×
 * (packing + arithmetic) per task.
 */
function chooseTiles(batches: number, m: number, n: number, k: number, threads: number, limits: GemmLimits): { tileM: number; tileN: number } {
  const mr = 4;
  const nr = 8;
  const kc = Math.max(1, Math.min(k, limits.kc));
  const maxM = Math.max(mr, Math.floor((limits.mc * limits.kc) / kc / mr) * mr);
  const maxN = Math.max(nr, Math.floor((limits.kc * limits.nc) / kc / nr) * nr);
  const sumsFit = (tileM: number, tileN: number): boolean => tileM * (Math.ceil(tileN / nr) * nr + 4) <= limits.mc * (limits.nc + 4);
  const sizes = (extent: number, unit: number, max: number): number[] => {
    const out: number[] = [];
    for (let t = Math.min(max, Math.ceil(extent / unit) * unit); ; t = Math.ceil(t / 2 / unit) * unit) {
      out.push(t);
      if (t <= unit) return out;
    }
  };
  let best = { tileM: mr, tileN: nr, cost: Infinity };
  for (const tileM of sizes(m, mr, maxM)) {
    for (const tileN of sizes(n, nr, maxN)) {
      if (!sumsFit(tileM, tileN)) continue;
      const tasks = batches * Math.ceil(m / tileM) * Math.ceil(n / tileN);
      const perTask = (tileM * k + k * tileN) * PACK_NS + 2 * tileM * tileN * k * FLOP_NS;
      const cost = Math.ceil(tasks / threads) * perTask;
      if (cost < best.cost * 0.97) best = { tileM, tileN, cost }; // prefer larger tiles on near-ties
    }
  }
  return best;
}

/** Runs elementwise_task over x (and y, and the where-condition z) into out; false when it cannot. */
function elementwise(rt: WasmRuntime, op: number, out: Ref, x: Ref, y: Ref | null = null, z: Ref | null = null, type = 0): boolean {
  // Dense operands of one shape (the common case) are one run: no collapsing to do.
  const dense = isDense(out) && isDense(x) && isDense(y) && isDense(z);
  const { shape, strides } = dense ? oneRun(sizeOf(out.shape)) : collapse(out.shape, [out, x, y ?? x, z ?? x].map((r) => r.strides));
  if (shape.length > MAX_DIMS) return false;
  const numel = sizeOf(shape);
  if (numel === 0) return true;
  const { chunk, tasks } = chunking(rt, numel, numel >= ELEMENTWISE_PARALLEL_NUMEL);
  const words = rt.views.i32;
  const at = rt.args >> 2;
  const nd = shape.length;
  const [so, sx, sy, sz] = strides;
  words[at] = op;
  words[at + 1] = nd;
  words[at + 2] = addressOf(x);
  words[at + 3] = y ? addressOf(y) : 0;
  words[at + 4] = z ? addressOf(z) : 0;
  words[at + 5] = addressOf(out);
  const dims = at + 6;
  for (let d = 0; d < nd; d++) {
    words[dims + d] = shape[d];
    words[dims + MAX_DIMS + d] = sx[d];
    words[dims + 2 * MAX_DIMS + d] = sy[d];
    words[dims + 3 * MAX_DIMS + d] = sz[d];
    words[dims + 4 * MAX_DIMS + d] = so[d];
  }
  const tail = dims + 5 * MAX_DIMS;
  words[tail] = numel;
  words[tail + 1] = chunk;
  words[tail + 2] = rt.scratch.base;
  words[tail + 3] = rt.scratch.bytes;
  words[tail + 4] = type;
  rt.run('elementwise_task', tasks);
  return true;
}

export function wasmKernels(rt: WasmRuntime, base: Kernels<CpuStorage>): Kernels<CpuStorage> {
  const i32 = (): Int32Array => rt.views.i32;

  /** Sums over any axes of a contiguous x: one contiguous run of axes at a time, last run first, through heap temporaries. */
  function sumRuns(x: Ref, axes: readonly number[], out: Ref): boolean {
    const rank = x.shape.length;
    const sorted = [...new Set(axes.map((a) => (a < 0 ? a + rank : a)))].sort((p, q) => p - q);
    if (sorted.some((a) => a < 0 || a >= rank)) return false;
    const runs: number[][] = [];
    for (const a of sorted) {
      const last = runs[runs.length - 1];
      if (last && last[last.length - 1] === a - 1) last.push(a);
      else runs.push([a]);
    }
    if (runs.length <= 1) return sumRun(x, sorted, out);
    if (!isContiguous(x.shape, x.strides) || !isContiguous(out.shape, out.strides)) return false; // before any temporaries
    let current = x;
    let temp = -1;
    let tempBytes = 0;
    for (let r = runs.length - 1; r >= 0; r--) {
      const shape = current.shape.map((d, i) => (runs[r].includes(i) ? 1 : d));
      let next = out;
      let nextTemp = -1;
      const nextBytes = sizeOf(shape) * 4;
      if (r > 0) {
        nextTemp = rt.heap.alloc(nextBytes);
        if (nextTemp < 0) break;
        // A heap block that only sumRun sees, which reads nothing of a storage but its address.
        next = { storage: { address: nextTemp } as CpuStorage, dtype: 'float32', shape, strides: contiguousStrides(shape), offset: 0 };
      }
      const done = sumRun(current, runs[r], next);
      if (temp >= 0) rt.heap.free(temp, tempBytes);
      temp = nextTemp;
      tempBytes = nextBytes;
      current = next;
      if (!done) break;
      if (r === 0) return true;
    }
    if (temp >= 0) rt.heap.free(temp, tempBytes);
    return false;
  }

  /**
   * axis_task over contiguous blocks viewed as [outer, length, inner] (x) and [outer, count, inner]
   * (index and out): argmax/argmin (op 0/1), gather (2), scatter-add into x (3). False when the
   * shapes differ anywhere but `axis` or a block is not contiguous.
   */
  function alongAxis(op: number, x: Ref, axis: number, index: Ref | null, out: Ref, xShape: readonly number[], outShape: readonly number[]): boolean {
    const rank = xShape.length;
    const d = axis < 0 ? axis + rank : axis;
    if (d < 0 || d >= rank || outShape.length !== rank || xShape.some((n, i) => i !== d && n !== outShape[i])) return false;
    if (![x, out, ...(index ? [index] : [])].every((r) => isContiguous(r.shape, r.strides))) return false;
    const outer = sizeOf(xShape.slice(0, d));
    const inner = sizeOf(xShape.slice(d + 1));
    const length = xShape[d];
    const count = outShape[d];
    if (op <= 1 && (count !== 1 || length === 0)) return false; // an empty argmax is an error the TypeScript kernel words
    if (outer * inner * count === 0) return true;
    const { chunk, tasks } = chunking(rt, outer, outer * length * inner >= ELEMENTWISE_PARALLEL_NUMEL);
    i32().set([op, addressOf(x), index ? addressOf(index) : 0, addressOf(out), outer, length, count, inner, chunk], rt.args >> 2);
    rt.run('axis_task', tasks);
    return true;
  }

  /** A 2-D copy from a column-major view into a row-major one (a materialised transpose): blocked SIMD transposes. */
  function transpose(x: Ref, out: Ref): boolean {
    if (!sameShape(x.shape, out.shape)) return false;
    const { shape, strides } = collapse(out.shape, [x.strides, out.strides]);
    const [xs, os] = strides;
    if (shape.length !== 2 || xs[0] !== 1 || os[1] !== 1 || xs[1] < shape[0] || os[0] < shape[1]) return false;
    const [rows, cols] = shape;
    const { chunk } = chunking(rt, rows, rows * cols >= ELEMENTWISE_PARALLEL_NUMEL);
    const quad = Math.ceil(chunk / 4) * 4; // whole 4-row blocks per task
    i32().set([addressOf(x), addressOf(out), rows, cols, xs[1], os[0], quad], rt.args >> 2);
    rt.run('transpose32_task', Math.ceil(rows / quad));
    return true;
  }

  function gemm(a: Ref, b: Ref, out: Ref): void {
    const [batches, m, n] = out.shape;
    const k = a.shape[2];
    const threads = 2 * m * n * k * batches >= GEMM_PARALLEL_FLOPS ? rt.threads : 1;
    const limits = { mc: rt.call('gemm_tile_limits', 0), nc: rt.call('gemm_tile_limits', 1), kc: rt.call('gemm_tile_limits', 4) };
    const { tileM, tileN } = chooseTiles(batches, m, n, k, threads, limits);
    const words = i32();
    const at = rt.args >> 2;
    const batchStride = (r: Ref): number => (r.shape[0] === 1 ? 0 : r.strides[0]);
    const fields = [
      m, n, k, batches,
      addressOf(a), a.strides[1], a.strides[2], batchStride(a),
      addressOf(b), b.strides[1], b.strides[2], batchStride(b),
      addressOf(out), out.strides[1], out.strides[2], out.strides[0],
      tileM, tileN, Math.ceil(m / tileM), Math.ceil(n / tileN),
      rt.scratch.base, rt.scratch.bytes,
      FLOAT_TYPES[a.dtype]!, FLOAT_TYPES[b.dtype]!, FLOAT_TYPES[out.dtype]!,
    ];
    words.set(fields, at);
    rt.run('gemm_task', batches * Math.ceil(m / tileM) * Math.ceil(n / tileN));
  }

  /** The sum over `run`, consecutive axes in increasing order (none: a copy), of contiguous x into contiguous out. */
  function sumRun(x: Ref, run: readonly number[], out: Ref): boolean {
    if (!isContiguous(x.shape, x.strides) || !isContiguous(out.shape, out.strides)) return false;
    const first = run[0] ?? 0;
    const last = run.length ? run[run.length - 1] : -1;
    if (!sameShape(out.shape, x.shape.map((d, i) => (i >= first && i <= last ? 1 : d)))) return false;
    const outer = sizeOf(x.shape.slice(0, first));
    const length = sizeOf(x.shape.slice(first, last + 1));
    const inner = sizeOf(x.shape.slice(last + 1));
    const { chunk, tasks } = chunking(rt, outer, outer * length * inner >= ELEMENTWISE_PARALLEL_NUMEL);
    i32().set([addressOf(x), addressOf(out), outer, length, inner, chunk], rt.args >> 2);
    rt.run('reduce_f32_task', tasks);
    return true;
  }

  return {
    ...base,

    unary(op, x, out) {
      const code = UNARY_CODES[op];
      const type = floatType(x, out);
      if (code === undefined || type === undefined || !rt.active || !sameShape(x.shape, out.shape) || !elementwise(rt, code, out, x, null, null, type)) {
        base.unary(op, x, out);
      }
    },

    binary(op, a, b, out) {
      const code = BINARY_CODES[op];
      const type = floatType(a, b, out);
      if (
        code === undefined || type === undefined || !rt.active ||
        !sameShape(a.shape, out.shape) || !sameShape(b.shape, out.shape) || !elementwise(rt, code, out, a, b, null, type)
      ) {
        base.binary(op, a, b, out);
      }
    },

    compare(op, a, b, out) {
      // float32 and the half types compare as f32 (halves widen exactly); int32 has its own loop.
      const type = floatType(a, b);
      const code = type !== undefined ? COMPARE_CODES[op] : a.dtype === 'int32' && b.dtype === 'int32' && inHeapAs(4, a, b) ? COMPARE_I32_CODES[op] : undefined;
      if (
        code === undefined || !rt.active || out.dtype !== 'bool' || out.storage.address < 0 ||
        !sameShape(a.shape, out.shape) || !sameShape(b.shape, out.shape) || !elementwise(rt, code, out, a, b, null, type ?? 0)
      ) {
        base.compare(op, a, b, out);
      }
    },

    where(cond, a, b, out) {
      const type = floatType(a, b, out);
      if (
        type === undefined || !rt.active || cond.dtype !== 'bool' || cond.storage.address < 0 ||
        !sameShape(cond.shape, out.shape) || !sameShape(a.shape, out.shape) || !sameShape(b.shape, out.shape) ||
        !elementwise(rt, WHERE, out, a, b, cond, type)
      ) {
        base.where(cond, a, b, out);
      }
    },

    cast(x, out) {
      const code = x.dtype === 'bool' && out.dtype === 'float32' ? BOOL_TO_F32 : CAST_CODES[`${x.dtype}→${out.dtype}`];
      if (code === undefined || !rt.active || x.storage.address < 0 || out.storage.address < 0 || !sameShape(x.shape, out.shape) || !elementwise(rt, code, out, x)) {
        base.cast(x, out);
      }
    },

    copy(x, out) {
      // Bits move unchanged, for every dtype but float64. Copies within one storage may overlap: TypeScript.
      const code = COPY_CODES[bytesPerElement(x.dtype)];
      const usable = rt.active && code !== undefined && x.dtype === out.dtype && x.storage !== out.storage && x.storage.address >= 0 && out.storage.address >= 0;
      if (usable && code === COPY_CODES[4] && transpose(x, out)) return;
      if (!usable || !sameShape(x.shape, out.shape) || !elementwise(rt, code, out, x)) {
        base.copy(x, out);
      }
    },

    reduce(op: ReduceOp, x: Ref, axes: readonly number[], out: Ref, accumulate: DTypeName) {
      if (op !== 'sum' || accumulate !== 'float32' || !rt.active || !inHeap(x, out) || x.shape.length !== out.shape.length || !sumRuns(x, axes, out)) {
        base.reduce(op, x, axes, out, accumulate);
      }
    },

    argReduce(op, x, axis, out) {
      const code = op === 'argmax' ? 0 : 1;
      if (!rt.active || !inHeap(x) || out.dtype !== 'int32' || out.storage.address < 0 || !alongAxis(code, x, axis, null, out, x.shape, out.shape)) {
        base.argReduce(op, x, axis, out);
      }
    },

    gather(x, dim, index, out) {
      if (!rt.active || !inHeap(x, out) || index.dtype !== 'int32' || index.storage.address < 0 || !sameShape(index.shape, out.shape) ||
        !alongAxis(2, x, dim, index, out, x.shape, out.shape)) {
        base.gather(x, dim, index, out);
      }
    },

    scatterAdd(out, dim, index, src) {
      // The kernel's x is the destination and its out the source (see axis_task).
      if (!rt.active || !inHeap(out, src) || out.storage === src.storage || index.dtype !== 'int32' || index.storage.address < 0 ||
        !sameShape(index.shape, src.shape) || !alongAxis(3, out, dim, index, src, out.shape, src.shape)) {
        base.scatterAdd(out, dim, index, src);
      }
    },

    matmul(a, b, out, accumulate) {
      const valid =
        a.shape.length === 3 && b.shape.length === 3 && out.shape.length === 3 &&
        a.shape[1] === out.shape[1] && b.shape[2] === out.shape[2] && a.shape[2] === b.shape[1] &&
        (a.shape[0] === out.shape[0] || a.shape[0] === 1) && (b.shape[0] === out.shape[0] || b.shape[0] === 1);
      if (!valid || floatType(a, b, out) === undefined || accumulate !== 'float32' || !rt.active || sizeOf(out.shape) === 0) {
        base.matmul(a, b, out, accumulate);
        return;
      }
      gemm(a, b, out);
    },
  };
}

export function wasmFused(rt: WasmRuntime, base: FusedKernels<CpuStorage>): FusedKernels<CpuStorage> {
  function rows(x: Ref, dim: number, out: Ref, log: boolean): boolean {
    const rank = x.shape.length;
    if (!rt.active || !inHeap(x, out) || rank === 0 || !sameShape(x.shape, out.shape)) return false;
    if (!isContiguous(x.shape, x.strides) || !isContiguous(out.shape, out.strides)) return false;
    if ((dim < 0 ? dim + rank : dim) !== rank - 1) return false;
    const length = x.shape[rank - 1];
    const count = length === 0 ? 0 : sizeOf(x.shape) / length;
    if (count === 0) return true;
    const { chunk, tasks } = chunking(rt, count, count * length >= ELEMENTWISE_PARALLEL_NUMEL);
    rt.views.i32.set([addressOf(x), addressOf(out), count, length, chunk, log ? 1 : 0], rt.args >> 2);
    rt.run('softmax_f32_task', tasks);
    return true;
  }
  /** The float32 Adam/AdamW update, when every tensor is a contiguous float32 block in the heap. */
  function adamw(refs: Ref[], vmax: Ref | null, spec: AdamSpec): boolean {
    const [param] = refs;
    const all = vmax ? [...refs, vmax] : refs;
    if (!rt.active || !inHeap(...all) || !all.every((r) => sameShape(r.shape, param.shape) && isContiguous(r.shape, r.strides))) return false;
    const n = sizeOf(param.shape);
    if (n === 0) return true;
    // The scalars exactly as the TypeScript kernel rounds them (fused.ts), so results match bit for bit.
    const { lr, beta1, beta2, eps, weightDecay, decoupled, maximize, stepSize, biasCorrection2Sqrt } = spec;
    const w = 1 - beta1;
    const lerpFromM = Math.abs(w) < 0.5; // ATen's lerp: m + w·(g − m), else g − (1 − w)·(g − m)
    const { chunk, tasks } = chunking(rt, n, n >= ELEMENTWISE_PARALLEL_NUMEL);
    const at = rt.args >> 2;
    rt.views.i32.set([...refs.map(addressOf), vmax ? addressOf(vmax) : 0], at);
    rt.views.i32.set([n, chunk, maximize ? 1 : 0, weightDecay !== 0 ? 1 : 0, decoupled ? 1 : 0, lerpFromM ? 1 : 0], at + 5);
    rt.views.f32.set([1 - lr * weightDecay, weightDecay, lerpFromM ? w : 1 - w, beta2, 1 - beta2, biasCorrection2Sqrt, eps, -stepSize], at + 11);
    rt.run('adamw_task', tasks);
    return true;
  }

  /** Per-row float32 cross entropy, when logits, targets and out are contiguous blocks in the heap. */
  function crossEntropy(x: Ref, target: Ref, spec: CrossEntropySpec, out: Ref): boolean {
    if (!rt.active || !inHeap(x, out) || target.dtype !== 'int32' || target.storage.address < 0 || x.shape.length !== 2) return false;
    const [rows, classes] = x.shape;
    if (!sameShape(target.shape, [rows]) || !sameShape(out.shape, [rows]) || classes === 0) return false;
    if (![x, target, out].every((r) => isContiguous(r.shape, r.strides))) return false;
    if (rows === 0) return true;
    const { chunk, tasks } = chunking(rt, rows, rows * classes >= ELEMENTWISE_PARALLEL_NUMEL);
    const at = rt.args >> 2;
    rt.views.i32.set([addressOf(x), addressOf(target), addressOf(out), rows, classes, chunk, spec.ignoreIndex], at);
    rt.views.f32[at + 7] = spec.labelSmoothing;
    rt.run('cross_entropy_task', tasks);
    return true;
  }

  return {
    ...base,
    crossEntropy(x, target, spec, out) {
      if (!crossEntropy(x, target, spec, out)) base.crossEntropy(x, target, spec, out);
    },
    adamw(param, grad, expAvg, expAvgSq, maxExpAvgSq, spec) {
      if (!adamw([param, grad, expAvg, expAvgSq], maxExpAvgSq, spec)) base.adamw(param, grad, expAvg, expAvgSq, maxExpAvgSq, spec);
    },
    softmax(x, dim, out) {
      if (!rows(x, dim, out, false)) base.softmax(x, dim, out);
    },
    logSoftmax(x, dim, out) {
      if (!rows(x, dim, out, true)) base.logSoftmax(x, dim, out);
    },
    addcmul(x, t1, t2, out) {
      const all = [x, t1, t2, out];
      const usable = rt.active && inHeap(...all) && all.every((r) => r.dtype === 'float32' && sameShape(r.shape, out.shape));
      if (!usable || !elementwise(rt, ADDCMUL, out, x, t1, t2)) base.addcmul!(x, t1, t2, out);
    },
  };
}
