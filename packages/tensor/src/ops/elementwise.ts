// Elementwise ops: the same-device rule, PyTorch's type promotion, broadcasting, then one kernel.
import type { BinaryOp, CompareOp, UnaryOp } from '../backend/contract.js';
import { bfloat16, bool, float16, float32, float64, type DType } from '../dtype/dtype.js';
import { resultType } from '../dtype/promotion.js';
import type { Device } from '../device/device.js';
import { DTypeError, ValueError } from '../errors/errors.js';
import { iteratorDevice, type NamedArg } from '../dispatch/device-rule.js';
import { allocate, backendOf, ref, requireCompute, requireStorage } from '../dispatch/run.js';
import { Tensor, type TensorOrScalar } from '../tensor/tensor.js';
import { broadcastShapes, broadcastStrides, sameShape } from '../tensor/shape.js';
import { BINARY, UNARY, type BinaryEntry, type DTypeRule } from './table.js';
import { needsGrad, record } from '../autograd/engine.js';
import { noGrad } from '../autograd/grad-mode.js';
import { autocastIdle, autocastOp } from '../amp/autocast.js';
import { inheritSite, withSite } from '../tensor/site.js';
import { fusedKernel } from '../dispatch/fused.js';
import { compileState } from '../compile/state.js';

/** A tensor holding one value, on `device`, for scalars taking part in an op. */
export function scalarTensor(value: number, dtype: DType, device: Device): Tensor {
  const t = allocate([], dtype, device);
  backendOf(device).kernels.fill(ref(t), value);
  return t;
}

// The scalars that ops read (`x.mul(2)`, `p.add(g, -lr)`), kept per backend instance, device index,
// dtype and value: a training loop uses the same few every step, and a kernel never writes its
// inputs. Per instance, because a backend registered again under the same name (a test, a
// conformance run) has its own memory: another instance's storage means nothing to it.
const SCALAR_CACHE_SIZE = 1024;
const scalars = new WeakMap<object, Map<string, Tensor>>();
const cached = new WeakSet<Tensor>();

/** A cached read-only 0-dim tensor holding `value`, for an op to read and never to return. */
function cachedScalar(value: number, dtype: DType, device: Device): Tensor {
  // A compiled function's capture records the fill instead, so that a replay can give it a new value (an lr).
  if (compileState.recorder !== null) return scalarTensor(value, dtype, device);
  const backend = backendOf(device);
  let own = scalars.get(backend);
  if (own === undefined) scalars.set(backend, (own = new Map()));
  const key = `${device.index}|${dtype.name}|${Object.is(value, -0) ? '-0' : value}`;
  let t = own.get(key);
  if (t === undefined || t._storage.isFreed) {
    if (own.size >= SCALAR_CACHE_SIZE) own.clear();
    t = withSite(undefined, () => scalarTensor(value, dtype, device));
    own.set(key, t);
    cached.add(t);
  }
  return t;
}

/** `x` in another dtype on the same device (the same tensor when nothing changes). */
export function cast(x: Tensor, dtype: DType): Tensor {
  if (x.dtype === dtype) return x;
  inheritSite(x._site);
  const backend = backendOf(x.device);
  requireStorage(backend, dtype, 'to');
  const out = allocate(x.shape, dtype, x.device);
  if (out.numel() > 0) backend.kernels.cast(ref(x), ref(out));
  return record('ToCopyBackward', out, [x], (g) => [g]); // the engine casts g back to x's dtype
}

function computeDType(op: string, rule: DTypeRule, promoted: DType): DType {
  switch (rule) {
    case 'float': return promoted.isFloatingPoint ? promoted : float32;
    case 'logical': return bool;
    case 'same': return promoted;
    case 'numeric':
      if (promoted !== bool) return promoted;
      if (op === 'sub') {
        throw new DTypeError('Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logicalXor()` operator instead.', op, 'bool');
      }
      if (op === 'neg') {
        throw new DTypeError('Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use `logicalNot()` instead.', op, 'bool');
      }
      throw new DTypeError(`${op}: not supported for bool tensors; convert first, e.g. .int() or .float()`, op, 'bool');
    default: return rule satisfies never;
  }
}

