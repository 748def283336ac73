// The primitives as WGSL compute kernels. Every method validates what it needs, picks (or builds
// and caches) a pipeline keyed by a small description (op, dtypes, layouts), packs shapes,
// strides and offsets into the dispatch's parameter slot and queues the dispatch: nothing waits.
import type {
  AdamSpec, ArgReduceOp, AttentionSpec, BinaryOp, CompareOp, CrossEntropySpec, CumulativeOp, DTypeName, FusedKernels, Kernels, RandomSpec, ReduceOp,
  ScatterMode, TensorRef, UnaryOp,
} from '@core/tensor';
import { float32ToBFloat16Bits, float32ToFloat16Bits } from '@core/tensor';
import type { ElementBody, ElementCall, ElementOperand } from './fusion.js';
import type { KernelSource, Runtime } from './runtime.js';
import { deviceItemSize, type WebGPUStorage } from './storage.js';
import { ATTENTION_ROWS, attentionMain, attentionPlan } from './wgsl/attention.js';
import {
  coalesce, convert, extrasBase, groupsFor, isFloat, MAIN_SIGNATURE, MAX_RANK, shader, tag, THREAD_INDEX, valueType, walk, walkParams,
  type Operand, type ShaderEnv,
} from './wgsl/gen.js';
import { binaryExpr, compareExpr, unaryExpr, type Expr } from './wgsl/ops.js';

export type Ref = TensorRef<WebGPUStorage>;

export interface KernelContext {
  readonly rt: Runtime;
  readonly env: ShaderEnv;
  /** A temporary storage, returned to the pool once the batch using it is submitted. */
  temp(dtype: DTypeName, numel: number): WebGPUStorage;
}

const sizeOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);

function contiguousStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    s[d] = acc;
    acc *= shape[d]!;
  }
  return s;
}