function tensorArgs(names: readonly string[], values: readonly TensorOrScalar[]): NamedArg[] {
  const args: NamedArg[] = [];
  values.forEach((v, i) => { if (v instanceof Tensor) args.push({ name: names[i]!, tensor: v }); });
  return args;
}

function checkOperand(op: string, v: unknown, name: string): void {
  if (v instanceof Tensor) { v._assertUsable(op); return; }
  if (typeof v === 'boolean') return;
  if (typeof v !== 'number') {
    throw new TypeError(`${op}(): argument '${name}' must be a Tensor or a number, not ${v === null ? 'null' : typeof v}`);
  }
}

/** An elementwise op's dtype rule: the dtype it computes in and the dtype of its result. */
type Pick = (promoted: DType) => { compute: DType; out: DType };
/** An elementwise op's kernel call, given its operands' refs (broadcast to the output's shape). */
type Launch = (refs: ReturnType<typeof ref>[], out: ReturnType<typeof ref>, device: Device) => void;
type OpParts = { readonly pick: Pick; readonly launch: Launch };

/** An operand on `device` in `dtype`: the tensor itself, a cast of it, or a scalar's tensor. */
function operand(v: TensorOrScalar, dtype: DType, device: Device, cpuScalars: Set<Tensor>): Tensor {
  if (!(v instanceof Tensor)) return cachedScalar(Number(v), dtype, device);
  if (cpuScalars.has(v)) return cachedScalar(Number(v.dataSync()[0]), dtype, device); // SD-3: read as a scalar
  return cast(v, dtype);
}

/** A kernel's view of `t` broadcast to `shape`. */
function broadcastRef(t: Tensor, shape: readonly number[]): ReturnType<typeof ref> {
  return ref(Tensor._internal(t._storage, shape, broadcastStrides(t.shape, t._strides, shape), t._offset));
}

/**
 * The common case without broadcasting, promotion or scalars: tensors of one dtype, device and
 * shape that the kernel reads as they are. Returns null when the general path is needed.
 */
function sameLayoutOperands(
  op: string,
  values: readonly TensorOrScalar[],
  pick: Pick,
  launch: Launch,
): Tensor | null {
  const a = values[0];
  if (!(a instanceof Tensor) || values.length > 2) return null;
  const b = values.length === 2 ? values[1] : a;
  if (!(b instanceof Tensor) || b.dtype !== a.dtype || (b !== a && !(sameShape(a.shape, b.shape) && a.device.equals(b.device)))) return null;
  a._assertUsable(op);
  b._assertUsable(op);
  const { compute, out: outDType } = pick(a.dtype);
  if (compute !== a.dtype) return null;
  inheritSite(a._site);
  requireCompute(backendOf(a.device), compute, op);
  const out = allocate(a.shape, outDType, a.device);
  if (out.numel() > 0) launch(values.length === 2 ? [ref(a), ref(b)] : [ref(a)], ref(out), a.device);
  return out;
}

/** Run one elementwise kernel over promoted, broadcast operands. */
function elementwise(
  op: string,
  names: readonly string[],
  values: readonly TensorOrScalar[],
  pick: Pick,
  launch: Launch,
): Tensor {
  const fast = sameLayoutOperands(op, values, pick, launch);
  if (fast !== null) return fast;
  values.forEach((v, i) => checkOperand(op, v, names[i]!));
  const args = tensorArgs(names, values);
  const { device, cpuScalars } = iteratorDevice(op, args);
  const { compute, out: outDType } = pick(resultType(...values));
  requireCompute(backendOf(device), compute, op);
  const shape = broadcastShapes(args.map((a) => a.tensor.shape), op);
  // Half-precision math with a scalar keeps the scalar in float32 (PyTorch's opmath): compute in
  // float32 and round once, instead of rounding the scalar to the half type first.
  // As in PyTorch's CPU kernels, 0-dim CPU tensors count as scalars here too (original_scalar_value).
  const isScalar = (v: TensorOrScalar) => !(v instanceof Tensor) || (v.ndim === 0 && v.device.type === 'cpu' && values.some((o) => o instanceof Tensor && o.ndim > 0));
  const widen = (compute === float16 || compute === bfloat16) && outDType === compute && values.some(isScalar);
  const computeIn = widen ? float32 : compute;
  const out = allocate(shape, widen ? float32 : outDType, device);
  if (out.numel() > 0) {
    const operands = values.map((v) => operand(v, computeIn, device, cpuScalars));
    launch(operands.map((t) => broadcastRef(t, shape)), ref(out), device);
    // Casts made only to feed this kernel are freed now, not when the collector finds them.
    operands.forEach((t, i) => { if (t !== values[i] && !cached.has(t)) t.dispose(); });
  }
  if (!widen) return out;
  const rounded = cast(out, outDType);
  out.dispose();
  return rounded;
}