function isContiguous(ref: Ref): boolean {
  let expected = 1;
  for (let d = ref.shape.length - 1; d >= 0; d--) {
    const size = ref.shape[d]!;
    if (size === 0) return true;
    if (size !== 1 && ref.strides[d] !== expected) return false;
    expected *= size;
  }
  return true;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function checkShape(what: string, name: string, ref: Ref, shape: readonly number[]): void {
  if (!sameShape(ref.shape, shape)) throw new RangeError(`webgpu ${what}: ${name} has shape [${ref.shape.join(', ')}], expected [${shape.join(', ')}]`);
}

function checkDType(what: string, name: string, ref: Ref, dtype: DTypeName): void {
  if (ref.dtype !== dtype) throw new TypeError(`webgpu ${what}: ${name} is ${ref.dtype}, expected ${dtype}`);
}

function normalizeAxis(axis: number, rank: number, what: string): number {
  const r = Math.max(rank, 1);
  const a = axis < 0 ? axis + r : axis;
  if (!Number.isInteger(a) || a < 0 || a >= r) throw new RangeError(`webgpu ${what}: dim ${axis} is out of range for rank ${rank}`);
  return a;
}

function normalizeAxes(axes: readonly number[], rank: number, what: string): number[] {
  const seen = new Set<number>();
  for (const axis of axes) {
    const a = axis < 0 ? axis + rank : axis;
    if (!Number.isInteger(a) || a < 0 || a >= rank) throw new RangeError(`webgpu ${what}: axis ${axis} is out of range for rank ${rank}`);
    seen.add(a);
  }
  return [...seen].sort((x, y) => x - y);
}

/** One float32 and its bits, for encodeScalar (no typed array made per scalar). */
const f32Scratch = new Float32Array(1);
const f32ScratchBits = new Uint32Array(f32Scratch.buffer);

/** The bits a storage element of `dtype` holds for `value`. */
function encodeScalar(dtype: DTypeName, value: number): number {
  switch (dtype) {
    case 'float32':
      f32Scratch[0] = value;
      return f32ScratchBits[0]!;
    case 'float16': return float32ToFloat16Bits(value);
    case 'bfloat16': return float32ToBFloat16Bits(value);
    case 'bool': return value !== 0 ? 1 : 0;
    case 'int32': return value | 0;
    default: throw new TypeError(`webgpu: cannot encode a ${dtype} scalar`);
  }
}

/** A boolean expression stored into `out`, or a value expression of `computeDtype` converted for it. */
function storeExpr(e: Expr, computeDtype: DTypeName, outDtype: DTypeName): string {
  if (e.isBool) return valueType(outDtype) === 'f32' ? `select(0.0, 1.0, ${e.code})` : `select(0i, 1i, ${e.code})`;
  return convert(e.code, computeDtype, outDtype);
}

/** Reductions at least this long use a workgroup per output element. */
const COOPERATIVE_MIN_LENGTH = 1024;
const COOPERATIVE_GROUP = 128;

/** The contract's fused kernels the WebGPU backend has (core decomposes the others: max-pooling, the Adadelta and RMSprop updates, stridedSum). */
export type WebGPUFusedKernels = Pick<FusedKernels<WebGPUStorage>, 'softmax' | 'logSoftmax' | 'crossEntropy' | 'unscaleAndCheck' | 'adamw' | 'addcmul' | 'attention'>;

export function createKernels(ctx: KernelContext): { kernels: Kernels<WebGPUStorage>; fused: WebGPUFusedKernels } {
  const { rt, env } = ctx;
  const tg = (d: DTypeName) => tag(env, d);

  /** A contiguous copy of `x` when it shares a buffer with `out` (a binding cannot be read and written by one dispatch). */
  function detach(x: Ref, out: Ref): Ref {
    if (x.storage !== out.storage && x.storage.buffer !== out.storage.buffer) return x;
    const t = ctx.temp(x.dtype, sizeOf(x.shape));
    const copyOut: Ref = { storage: t, dtype: x.dtype, shape: x.shape, strides: contiguousStrides(x.shape), offset: 0 };
    copy(x, copyOut);
    return copyOut;
  }

  /**
   * One thread per element of `out`, walking inputs and out by their strides; `body` makes the
   * element (fusion.ts) from the inputs and the words of `extras`. A prepared program may fuse the
   * call with its neighbours.
   */
  function elementwise(name: string, inputs: Ref[], out: Ref, body: ElementBody, extras: readonly number[] = []): void {
    const n = inputs.length + 1;
    const store = body({ ld: (k) => `a${k}_ld(pos${k})`, raw: (k) => `a${k}_raw(pos${k})`, extra: (j) => `P[eb + ${j}u]`, zero: `P[eb + ${extras.length}u]` });
    if (sizeOf(out.shape) === 0) return;
    const ins = inputs.map((r) => detach(r, out));
    const ops: Operand[] = [...ins.map((r, k): Operand => ({ name: `a${k}`, dtype: r.dtype, access: 'r' })), { name: 'o', dtype: out.dtype, access: 'w' }];
    const stmt = 'st' in store ? `o_st(pos${n - 1}, ${store.st});` : `o_wraw(pos${n - 1}, ${store.raw});`;
    const kernel: KernelSource = {
      key: `${name}|${ops.map((o) => tg(o.dtype)).join(',')}`,
      bindings: ops.map((o) => o.access),
      source: () => shader(env, ops, `${MAIN_SIGNATURE} {${THREAD_INDEX}\n${walk(n)}\n  let eb = ${extrasBase(n)}u;\n  ${stmt}\n}`),
    };
    const { params, numel } = walkParams(out.shape, [...ins.map((r) => r.strides), out.strides], [...ins.map((r) => r.offset), out.offset], [...extras, 0], name);
    const operand = (r: Ref): ElementOperand => ({ buffer: r.storage.buffer, dtype: r.dtype, strides: r.strides, offset: r.offset });
    const element: ElementCall = { shape: out.shape, inputs: ins.map(operand), out: operand(out), body, extras };
    rt.dispatch(kernel, [...ins.map((r) => r.storage.buffer), out.storage.buffer], params, groupsFor(numel), element);
  }

  function isLogical(op: string): boolean {
    return op === 'logicalNot' || op === 'logicalAnd' || op === 'logicalOr';
  }

  function unary(op: UnaryOp, x: Ref, out: Ref): void {
    checkShape(`unary ${op}`, 'out', out, x.shape);
    if (!isLogical(op)) checkDType(`unary ${op}`, 'out', out, x.dtype);
    elementwise(`unary:${op}`, [x], out, (a) => ({ st: storeExpr(unaryExpr(op, x.dtype, a.ld(0)), x.dtype, out.dtype) }));
  }

  function binary(op: BinaryOp, a: Ref, b: Ref, out: Ref): void {
    const what = `binary ${op}`;
    checkShape(what, 'a', a, out.shape);
    checkShape(what, 'b', b, out.shape);
    checkDType(what, 'b', b, a.dtype);
    if (!isLogical(op)) checkDType(what, 'out', out, a.dtype);
    elementwise(`binary:${op}`, [a, b], out, (v) => ({ st: storeExpr(binaryExpr(op, a.dtype, v.ld(0), v.ld(1)), a.dtype, out.dtype) }));
  }

  function compare(op: CompareOp, a: Ref, b: Ref, out: Ref): void {
    const what = `compare ${op}`;
    checkShape(what, 'a', a, out.shape);
    checkShape(what, 'b', b, out.shape);
    checkDType(what, 'b', b, a.dtype);
    elementwise(`compare:${op}`, [a, b], out, (v) => ({ st: storeExpr(compareExpr(op, a.dtype, v.ld(0), v.ld(1)), a.dtype, out.dtype) }));
  }

  function where(cond: Ref, a: Ref, b: Ref, out: Ref): void {
    checkShape('where', 'cond', cond, out.shape);
    checkShape('where', 'a', a, out.shape);
    checkShape('where', 'b', b, out.shape);
    checkDType('where', 'a', a, out.dtype);
    checkDType('where', 'b', b, out.dtype);
    elementwise('where', [cond, a, b], out, (v) => {
      const c = valueType(cond.dtype) === 'f32' ? `f_truthy(${v.ld(0)})` : `(${v.ld(0)} != 0i)`;
      return { raw: `select(${v.raw(2)}, ${v.raw(1)}, ${c})` };
    });
  }

  function cast(x: Ref, out: Ref): void {
    checkShape('cast', 'out', out, x.shape);
    if (x.dtype === out.dtype) {
      copy(x, out);
      return;
    }
    elementwise('cast', [x], out, (v) => ({ st: convert(v.ld(0), x.dtype, out.dtype) }));
  }

  function copy(x: Ref, out: Ref): void {
    checkShape('copy', 'out', out, x.shape);
    checkDType('copy', 'out', out, x.dtype);
    const numel = sizeOf(x.shape);
    if (numel === 0) return;
    const item = deviceItemSize(x.dtype);
    if (isContiguous(x) && isContiguous(out) && x.storage.buffer !== out.storage.buffer) {
      const src = x.offset * item;
      const dst = out.offset * item;
      const bytes = numel * item;
      if (src % 4 === 0 && dst % 4 === 0 && bytes % 4 === 0) {
        rt.copyBuffer(x.storage.buffer, src, out.storage.buffer, dst, bytes);
        return;
      }
    }
    elementwise('copy', [x], out, (v) => ({ raw: v.raw(0) }));
  }

  function fill(out: Ref, value: number): void {
    elementwise('fill', [], out, (v) => ({ raw: v.extra(0) }), [encodeScalar(out.dtype, value)]);
  }

  function checkReducedShape(what: string, x: Ref, reduced: readonly number[], out: Ref): void {
    const expected = x.shape.map((d, axis) => (reduced.includes(axis) ? 1 : d));
    if (!sameShape(out.shape, expected)) throw new RangeError(`webgpu ${what}: out has shape [${out.shape.join(', ')}], expected [${expected.join(', ')}]`);
  }

  function reduce(op: ReduceOp, x: Ref, axes: readonly number[], out: Ref, accumulate: DTypeName): void {
    const what = `reduce ${op}`;
    const rank = x.shape.length;
    const reduced = normalizeAxes(axes, rank, what);
    checkReducedShape(what, x, reduced, out);
    if (accumulate !== 'float32' && accumulate !== 'int32') throw new TypeError(`webgpu ${what}: cannot accumulate in ${accumulate}`);
    const kept = [...Array(rank).keys()].filter((a) => !reduced.includes(a));
    const length = sizeOf(reduced.map((a) => x.shape[a]!));
    const outer = sizeOf(out.shape);
    if (outer === 0) return;
    if (length === 0 && (op === 'max' || op === 'min')) throw new RangeError(`webgpu ${what}: cannot reduce over an empty axis`);
    const X = detach(x, out);
    const r = coalesce(reduced.map((a) => x.shape[a]!), [reduced.map((a) => X.strides[a]!)]);
    if (r.shape.length > MAX_RANK) throw new RangeError(`webgpu ${what}: too many reduced axes after merging (${r.shape.length})`);
    const extras = new Array<number>(2 + 2 * MAX_RANK).fill(0);
    extras[0] = length;
    extras[1] = r.shape.length;
    r.shape.forEach((s, d) => (extras[2 + d] = s));
    r.strides[0]!.forEach((s, d) => (extras[2 + MAX_RANK + d] = s));
    const accT = valueType(accumulate);
    const ld = (p: string) => convert(`a0_ld(${p})`, x.dtype, accumulate);
    const float = accT === 'f32';
    let init: string;
    let step: string;
    let start = '0u';
    switch (op) {
      case 'sum': init = float ? '0.0' : '0i'; step = 'acc = acc + v;'; break;
      case 'prod': init = float ? '1.0' : '1i'; step = 'acc = acc * v;'; break;
      case 'max':
      case 'min': {
        const cmp = op === 'max' ? '>' : '<';
        const better = op === 'max' ? 'f_lt(acc, v)' : 'f_lt(v, acc)';
        init = ld('pos0');
        start = '1u';
        step = float ? `if (is_nan(v)) { acc = v; break; } if (${better}) { acc = v; }` : `if (v ${cmp} acc) { acc = v; }`;
        break;
      }
      default: throw new TypeError(`webgpu reduce: unknown op '${String(op satisfies never)}'`);
    }
    const skipIfNan = (op === 'max' || op === 'min') && float ? 'if (!is_nan(acc)) {' : '{';
    const body = `
  let L = P[eb];
  let rr = P[eb + 1u];
  var acc = ${init};
  ${skipIfNan}
  for (var j = ${start}; j < L; j = j + 1u) {
    var q = pos0;
    if (rr == 1u) {
      q = pos0 + j * P[eb + ${2 + MAX_RANK}u];
    } else {
      var rem2 = j;
      for (var d = i32(rr) - 1; d >= 0; d = d - 1) {
        let s = P[eb + 2u + u32(d)];
        q = q + (rem2 % s) * P[eb + ${2 + MAX_RANK}u + u32(d)];
        rem2 = rem2 / s;
      }
    }
    let v = ${ld('q')};
    ${step}
  }
  }
  o_st(pos1, ${convert('acc', accumulate, out.dtype)});`;
    const ops: Operand[] = [{ name: 'a0', dtype: x.dtype, access: 'r' }, { name: 'o', dtype: out.dtype, access: 'w' }];
    const kernel: KernelSource = {
      key: `reduce:${op}:${accumulate}|${tg(x.dtype)},${tg(out.dtype)}`,
      bindings: ['r', 'w'],
      source: () => shader(env, ops, `${MAIN_SIGNATURE} {${THREAD_INDEX}\n${walk(2)}\n  let eb = ${extrasBase(2)}u;${body}\n}`),
    };
    const { params, numel } = walkParams(kept.map((a) => x.shape[a]!), [kept.map((a) => X.strides[a]!), kept.map((a) => out.strides[a]!)], [X.offset, out.offset], extras, what);
    if (length >= COOPERATIVE_MIN_LENGTH) {
      // Long reductions: a workgroup per output element, strided partial results combined in
      // workgroup memory (another summation order than the cpu backend's: within the accumulated
      // tolerance; exact for int32, max and min).
      const coop = cooperativeReduce(op, x.dtype, accumulate, out.dtype, ld);
      rt.dispatch(coop, [X.storage.buffer, out.storage.buffer], params, groupsFor(numel, 1));
      return;
    }
    rt.dispatch(kernel, [X.storage.buffer, out.storage.buffer], params, groupsFor(numel));
  }

  function cooperativeReduce(op: ReduceOp, xDtype: DTypeName, accumulate: DTypeName, outDtype: DTypeName, ld: (p: string) => string): KernelSource {
    const float = valueType(accumulate) === 'f32';
    const T = valueType(accumulate);
    let init: string;
    let combine: (a: string, b: string) => string;
    switch (op) {
      case 'sum': init = float ? '0.0' : '0i'; combine = (a, b) => `(${a} + ${b})`; break;
      case 'prod': init = float ? '1.0' : '1i'; combine = (a, b) => `(${a} * ${b})`; break;
      case 'max':
        init = float ? 'f32_inf(true)' : '-2147483647i - 1i';
        combine = (a, b) => (float ? `max_f(${a}, ${b})` : `max(${a}, ${b})`);
        break;
      case 'min':
        init = float ? 'f32_inf(false)' : '2147483647i';
        combine = (a, b) => (float ? `min_f(${a}, ${b})` : `min(${a}, ${b})`);
        break;
      default: throw new TypeError(`webgpu reduce: unknown op '${String(op satisfies never)}'`);
    }
    const G = COOPERATIVE_GROUP;
    const body = `
var<workgroup> part: array<${T}, ${G}>;
@compute @workgroup_size(${G})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let o = wg.y * nwg.x + wg.x;
  let valid = o < P[0];
  let i = select(0u, o, valid);
${walk(2)}
  let eb = ${extrasBase(2)}u;
  let L = P[eb];
  let rr = P[eb + 1u];
  var acc: ${T} = ${init};
  for (var j = li; j < L; j = j + ${G}u) {
    var q = pos0;
    if (rr == 1u) {
      q = pos0 + j * P[eb + ${2 + MAX_RANK}u];
    } else {
      var rem2 = j;
      for (var d = i32(rr) - 1; d >= 0; d = d - 1) {
        let s = P[eb + 2u + u32(d)];
        q = q + (rem2 % s) * P[eb + ${2 + MAX_RANK}u + u32(d)];
        rem2 = rem2 / s;
      }
    }
    let v = ${ld('q')};
    acc = ${combine('acc', 'v')};
  }
  part[li] = acc;
  workgroupBarrier();
  for (var s = ${G / 2}u; s > 0u; s = s >> 1u) {
    if (li < s) { part[li] = ${combine('part[li]', 'part[li + s]')}; }
    workgroupBarrier();
  }
  if (li == 0u && valid) { o_st(pos1, ${convert('part[0]', accumulate, outDtype)}); }
}`;
    const ops: Operand[] = [{ name: 'a0', dtype: xDtype, access: 'r' }, { name: 'o', dtype: outDtype, access: 'w' }];
    return { key: `reduce-coop:${op}:${accumulate}|${tg(xDtype)},${tg(outDtype)}`, bindings: ['r', 'w'], source: () => shader(env, ops, body) };
  }

  function argReduce(op: ArgReduceOp, x: Ref, axis: number, out: Ref): void {
    const rank = x.shape.length;
    const a = normalizeAxis(axis, rank, op);
    checkDType(op, 'out', out, 'int32');
    const reduced = rank === 0 ? [] : [a];
    checkReducedShape(op, x, reduced, out);
    const length = rank === 0 ? 1 : x.shape[a]!;
    const outer = sizeOf(out.shape);
    if (outer === 0) return;
    if (length === 0) throw new RangeError(`webgpu ${op}: cannot reduce over an empty axis`);
    const kept = [...Array(rank).keys()].filter((d) => d !== a);
    const float = valueType(x.dtype) === 'f32';
    const cmp = op === 'argmax' ? '>' : '<';
    const stmt = `
  let L = P[eb];
  let s = P[eb + 1u];
  var best = a0_ld(pos0);
  var at = 0i;
  ${float ? 'if (!is_nan(best)) {' : '{'}
  for (var j = 1u; j < L; j = j + 1u) {
    let v = a0_ld(pos0 + j * s);
    ${float ? 'if (is_nan(v)) { at = i32(j); break; }' : ''}
    if (${float ? (op === 'argmax' ? 'f_lt(best, v)' : 'f_lt(v, best)') : `v ${cmp} best`}) { best = v; at = i32(j); }
  }
  }
  o_st(pos1, at);`;
    const X = detach(x, out);
    const xs = kept.map((d) => X.strides[d]!);
    elementwiseOver(`${op}`, kept.map((d) => x.shape[d]!), [X], [xs], out, kept.map((d) => out.strides[d]!), stmt, [length, rank === 0 ? 0 : X.strides[a]!]);
  }

  /**
   * Like elementwise, over an explicit index space: `inStrides[k]` walk input k, `outStrides` walk
   * out (used by reductions along one axis, gather, softmax). Callers detach aliased inputs first.
   */
  function elementwiseOver(name: string, space: readonly number[], inputs: Ref[], inStrides: (readonly number[])[], out: Ref, outStrides: readonly number[], stmt: string, extras: number[], noCoalesce = false): void {
    const numelSpace = sizeOf(space);
    if (numelSpace === 0) return;
    const ins = inputs;
    const strides = inStrides;
    const ops: Operand[] = [...ins.map((r, k): Operand => ({ name: `a${k}`, dtype: r.dtype, access: 'r' })), { name: 'o', dtype: out.dtype, access: 'w' }];
    const n = ops.length;
    const kernel: KernelSource = {
      key: `${name}|${ops.map((o) => tg(o.dtype)).join(',')}`,
      bindings: ops.map((o) => o.access),
      source: () => shader(env, ops, `${MAIN_SIGNATURE} {${THREAD_INDEX}\n${walk(n)}\n  let eb = ${extrasBase(n)}u;\n  ${stmt}\n}`),
    };
    const allStrides = [...strides, outStrides];
    const offsets = [...ins.map((r) => r.offset), out.offset];
    const { params } = noCoalesce ? rawWalkParams(space, allStrides, offsets, extras, name) : walkParams(space, allStrides, offsets, extras, name);
    rt.dispatch(kernel, [...ins.map((r) => r.storage.buffer), out.storage.buffer], params, groupsFor(numelSpace));
  }

  function rawWalkParams(shape: readonly number[], strides: readonly (readonly number[])[], offsets: readonly number[], extras: readonly number[], what: string): { params: Uint32Array } {
    if (shape.length > MAX_RANK) throw new RangeError(`webgpu ${what}: rank ${shape.length} is not supported (at most ${MAX_RANK})`);
    const n = strides.length;
    const params = new Uint32Array(extrasBase(n) + extras.length);
    params[0] = sizeOf(shape);
    params[1] = shape.length;
    shape.forEach((s, d) => (params[2 + d] = s));
    for (let k = 0; k < n; k++) {
      strides[k]!.forEach((s, d) => (params[10 + 9 * k + d] = s >>> 0));
      params[10 + 9 * k + 8] = offsets[k]! >>> 0;
    }
    extras.forEach((v, j) => (params[extrasBase(n) + j] = v >>> 0));
    return { params };
  }

  function matmul(a: Ref, b: Ref, out: Ref, accumulate: DTypeName): void {
    if (a.shape.length !== 3 || b.shape.length !== 3 || out.shape.length !== 3) {
      throw new RangeError(`webgpu matmul: expected rank-3 a, b and out, got [${a.shape.join(', ')}], [${b.shape.join(', ')}], [${out.shape.join(', ')}]`);
    }
    const [batches, m, n] = out.shape as [number, number, number];
    const k = a.shape[2]!;
    const batchOk = (d: number) => d === batches || d === 1;
    if (!batchOk(a.shape[0]!) || !batchOk(b.shape[0]!) || a.shape[1] !== m || b.shape[1] !== k || b.shape[2] !== n) {
      throw new RangeError(`webgpu matmul: shapes [${a.shape.join(', ')}] @ [${b.shape.join(', ')}] do not give [${out.shape.join(', ')}]`);
    }
    checkDType('matmul', 'b', b, a.dtype);
    checkDType('matmul', 'out', out, a.dtype);
    if (accumulate !== 'float32' && accumulate !== 'int32') throw new TypeError(`webgpu matmul: cannot accumulate in ${accumulate}`);
    if (batches * m * n === 0) return;
    if (k === 0) {
      fill(out, 0);
      return;
    }
    const A = detach(a, out);
    const B = detach(b, out);
    const acc = valueType(accumulate);
    const zero = acc === 'f32' ? '0.0' : '0i';
    const lda = (p: string) => convert(`a_ld(${p})`, a.dtype, accumulate);
    const ldb = (p: string) => convert(`b_ld(${p})`, b.dtype, accumulate);
    const ops: Operand[] = [{ name: 'a', dtype: a.dtype, access: 'r' }, { name: 'b', dtype: b.dtype, access: 'r' }, { name: 'o', dtype: out.dtype, access: 'w' }];
    // 64×64 output tiles per 16×16 workgroup, 4×4 outputs per thread (rows ty + 16i, columns
    // tx + 16j), k in steps of 16 through workgroup memory. Each output sums its products in k
    // order, as the cpu backend does.
    const T = 64;
    const body = `
var<workgroup> As: array<array<${acc}, 16>, 64>;
var<workgroup> Bs: array<array<${acc}, 64>, 16>;
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let M = P[0]; let N = P[1]; let K = P[2];
  let batch = wg.z + P[15];
  let tx = lid.x; let ty = lid.y;
  let tid = ty * 16u + tx;
  let rowBase = wg.y * ${T}u;
  let colBase = wg.x * ${T}u;
  let aBatch = P[6] + batch * P[3];
  let bBatch = P[10] + batch * P[7];
  var acc: array<array<${acc}, 4>, 4>;
  for (var i = 0u; i < 4u; i = i + 1u) { for (var j = 0u; j < 4u; j = j + 1u) { acc[i][j] = ${zero}; } }
  for (var t = 0u; t < K; t = t + 16u) {
    for (var l = 0u; l < 4u; l = l + 1u) {
      let e = tid + l * 256u;
      let am = e >> 4u; let ak = e & 15u;
      let row = rowBase + am; let ka = t + ak;
      var av = ${zero};
      if (row < M && ka < K) { av = ${lda('aBatch + row * P[4] + ka * P[5]')}; }
      As[am][ak] = av;
      let bk = e >> 6u; let bn = e & 63u;
      let col = colBase + bn; let kb = t + bk;
      var bv = ${zero};
      if (kb < K && col < N) { bv = ${ldb('bBatch + kb * P[8] + col * P[9]')}; }
      Bs[bk][bn] = bv;
    }
    workgroupBarrier();
    let kmax = min(16u, K - t);
    for (var kk = 0u; kk < kmax; kk = kk + 1u) {
      var a: array<${acc}, 4>;
      var b: array<${acc}, 4>;
      for (var i = 0u; i < 4u; i = i + 1u) { a[i] = As[ty + 16u * i][kk]; b[i] = Bs[kk][tx + 16u * i]; }
      for (var i = 0u; i < 4u; i = i + 1u) {
        for (var j = 0u; j < 4u; j = j + 1u) { acc[i][j] = acc[i][j] + a[i] * b[j]; }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < 4u; i = i + 1u) {
    let row = rowBase + ty + 16u * i;
    for (var j = 0u; j < 4u; j = j + 1u) {
      let col = colBase + tx + 16u * j;
      if (row < M && col < N) {
        o_st(P[14] + batch * P[11] + row * P[12] + col * P[13], ${convert('acc[i][j]', accumulate, out.dtype)});
      }
    }
  }
}`;
    const kernel: KernelSource = {
      key: `matmul:${accumulate}|${tg(a.dtype)},${tg(out.dtype)}`,
      bindings: ['r', 'r', 'w'],
      source: () => shader(env, ops, body),
    };
    const bs = (r: Ref) => (r.shape[0] === 1 ? 0 : r.strides[0]!);
    for (let first = 0; first < batches; first += 65535) {
      const count = Math.min(65535, batches - first);
      const params = Uint32Array.from([
        m, n, k,
        bs(A), A.strides[1]!, A.strides[2]!, A.offset,
        bs(B), B.strides[1]!, B.strides[2]!, B.offset,
        out.strides[0]!, out.strides[1]!, out.strides[2]!, out.offset,
        first,
      ]);
      rt.dispatch(kernel, [A.storage.buffer, B.storage.buffer, out.storage.buffer], params, [Math.ceil(n / T), Math.ceil(m / T), count]);
    }
  }

  /** PyTorch lets 0-dim tensors stand for 1-element vectors in gather/scatter when nothing has rank > 1. */
  function asVectors(refs: Ref[]): Ref[] {
    if (refs.some((r) => r.shape.length > 1)) return refs;
    return refs.map((r) => (r.shape.length === 0 ? { ...r, shape: [1], strides: [1] } : r));
  }

  function checkIndex(what: string, x: Ref, dim: number, index: Ref, other: Ref, otherName: string): void {
    checkDType(what, 'index', index, 'int32');
    if (index.shape.length !== x.shape.length || other.shape.length !== x.shape.length) {
      throw new RangeError(`webgpu ${what}: index and ${otherName} must have the rank of the indexed tensor (${x.shape.length})`);
    }
    for (let d = 0; d < x.shape.length; d++) {
      const size = index.shape[d]!;
      if (size > other.shape[d]! || (d !== dim && size > x.shape[d]!)) {
        throw new RangeError(`webgpu ${what}: index shape [${index.shape.join(', ')}] does not fit ${otherName} [${other.shape.join(', ')}] and the indexed tensor [${x.shape.join(', ')}] at dim ${d}`);
      }
    }
  }

  function gather(xRef: Ref, dim: number, indexRef: Ref, outRef: Ref): void {
    const [x, index, out] = asVectors([xRef, indexRef, outRef]) as [Ref, Ref, Ref];
    const d = normalizeAxis(dim, x.shape.length, 'gather');
    checkShape('gather', 'out', out, index.shape);
    checkDType('gather', 'out', out, x.dtype);
    checkIndex('gather', x, d, index, out, 'out');
    const X = detach(x, out);
    const I = detach(index, out);
    const xz = X.strides.map((s, k) => (k === d ? 0 : s));
    // Out-of-range indices (core checks only for backends with readSync) give 0 instead of reading elsewhere.
    const stmt = `
  let idx = a1_ld(pos1);
  if (idx < 0i || u32(idx) >= P[eb + 1u]) { o_wraw(pos2, 0u); return; }
  o_wraw(pos2, a0_raw(pos0 + u32(idx) * P[eb]));`;
    elementwiseOver('gather', index.shape, [X, I], [xz, I.strides], out, out.strides, stmt, [X.strides[d]!, x.shape[d]!]);
  }

  /** scatterAdd's and scatter's operands after their checks (index and src detached from out), or null for an empty index. */
  function scatterOperands(what: string, outRef: Ref, dim: number, indexRef: Ref, srcRef: Ref): { out: Ref; d: number; index: Ref; src: Ref } | null {
    const [out, index, src] = asVectors([outRef, indexRef, srcRef]) as [Ref, Ref, Ref];
    const d = normalizeAxis(dim, out.shape.length, what);
    checkIndex(what, out, d, index, src, 'src');
    checkDType(what, 'src', src, out.dtype);
    if (sizeOf(index.shape) === 0) return null;
    return { out, d, index: detach(index, out), src: detach(src, out) };
  }

  /**
   * scatterAdd, deterministic: one thread per element of out's region (index's shape with dim's
   * size replaced by out's), summing the matching src elements in index order, so duplicates add
   * in the same order as on the cpu backend (f32 accumulators for half types, rounded once).
   */
  function scatterAdd(outRef: Ref, dim: number, indexRef: Ref, srcRef: Ref): void {
    const operands = scatterOperands('scatterAdd', outRef, dim, indexRef, srcRef);
    if (operands === null) return;
    const { out, d, index, src } = operands;
    const region = index.shape.map((s, k) => (k === d ? out.shape[d]! : s));
    const zero = (strides: readonly number[]) => strides.map((s, k) => (k === d ? 0 : s));
    const vt = valueType(out.dtype);
    const combine = out.dtype === 'bool' ? 'acc = select(0i, 1i, acc != 0i || v != 0i);' : 'acc = acc + v;';
    const stmt = `
  var cd = 0u;
  {
    var rem3 = i;
    for (var d = i32(P[1]) - 1; d >= 0; d = d - 1) {
      let size = P[2u + u32(d)];
      if (u32(d) == P[eb + 3u]) { cd = rem3 % size; }
      rem3 = rem3 / size;
    }
  }
  let L = P[eb];
  var acc: ${vt} = a2_ld(pos2);
  var touched = false;
  for (var j = 0u; j < L; j = j + 1u) {
    if (a0_ld(pos0 + j * P[eb + 1u]) == i32(cd)) {
      let v = a1_ld(pos1 + j * P[eb + 2u]);
      ${combine}
      touched = true;
    }
  }
  if (touched) { o_st(pos2, acc); }`;
    // Bindings: index (a0), src (a1), out read-write (o); out is also read, as a2 → use o_ld.
    const ops: Operand[] = [{ name: 'a0', dtype: 'int32', access: 'r' }, { name: 'a1', dtype: src.dtype, access: 'r' }, { name: 'o', dtype: out.dtype, access: 'w' }];
    const kernel: KernelSource = {
      key: `scatterAdd|${tg(src.dtype)},${tg(out.dtype)}`,
      bindings: ['r', 'r', 'w'],
      source: () => shader(env, ops, `${MAIN_SIGNATURE} {${THREAD_INDEX}\n${walk(3)}\n  let eb = ${extrasBase(3)}u;\n  ${stmt.replace('a2_ld(pos2)', 'o_ld(pos2)')}\n}`),
    };
    const { params } = rawWalkParams(region, [zero(index.strides), zero(src.strides), out.strides], [index.offset, src.offset, out.offset],
      [index.shape[d]!, index.strides[d]!, src.strides[d]!, d], 'scatterAdd');
    rt.dispatch(kernel, [index.storage.buffer, src.storage.buffer, out.storage.buffer], params, groupsFor(sizeOf(region)));
  }

  /** The dims of `ref` but `axis`: their sizes and `ref`'s strides, for kernels with one thread per fibre along `axis`. */
  function besides(ref: Ref, axis: number): { shape: number[]; strides: number[] } {
    const dims = ref.shape.map((_, d) => d).filter((d) => d !== axis);
    return { shape: dims.map((d) => ref.shape[d]!), strides: dims.map((d) => ref.strides[d]!) };
  }

  /** A 0-dim view as the one-element vector it stands for in the kernels along an axis. */
  const asVector = (r: Ref): Ref => (r.shape.length === 0 ? { ...r, shape: [1], strides: [1] } : r);

  /**
   * argsort (contract 1.3.0): every fibre sorted at once by a bitonic network over a [fibres, P]
   * buffer of (key, position) pairs, P the fibre length rounded up to a power of two. One dispatch
   * writes the keys (f_key's order-preserving bits with NaN as the largest and both zeros equal,
   * int32 with the sign bit flipped, all inverted for descending; padding gets the largest key and
   * a position past the end, so it sorts last), then one dispatch per bitonic stage compares and
   * swaps pairs by (key, position): a total order, so the result is the stable order whatever the
   * network, the same as the cpu backend's. A copy writes the positions into out. There are
   * log2(P)·(log2(P) + 1)/2 stages (55 for rows up to 1024, 78 up to 4096), each of fibres·P/2
   * threads; rows of any length take the same path.
   */
  function argsort(x0: Ref, axis: number, descending: boolean, out0: Ref): void {
    checkShape('argsort', 'out', out0, x0.shape);
    checkDType('argsort', 'out', out0, 'int32');
    const a = normalizeAxis(axis, x0.shape.length, 'argsort');
    const [x, out] = [asVector(x0), asVector(out0)];
    const total = sizeOf(x.shape);
    if (total === 0) return;
    const n = x.shape[a]!;
    const padded = 2 ** Math.ceil(Math.log2(n));
    const fibres = total / n;
    const pairs = ctx.temp('int32', 2 * fibres * padded);
    const xs = besides(x, a);
    const space = [...xs.shape, padded];
    const pairRef: Ref = { storage: pairs, dtype: 'int32', shape: space, strides: contiguousStrides(space), offset: 0 };
    const key = valueType(x.dtype) === 'f32' ? 'select(f_key(v), 0xffffffffu, is_nan(v))' : '(bitcast<u32>(v) ^ 0x80000000u)';
    const setup = `
  let j = i % P[eb];
  var key = 0xffffffffu;
  if (j < P[eb + 1u]) {
    let v = a0_ld(pos0);
    key = ${key};
    if (P[eb + 2u] != 0u) { key = ~key; }
  }
  o_wraw(i, key);
  o_wraw(P[eb + 3u] + i, j);`;
    elementwiseOver('argsort-keys', space, [x], [[...xs.strides, x.strides[a]!]], pairRef, pairRef.strides, setup, [padded, n, descending ? 1 : 0, fibres * padded]);
    const step: KernelSource = {
      key: 'argsort-step',
      bindings: ['w'],
      source: () => shader(env, [{ name: 'o', dtype: 'int32', access: 'w' }], `${MAIN_SIGNATURE} {${THREAD_INDEX}
  let len = P[1];
  let k = P[2];
  let j = P[3];
  let f = i / (len / 2u);
  let q = i % (len / 2u);
  let at = (q / j) * 2u * j + (q % j);
  let lo = f * len + at;
  let hi = lo + j;
  let kl = o_raw(lo);
  let kh = o_raw(hi);
  let il = o_raw(P[4] + lo);
  let ih = o_raw(P[4] + hi);
  let greater = kl > kh || (kl == kh && il > ih);
  if (greater == ((at & k) == 0u)) {
    o_wraw(lo, kh);
    o_wraw(hi, kl);
    o_wraw(P[4] + lo, ih);
    o_wraw(P[4] + hi, il);
  }
}`),
    };
    const threads = (fibres * padded) / 2;
    for (let k = 2; k <= padded; k *= 2) {
      for (let j = k / 2; j >= 1; j /= 2) rt.dispatch(step, [pairs.buffer], Uint32Array.from([threads, padded, k, j, fibres * padded]), groupsFor(threads));
    }
    const positions: Ref = { storage: pairs, dtype: 'int32', shape: [...xs.shape, n], strides: pairRef.strides, offset: fibres * padded };
    const os = besides(out, a);
    copy(positions, { ...out, shape: [...os.shape, n], strides: [...os.strides, out.strides[a]!] });
  }

  /**
   * cumsum / cumprod (contract 1.3.0): one thread per fibre along `axis` runs it in index order,
   * the running value in f32 or i32 (wrapping), each output converted once on store: the cpu
   * backend's arithmetic, step for step. Fibres run in parallel; one very long fibre runs on one
   * thread.
   */
  function cumulative(op: CumulativeOp, x0: Ref, axis: number, out0: Ref, accumulate: DTypeName): void {
    checkShape(op, 'out', out0, x0.shape);
    checkDType(op, 'out', out0, x0.dtype);
    if (accumulate !== 'float32' && accumulate !== 'int32') throw new TypeError(`webgpu ${op}: cannot accumulate in ${accumulate}`);
    const a = normalizeAxis(axis, x0.shape.length, op);
    const [x, out] = [asVector(detach(x0, out0)), asVector(out0)];
    if (sizeOf(x.shape) === 0) return;
    const float = valueType(accumulate) === 'f32';
    const sum = op === 'cumsum';
    const stmt = `
  let L = P[eb];
  var acc = ${sum ? (float ? '0.0' : '0i') : float ? '1.0' : '1i'};
  for (var j = 0u; j < L; j = j + 1u) {
    let v = ${convert('a0_ld(pos0 + j * P[eb + 1u])', x.dtype, accumulate)};
    acc = acc ${sum ? '+' : '*'} v;
    o_st(pos1 + j * P[eb + 2u], ${convert('acc', accumulate, out.dtype)});
  }`;
    const xs = besides(x, a);
    elementwiseOver(`cumulative:${op}:${accumulate}`, xs.shape, [x], [xs.strides], out, besides(out, a).strides, stmt, [x.shape[a]!, x.strides[a]!, out.strides[a]!]);
  }

  /**
   * scatter (contract 1.3.0), deterministic and without atomics: one thread per fibre of index
   * along `dim` applies that fibre's contributions in order (only it touches those elements of out),
   * each combination computed in f32 (i32 for int32 and bool) and rounded on store. Indices out of
   * range are skipped.
   */
  function scatter(outRef: Ref, dim: number, indexRef: Ref, srcRef: Ref, mode: ScatterMode): void {
    const operands = scatterOperands('scatter', outRef, dim, indexRef, srcRef);
    if (operands === null) return;
    const { out, d, index, src } = operands;
    const float = valueType(out.dtype) === 'f32';
    const combine = {
      assign: 'v',
      prod: 'cur * v',
      amax: float ? 'max_f(cur, v)' : 'max(cur, v)',
      amin: float ? 'min_f(cur, v)' : 'min(cur, v)',
    }[mode];
    const stmt = `
  let L = P[eb];
  for (var j = 0u; j < L; j = j + 1u) {
    let at = a0_ld(pos0 + j * P[eb + 2u]);
    if (at < 0i || u32(at) >= P[eb + 1u]) { continue; }
    let p = pos2 + u32(at) * P[eb + 4u];
    let cur = o_ld(p);
    let v = a1_ld(pos1 + j * P[eb + 3u]);
    o_st(p, ${combine});
  }`;
    const is = besides(index, d);
    elementwiseOver(`scatter:${mode}`, is.shape, [index, src], [is.strides, besides(src, d).strides], out, besides(out, d).strides, stmt,
      [index.shape[d]!, out.shape[d]!, index.strides[d]!, src.strides[d]!, out.strides[d]!]);
  }

  function random(out: Ref, spec: RandomSpec): void {
    const n = sizeOf(out.shape);
    if (n === 0) return;
    if (!Number.isSafeInteger(spec.offset) || spec.offset < 0) throw new RangeError(`webgpu random: offset ${spec.offset} must be a non-negative safe integer`);
    const dist = spec.distribution;
    let kind = 0;
    let low = 0;
    let range = 0;
    let full = 0;
    if (dist.kind === 'uniform') {
      if (out.dtype === 'int32' || out.dtype === 'bool') throw new TypeError(`webgpu random: uniform needs a floating out, got ${out.dtype}`);
    } else {
      const { low: lo, high } = dist;
      if (!Number.isInteger(lo) || !Number.isInteger(high) || high <= lo || high - lo > 2 ** 32) {
        throw new RangeError(`webgpu random: randint needs integers low < high with high − low ≤ 2^32, got [${lo}, ${high})`);
      }
      kind = 1;
      low = lo;
      range = (high - lo) % 2 ** 32;
      full = high - lo === 2 ** 32 ? 1 : 0;
    }
    if (!isContiguous(out)) throw new RangeError('webgpu random: out must be contiguous');
    const blocks = Math.ceil(n / 4);
    const store = kind === 0
      ? `o_st(p, ${convert('f32(w >> 8u) * 5.9604644775390625e-8', 'float32', out.dtype)});`
      : `o_st(p, ${convert('bitcast<i32>(P[6] + select(mul_wide(w, P[7]).y, w, P[8] != 0u))', 'int32', out.dtype)});`;
    const body = `
${MAIN_SIGNATURE} {${THREAD_INDEX}
  let c0 = P[3] + i;
  let c1 = P[4] + select(0u, 1u, c0 < P[3]);
  var x = vec4<u32>(c0, c1, 0u, 0u);
  var k0 = P[1];
  var k1 = P[2];
  for (var r = 0u; r < 10u; r = r + 1u) {
    if (r > 0u) { k0 = k0 + 0x9e3779b9u; k1 = k1 + 0xbb67ae85u; }
    let m0 = mul_wide(0xd2511f53u, x.x);
    let m1 = mul_wide(0xcd9e8d57u, x.z);
    x = vec4<u32>(m1.y ^ x.y ^ k0, m1.x, m0.y ^ x.w ^ k1, m0.x);
  }
  let n = P[5];
  for (var q = 0u; q < 4u; q = q + 1u) {
    let e = i * 4u + q;
    if (e >= n) { break; }
    let w = x[q];
    let p = P[9] + e;
    ${store}
  }
}`;
    const ops: Operand[] = [{ name: 'o', dtype: out.dtype, access: 'w' }];
    const kernel: KernelSource = { key: `random:${kind}|${tg(out.dtype)}`, bindings: ['w'], source: () => shader(env, ops, body) };
    const offLo = spec.offset % 2 ** 32;
    const offHi = Math.floor(spec.offset / 2 ** 32);
    const params = Uint32Array.from([blocks, spec.key[0] >>> 0, spec.key[1] >>> 0, offLo, offHi, n, low | 0, range >>> 0, full, out.offset]);
    rt.dispatch(kernel, [out.storage.buffer], params, groupsFor(blocks));
  }

  function softmaxLike(what: 'softmax' | 'logSoftmax', x: Ref, dim: number, out: Ref): void {
    checkShape(what, 'out', out, x.shape);
    checkDType(what, 'out', out, x.dtype);
    if (!isFloat(x.dtype)) throw new TypeError(`webgpu ${what}: needs a floating dtype, got ${x.dtype}`);
    const rank = x.shape.length;
    const d = normalizeAxis(dim, rank, what);
    if (sizeOf(x.shape) === 0) return;
    const others = [...Array(rank).keys()].filter((a) => a !== d);
    const length = rank === 0 ? 1 : x.shape[d]!;
    const finish = what === 'softmax' ? 'o_st(pos1 + j * so, div_rn(exp_f(a0_ld(pos0 + j * sx) - m), s));' : 'o_st(pos1 + j * so, (a0_ld(pos0 + j * sx) - m) - ls);';
    const stmt = `
  let L = P[eb];
  let sx = P[eb + 1u];
  let so = P[eb + 2u];
  var m = a0_ld(pos0);
  for (var j = 1u; j < L; j = j + 1u) {
    let v = a0_ld(pos0 + j * sx);
    if (is_nan(m)) { break; }
    if (is_nan(v) || f_lt(m, v)) { m = v; }
  }
  var s = 0.0;
  for (var j = 0u; j < L; j = j + 1u) { s = s + exp_f(a0_ld(pos0 + j * sx) - m); }
  let ls = log_f(s);
  for (var j = 0u; j < L; j = j + 1u) { ${finish} }`;
    const X = detach(x, out);
    elementwiseOver(what, others.map((a) => x.shape[a]!), [X], [others.map((a) => X.strides[a]!)], out, others.map((a) => out.strides[a]!), stmt,
      [length, rank === 0 ? 0 : X.strides[d]!, rank === 0 ? 0 : out.strides[d]!]);
  }

  /**
   * Cross entropy per row, one thread per row of x [N, C] (strided): the stable log-sum-exp, the
   * picked logit and (with label smoothing) the row sum, then `lse − (1 − ε)·x[t] − (ε/C)·Σx` in
   * f32, rounded once into out; 0 for ignoreIndex, NaN for a target outside [0, C).
   */
  function crossEntropy(x: Ref, target: Ref, spec: CrossEntropySpec, out: Ref): void {
    const what = 'crossEntropy';
    if (!isFloat(x.dtype)) throw new TypeError(`webgpu ${what}: needs a floating dtype, got ${x.dtype}`);
    if (x.shape.length !== 2) throw new RangeError(`webgpu ${what}: needs logits [N, C], got [${x.shape.join(', ')}]`);
    const [rows, classes] = x.shape as [number, number];
    checkDType(what, 'target', target, 'int32');
    checkShape(what, 'target', target, [rows]);
    checkDType(what, 'out', out, x.dtype);
    checkShape(what, 'out', out, [rows]);
    if (rows === 0) return;
    const { ignoreIndex, labelSmoothing } = spec;
    const stmt = `
  let C = P[eb];
  let sx = P[eb + 1u];
  let t = a1_ld(pos1);
  if (t == bitcast<i32>(P[eb + 2u])) { o_st(pos2, 0.0); return; }
  if (t < 0i || u32(t) >= C) { o_st(pos2, f32_nan()); return; }
  var m = a0_ld(pos0);
  for (var j = 1u; j < C; j = j + 1u) {
    let v = a0_ld(pos0 + j * sx);
    if (is_nan(m)) { break; }
    if (is_nan(v) || f_lt(m, v)) { m = v; }
  }
  var s = 0.0;
  var total = 0.0;
  for (var j = 0u; j < C; j = j + 1u) {
    let v = a0_ld(pos0 + j * sx);
    s = s + exp_f(v - m);
    total = total + v;
  }
  let lse = m + log_f(s);
  let picked = a0_ld(pos0 + u32(t) * sx);
  var r = lse - picked;
  if (P[eb + 5u] != 0u) { r = (lse - bitcast<f32>(P[eb + 3u]) * picked) - bitcast<f32>(P[eb + 4u]) * total; }
  o_st(pos2, r);`;
    const X = detach(x, out);
    const T = detach(target, out);
    const f32Bits = (v: number) => encodeScalar('float32', v);
    elementwiseOver(what, [rows], [X, T], [[X.strides[0]!], [T.strides[0]!]], out, [out.strides[0]!], stmt,
      [classes, X.strides[1]!, ignoreIndex | 0, f32Bits(1 - labelSmoothing), f32Bits(labelSmoothing / classes), labelSmoothing === 0 ? 0 : 1], true);
  }

  /** WGSL rounding of an f32 value to `dtype` and back (identity for float32). */
  function roundFn(dtype: DTypeName): string {
    switch (dtype) {
      case 'float16': return 'fn rd(x: f32) -> f32 { return f16_to_f32(f32_to_f16(x)); }';
      case 'bfloat16': return 'fn rd(x: f32) -> f32 { return bf16_to_f32(f32_to_bf16(x)); }';
      default: return 'fn rd(x: f32) -> f32 { return x; }';
    }
  }

  function checkFlat(what: string, name: string, ref: Ref): void {
    if (!isContiguous(ref)) throw new RangeError(`webgpu ${what}: ${name} must be contiguous`);
  }

  /**
   * GS-6 in place, one dispatch per grad and one thread per element: a non-finite element sets
   * foundInf to 1 (every writer stores the same value), then the element becomes v·invScale in f32,
   * rounded once on store. No host read.
   */
  function unscaleAndCheck(grads: readonly Ref[], foundInf: Ref, invScale: Ref): void {
    const what = 'unscaleAndCheck';
    checkDType(what, 'foundInf', foundInf, 'float32');
    checkDType(what, 'invScale', invScale, 'float32');
    for (const g of grads) {
      if (!isFloat(g.dtype)) throw new TypeError(`webgpu ${what}: grads need a floating dtype, got ${g.dtype}`);
      checkFlat(what, 'a grad', g);
      const n = sizeOf(g.shape);
      if (n === 0) continue;
      const ops: Operand[] = [{ name: 'sc', dtype: 'float32', access: 'r' }, { name: 'fi', dtype: 'float32', access: 'w' }, { name: 'o', dtype: g.dtype, access: 'w' }];
      const kernel: KernelSource = {
        key: `unscaleAndCheck|${tg(g.dtype)}`,
        bindings: ['r', 'w', 'w'],
        source: () => shader(env, ops, `${MAIN_SIGNATURE} {${THREAD_INDEX}
  let p = P[1] + i;
  let v = o_ld(p);
  if (is_nan(v) || is_inf(v)) { fi_st(P[2], 1.0); }
  o_st(p, v * sc_ld(P[3]));
}`),
      };
      const params = Uint32Array.from([n, g.offset, foundInf.offset, invScale.offset]);
      rt.dispatch(kernel, [invScale.storage.buffer, foundInf.storage.buffer, g.storage.buffer], params, groupsFor(n));
    }
  }

  /**
   * One Adam/AdamW update per element, one thread each, op for op as @core/optim's decomposition
   * (and the cpu kernel) computes it in f32, with its roundings to the dtype for half types.
   */
  function adamw(param: Ref, grad: Ref, expAvg: Ref, expAvgSq: Ref, maxExpAvgSq: Ref | null, spec: AdamSpec): void {
    const what = 'adamw';
    if (!isFloat(param.dtype)) throw new TypeError(`webgpu ${what}: needs a floating dtype, got ${param.dtype}`);
    const refs: Array<[string, Ref | null]> = [['param', param], ['grad', grad], ['expAvg', expAvg], ['expAvgSq', expAvgSq], ['maxExpAvgSq', maxExpAvgSq]];
    for (const [name, ref] of refs) {
      if (ref === null) continue;
      checkDType(what, name, ref, param.dtype);
      checkShape(what, name, ref, param.shape);
      checkFlat(what, name, ref);
    }
    const n = sizeOf(param.shape);
    if (n === 0) return;
    const amsgrad = maxExpAvgSq !== null;
    const d = param.dtype;
    const ops: Operand[] = [
      { name: 'gr', dtype: d, access: 'r' }, { name: 'pa', dtype: d, access: 'w' }, { name: 'ma', dtype: d, access: 'w' }, { name: 'va', dtype: d, access: 'w' },
      ...(amsgrad ? [{ name: 'vx', dtype: d, access: 'w' } as Operand] : []),
    ];
    const F = (k: number) => `bitcast<f32>(P[${k}u])`;
    // Built only when the pipeline is not cached yet: a prepared replay runs this call again at
    // every step (its spec is new), and only its parameters change.
    const body = () => `${roundFn(d)}
${MAIN_SIGNATURE} {${THREAD_INDEX}
  let flags = P[5];
  var g = gr_ld(P[1] + i);
  if ((flags & 2u) != 0u) { g = f_neg(g); }
  var pi = pa_ld(P[2] + i);
  if ((flags & 4u) != 0u) {
    if ((flags & 1u) != 0u) { pi = rd(pi * ${F(6)}); } else { g = rd(g + pi * ${F(7)}); }
  }
  let mo = ma_ld(P[3] + i);
  let diff = g - mo;
  var mi: f32;
  if ((flags & 8u) != 0u) { mi = rd(mo + diff * ${F(8)}); } else { mi = rd(g - diff * ${F(8)}); }
  let vs = rd(va_ld(P[4] + i) * ${F(9)});
  var vi = rd(vs + (g * ${F(10)}) * g);
  ma_st(P[3] + i, mi);
  va_st(P[4] + i, vi);
  ${amsgrad ? `vi = rd(max_f(vx_ld(P[15] + i), vi));
  vx_st(P[15] + i, vi);` : ''}
  let root = rd(sqrt_f(vi));
  let denom = rd(rd(div_rn(root, ${F(11)})) + ${F(12)});
  pa_st(P[2] + i, pi + div_rn(mi * ${F(13)}, denom));
}`;
    const kernel: KernelSource = { key: `adamw:${amsgrad ? 'amsgrad' : 'plain'}|${tg(d)}`, bindings: ops.map((o) => o.access), source: () => shader(env, ops, body()) };
    const f = (v: number) => encodeScalar('float32', v);
    const paramsFor = (s: AdamSpec): Uint32Array => {
      const w = 1 - s.beta1;
      const lerpLow = Math.abs(w) < 0.5;
      const flags = (s.decoupled ? 1 : 0) | (s.maximize ? 2 : 0) | (s.weightDecay !== 0 ? 4 : 0) | (lerpLow ? 8 : 0);
      const params = new Uint32Array(16);
      params[0] = n;
      params[1] = grad.offset;
      params[2] = param.offset;
      params[3] = expAvg.offset;
      params[4] = expAvgSq.offset;
      params[5] = flags;
      params[6] = f(1 - s.lr * s.weightDecay);
      params[7] = f(s.weightDecay);
      params[8] = f(lerpLow ? w : 1 - w);
      params[9] = f(s.beta2);
      params[10] = f(1 - s.beta2);
      params[11] = f(s.biasCorrection2Sqrt);
      params[12] = f(s.eps);
      params[13] = f(-s.stepSize);
      params[15] = maxExpAvgSq?.offset ?? 0;
      return params;
    };
    // The same tensors with another spec (a compiled step's next one): only the parameters change.
    const refresh = (args: readonly unknown[]): Uint32Array | null =>
      args.length === 6 && args[0] === param && args[1] === grad && args[2] === expAvg && args[3] === expAvgSq && args[4] === maxExpAvgSq &&
      typeof args[5] === 'object' && args[5] !== null ? paramsFor(args[5] as AdamSpec) : null;
    const buffers = [grad, param, expAvg, expAvgSq, ...(maxExpAvgSq ? [maxExpAvgSq] : [])].map((r) => r.storage.buffer);
    rt.dispatch(kernel, buffers, paramsFor(spec), groupsFor(n), undefined, refresh);
  }

  /**
   * out = x + t1·t2 (contract 1.2.0), one thread per element, in f32 (half types rounded once on
   * store). Shader compilers may contract `x + a * b` into an FMA (WGSL has no way to forbid it), so
   * the product's bits are XORed with a zero read from the parameters: no compiler can fold an
   * integer op on a value it cannot see, and the sum then adds the product as rounded to f32, as the
   * decomposition does. (A bare bitcast round trip is no guard: compilers fold it away.)
   */
  function addcmul(x: Ref, t1: Ref, t2: Ref, out: Ref): void {
    const what = 'addcmul';
    if (!isFloat(out.dtype)) throw new TypeError(`webgpu ${what}: needs a floating dtype, got ${out.dtype}`);
    for (const [name, r] of [['x', x], ['t1', t1], ['t2', t2]] as const) {
      checkShape(what, name, r, out.shape);
      checkDType(what, name, r, out.dtype);
    }
    elementwise(what, [x, t1, t2], out, (v) => ({ st: `(${v.ld(0)} + bitcast<f32>(bitcast<u32>(${v.ld(1)} * ${v.ld(2)}) ^ ${v.zero}))` }));
  }

  /**
   * Scaled dot-product attention's forward pass (contract 1.4.0), flash-style (see
   * wgsl/attention.ts): one dispatch, a workgroup per (batch, 64 query rows, Ev chunk), keys and
   * values streamed through workgroup memory with an online softmax in f32, out rounded once on
   * store and logSumExp written as float32. Any E and Ev: head dims over 256 go through in chunks.
   */
  function attention(q: Ref, k: Ref, v: Ref, mask: Ref | null, spec: AttentionSpec, out: Ref, logSumExp: Ref): void {
    const what = 'attention';
    const d = q.dtype;
    if (!isFloat(d)) throw new TypeError(`webgpu ${what}: needs a floating dtype, got ${d}`);
    if (q.shape.length !== 3 || k.shape.length !== 3 || v.shape.length !== 3) {
      throw new RangeError(`webgpu ${what}: needs q [B, L, E], k [B, S, E] and v [B, S, Ev], got [${q.shape.join(', ')}], [${k.shape.join(', ')}] and [${v.shape.join(', ')}]`);
    }
    const [B, L, E] = q.shape as [number, number, number];
    const S = k.shape[1]!;
    const Ev = v.shape[2]!;
    if (Math.min(B, L, S, E, Ev) < 1) throw new RangeError(`webgpu ${what}: B, L, S, E and Ev must be at least 1, got ${B}, ${L}, ${S}, ${E} and ${Ev}`);
    const operands: Array<[string, Ref | null, number[]]> = [['k', k, [B, S, E]], ['v', v, [B, S, Ev]], ['mask', mask, [B, L, S]], ['out', out, [B, L, Ev]]];
    for (const [name, ref, shape] of operands) {
      if (ref === null) continue;
      checkShape(what, name, ref, shape);
      checkDType(what, name, ref, d);
    }
    checkShape(what, 'logSumExp', logSumExp, [B, L]);
    checkDType(what, 'logSumExp', logSumExp, 'float32');
    for (const [name, ref] of [['q', q], ['k', k], ['v', v], ['out', out], ['logSumExp', logSumExp]] as const) checkFlat(what, name, ref);
    // An input sharing a buffer with an output is copied first (a dispatch cannot bind a buffer as both).
    const apart = (x: Ref) => detach(detach(x, out), logSumExp);
    const [Q, K, V] = [apart(q), apart(k), apart(v)];
    const M = mask === null ? null : apart(mask);
    const plan = attentionPlan(E, Ev);
    const ops: Operand[] = [
      { name: 'qq', dtype: d, access: 'r' }, { name: 'kk', dtype: d, access: 'r' }, { name: 'vv', dtype: d, access: 'r' },
      ...(M ? [{ name: 'mk', dtype: d, access: 'r' } as Operand] : []),
      { name: 'o', dtype: d, access: 'w' }, { name: 'ls', dtype: 'float32', access: 'w' },
    ];
    const kernel: KernelSource = {
      key: `attention:${plan.qkChunk}:${plan.vChunk}:${plan.chunkedE ? 'chunked' : 'whole'}:${M ? 'mask' : 'nomask'}|${tg(d)}`,
      bindings: ops.map((o) => o.access),
      source: () => shader(env, ops, attentionMain(plan, M !== null)),
    };
    const rowTiles = Math.ceil(L / ATTENTION_ROWS);
    const chunks = Math.ceil(Ev / plan.vChunk);
    const groups = B * rowTiles * chunks;
    const params = Uint32Array.from([
      B, L, S, E, Ev, rowTiles, chunks, groups, encodeScalar('float32', spec.scale), spec.isCausal ? 1 : 0,
      Q.offset, K.offset, V.offset, out.offset, logSumExp.offset,
      M?.offset ?? 0, ...(M ? M.strides : [0, 0, 0]).map((s) => s >>> 0),
    ]);
    const buffers = [Q, K, V, ...(M ? [M] : []), out, logSumExp].map((r) => r.storage.buffer);
    rt.dispatch(kernel, buffers, params, groupsFor(groups, 1));
  }

  const kernels: Kernels<WebGPUStorage> = {
    unary, binary, compare, where, cast, copy, fill, reduce, argReduce, matmul, gather, scatterAdd, random, argsort, cumulative, scatter,
  };
  const fused: WebGPUFusedKernels = {
    softmax: (x, dim, out) => softmaxLike('softmax', x, dim, out),
    logSoftmax: (x, dim, out) => softmaxLike('logSoftmax', x, dim, out),
    crossEntropy,
    unscaleAndCheck,
    adamw,
    addcmul,
    attention,
  };
  return { kernels, fused };
}