/** A unary elementwise op; autocast applies its policy (exp, log… run in float32 on GPUs, AC-9). */
export function unary(op: UnaryOp, x: Tensor): Tensor {
  if (autocastIdle()) return unaryImpl(op, x);
  return autocastOp(op, [x] as const, (t) => unaryImpl(op, t));
}

/** Per op, made once: the dtype rule and the kernel call (closures made per call cost on tiny tensors). */
function perOp<K extends string>(make: (op: K) => OpParts): (op: K) => OpParts {
  const made = new Map<K, OpParts>();
  return (op) => {
    let entry = made.get(op);
    if (entry === undefined) made.set(op, (entry = make(op)));
    return entry;
  };
}

const SELF = ['self'] as const;
const SELF_OTHER = ['self', 'other'] as const;
const SELF_OTHER_ALPHA = ['self', 'other', 'alpha'] as const;

const unaryParts = perOp<UnaryOp>((op) => ({
  pick: (p) => {
    const dt = computeDType(op, UNARY[op].dtype, p);
    return { compute: dt, out: dt };
  },
  launch: ([a], out, device) => backendOf(device).kernels.unary(op, a!, out),
}));

const binaryParts = perOp<BinaryOp>((op) => ({
  pick: (p) => {
    const dt = computeDType(op, BINARY[op].dtype, p);
    return { compute: dt, out: dt };
  },
  launch: ([x, y], out, device) => {
    const kernelOp = out.dtype === 'bool' ? ((BINARY[op] as BinaryEntry).onBool ?? op) : op;
    backendOf(device).kernels.binary(kernelOp, x!, y!, out);
  },
}));

function unaryImpl(op: UnaryOp, x: Tensor): Tensor {
  const { pick, launch } = unaryParts(op);
  const y = elementwise(op, SELF, [x], pick, launch);
  if (!needsGrad(x)) return y;
  // The rule keeps alive only what it reads; the others are never looked at (g stands in).
  const { saves, grad } = UNARY[op];
  if (grad === null) return y;
  const keptX = saves === 'x' ? x : null;
  const keptY = saves === 'y' ? y : null;
  const dtype = y.dtype;
  return record(`${op}Backward`, y, [x], (g) => [grad(g, keptX ? cast(keptX, dtype) : g, keptY ?? g)], keptX ? [keptX] : keptY ? [keptY] : []);
}

/** A binary elementwise op with promotion and broadcasting; autocast applies its policy (pow, atan2…). */
export function binary(op: BinaryOp, a: TensorOrScalar, b: TensorOrScalar): Tensor {
  if (autocastIdle()) return binaryImpl(op, a, b);
  return autocastOp(op, [a, b] as const, (x, y) => binaryImpl(op, x, y));
}

function binaryImpl(op: BinaryOp, a: TensorOrScalar, b: TensorOrScalar): Tensor {
  const { pick, launch } = binaryParts(op);
  const y = elementwise(op, SELF_OTHER, [a, b], pick, launch);
  if (!needsGrad(a, b)) return y;
  const parts = [a, b].map((v, i) => (v instanceof Tensor && v.requiresGrad ? (BINARY[op] as BinaryEntry).grad[i === 0 ? 'a' : 'b'] : null));
  // Keep alive only the operands the rules read; the others are never looked at (g stands in).
  const reads = new Set(parts.flatMap((p) => p?.reads ?? []));
  const keptA = reads.has('a') ? a : null;
  const keptB = reads.has('b') ? b : null;
  const keptY = reads.has('y') ? y : null;
  const like = { dtype: y.dtype, device: y.device };
  const saved = [keptA, keptB, keptY].filter((t): t is Tensor => t instanceof Tensor);
  return record(`${op}Backward`, y, [a, b], (g) => {
    // The rules see both operands as tensors in the result's dtype, on its device.
    const ta = keptA === null ? g : asOperand(keptA, like);
    const tb = keptB === null ? g : asOperand(keptB, like);
    return parts.map((p) => (p ? p.fn(g, ta, tb, keptY ?? g) : null));
  }, saved);
}

function asOperand(v: TensorOrScalar, like: { readonly dtype: DType; readonly device: Device }): Tensor {
  if (!(v instanceof Tensor)) return scalarTensor(Number(v), like.dtype, like.device);
  const local = v.device.equals(like.device) ? v : scalarTensor(Number(v.dataSync()[0]), like.dtype, like.device);
  return cast(local, like.dtype);
}

export function add(a: Tensor, b: TensorOrScalar, alpha?: number): Tensor {
  return addcmulFused('add', a, b, alpha) ?? withScaled(b, alpha, (sb) => binary('add', a, sb));
}

export function sub(a: Tensor, b: TensorOrScalar, alpha?: number): Tensor {
  // PyTorch rejects a bool operand on either side, not only two bool tensors (those fail in binary()).
  const aBool = a instanceof Tensor && a.dtype === bool;
  const bBool = b instanceof Tensor ? b.dtype === bool : typeof b === 'boolean';
  if (aBool !== bBool) {
    throw new DTypeError('Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logicalNot()` operator instead.', 'sub', 'bool');
  }
  return addcmulFused('sub', a, b, alpha) ?? withScaled(b, alpha, (sb) => binary('sub', a, sb));
}

/**
 * `a ± alpha·b` in the backend's fused addcmul kernel (b times a scalar alpha, one kernel instead
 * of a mul and an add): for float32/float64 tensors on one device, which it computes bit for bit
 * like the decomposition, outside autograd and autocast (an optimizer's update). Null when it
 * doesn't apply: no alpha, a CPU scalar riding along (SD-3), other dtypes, or no such kernel.
 */
function addcmulFused(op: 'add' | 'sub', a: Tensor, b: TensorOrScalar, alpha: number | undefined): Tensor | null {
  if (alpha === undefined || alpha === 1 || typeof alpha !== 'number' || !(b instanceof Tensor) || !(a instanceof Tensor)) return null;
  if (!a.device.equals(b.device) || !autocastIdle() || needsGrad(a, b)) return null;
  const dtype = resultType(a, b);
  if (dtype !== float32 && dtype !== float64) return null;
  const kernel = fusedKernel(backendOf(a.device), 'addcmul');
  if (kernel === undefined) return null;
  const scale = op === 'add' ? alpha : -alpha;
  return elementwise(op, SELF_OTHER_ALPHA, [a, b, scale], (p) => ({ compute: p, out: p }), ([x, y, z], out) => kernel(x!, y!, z!, out));
}

/** Runs `fn` on `alpha · b`; add's and sub's backward never read it, so that product is freed after. */
function withScaled(b: TensorOrScalar, alpha: number | undefined, fn: (scaledB: TensorOrScalar) => Tensor): Tensor {
  const sb = scaled(b, alpha);
  const y = fn(sb);
  if (sb !== b && sb instanceof Tensor) sb.dispose();
  return y;
}

function scaled(b: TensorOrScalar, alpha: number | undefined): TensorOrScalar {
  if (alpha === undefined || alpha === 1) return b;
  if (typeof alpha !== 'number') throw new TypeError(`alpha must be a number, got ${typeof alpha}`);
  return b instanceof Tensor ? binary('mul', b, alpha) : Number(b) * alpha;
}

export function compare(op: CompareOp, a: TensorOrScalar, b: TensorOrScalar): Tensor {
  return elementwise(op, ['self', 'other'], [a, b], (p) => ({ compute: p, out: bool }),
    ([x, y], out, device) => backendOf(device).kernels.compare(op, x!, y!, out));
}

/** `condition ? a : b` elementwise, with broadcasting and promotion of a and b. */
export function where(condition: Tensor, a: TensorOrScalar, b: TensorOrScalar): Tensor {
  if (!(condition instanceof Tensor)) throw new TypeError('where(): condition must be a bool Tensor');
  if (condition.dtype !== bool) {
    throw new DTypeError(`where expected condition to be a boolean tensor, but got a tensor with dtype ${condition.dtype.name}`, 'where', condition.dtype.name);
  }
  [a, b].forEach((v, i) => checkOperand('where', v, i === 0 ? 'input' : 'other'));
  const args = tensorArgs(['condition', 'input', 'other'], [condition, a, b]);
  const { device, cpuScalars } = iteratorDevice('where', args);
  const dtype = resultType(a, b);
  requireCompute(backendOf(device), dtype, 'where');
  const shape = broadcastShapes(args.map((x) => x.tensor.shape), 'where');
  const out = allocate(shape, dtype, device);
  if (out.numel() === 0) return out;
  const cond = operand(condition, bool, device, cpuScalars);
  const [ta, tb] = [operand(a, dtype, device, cpuScalars), operand(b, dtype, device, cpuScalars)];
  backendOf(device).kernels.where(broadcastRef(cond, shape), broadcastRef(ta, shape), broadcastRef(tb, shape), ref(out));
  for (const [t, v] of [[ta, a], [tb, b]] as const) if (t !== v && !cached.has(t)) t.dispose();
  return record('whereBackward', out, [condition, a, b], (g) => [null, where(cond, g, 0), where(cond, 0, g)], [condition]);
}

export function clamp(x: Tensor, min?: number | Tensor | null, max?: number | Tensor | null): Tensor {
  const noMin = min === undefined || min === null;
  const noMax = max === undefined || max === null;
  if (noMin && noMax) throw new ValueError("clamp: At least one of 'min' or 'max' must not be None");
  for (const [name, v] of [['min', min], ['max', max]] as const) {
    if (typeof v === 'number' && Number.isNaN(v)) throw new ValueError(`clamp: ${name} must not be NaN`);
  }
  const lo = noMin ? null : min;
  const hi = noMax ? null : max;
  const r = noGrad(() => {
    let r: Tensor = x;
    if (lo !== null) r = binary('maximum', r, lo);
    if (hi !== null) r = binary('minimum', r, hi);
    return r;
  });
  // PyTorch's clamp_backward: x gets the gradient where min ≤ x ≤ max (bounds included, not halved
  // as maximum/minimum split ties); a tensor min where x < min (and min < max), a tensor max where
  // x > max or max < min (the result is max everywhere then).
  return record('clampBackward', r, [x, lo, hi], (g) => {
    const inside = [lo === null ? null : compare('ge', x, lo), hi === null ? null : compare('le', x, hi)]
      .filter((m): m is Tensor => m !== null)
      .reduce((m1, m2) => binary('logicalAnd', m1, m2));
    const gLo = lo instanceof Tensor && lo.requiresGrad
      ? where(hi === null ? compare('lt', x, lo) : binary('logicalAnd', compare('lt', x, lo), compare('lt', lo, hi)), g, 0)
      : null;
    const gHi = hi instanceof Tensor && hi.requiresGrad
      ? where(lo === null ? compare('gt', x, hi) : binary('logicalOr', compare('gt', x, hi), compare('lt', hi, lo)), g, 0)
      : null;
    return [x.requiresGrad ? where(inside, g, 0) : null, gLo, gHi];
  }, [x, lo, hi].filter((t): t is Tensor => t instanceof Tensor));
}

export function isinf(x: Tensor): Tensor {
  if (!x.dtype.isFloatingPoint) return compare('ne', x, x); // integers are never inf: all false
  return compare('eq', unary('abs', x), Infinity);
}

export function isfinite(x: Tensor): Tensor {
  if (!x.dtype.isFloatingPoint) return compare('eq', x, x); // all true
  return compare('eq', binary('sub', x, x), 0); // inf − inf and NaN − NaN are NaN
}
