// Elementwise fusion for prepared programs (compile() phase 2, NVRTC): a run of consecutive
// elementwise calls over one shape becomes one generated kernel, one thread per element (grid-stride,
// as the eager kernels). Each member makes its element with the very functions its eager kernel
// calls (native/cuda/kernels/elementwise.cuh: applyUnary, applyBinary, compareValues, castOne, the
// Io<T> loads and stores), with its op code a constant, so the per-op math is the eager code. A
// member's result is kept in a register of its storage type (an f16/bf16 value is rounded there
// exactly as the store would round it), and a later member reading that view gets the register,
// i.e. the bits eager would have stored and loaded back. Float add/sub/mul of two members go
// through __fadd_rn/__fsub_rn/__fmul_rn, which no compiler contracts into an FMA with a neighbour,
// and other float32 results through an XOR with a zero the compiler cannot see (see generate).
// A result is stored once, at the end of the thread's work, unless PrepareOptions.deadAfter says
// nothing reads it after the chain.
import { isNonOverlapping, type DTypeName, type TensorRef } from '@core/tensor';
import type { CudaStorage } from './storage.js';
import { BINARY_CODES } from './generated/op-codes.js';

/** An elementwise call as the backend's kernels record it while a program is prepared. */
export interface EltRecord {
  readonly kind: 'unary' | 'binary' | 'compare' | 'where' | 'cast' | 'copy';
  /** The op code (unary, binary, compare), else -1. */
  readonly op: number;
  readonly inputs: readonly TensorRef<CudaStorage>[];
  readonly out: TensorRef<CudaStorage>;
}

/** Buffers (distinct storages) one fused kernel may address: the size of ck_fused_args.ptr. */
export const MAX_BUFFERS = 16;
/** Members of one fused kernel (Inductor's max_fusion_size). */
export const MAX_MEMBERS = 64;

const CTYPE: Partial<Record<DTypeName, string>> = { float32: 'float', float16: 'ck::f16', bfloat16: 'ck::bf16', int32: 'int32_t', bool: 'uint8_t' };
const FLOATS = new Set<DTypeName>(['float32', 'float16', 'bfloat16']);
const RN: Record<number, string> = { [BINARY_CODES.add]: '__fadd_rn', [BINARY_CODES.sub]: '__fsub_rn', [BINARY_CODES.mul]: '__fmul_rn' };

const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((n, d) => n === b[d]);
const numelOf = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** A view's identity over the chain's shape: storage, dtype, offset and the strides of the dims that iterate. */
function viewKey(r: TensorRef<CudaStorage>, shape: readonly number[]): string {
  return `${r.storage.ptr}:${r.dtype}:${r.offset}:${shape.map((n, d) => (n > 1 ? r.strides[d] : 0)).join(',')}`;
}

/** A run of elementwise calls being fused. */
export class Chain {
  readonly members: { call: number; record: EltRecord }[] = [];
  readonly shape: readonly number[];
  readonly device: number;
  /** The storages the chain writes. */
  private readonly writtenStorages = new Set<CudaStorage>();
  /** Every view read or written, per storage. */
  private readonly views = new Map<CudaStorage, Set<string>>();

  constructor(first: { call: number; record: EltRecord }) {
    this.shape = first.record.out.shape;
    this.device = first.record.out.storage.device;
    if (!this.add(first)) throw new Error('cuda fusion: a chain must take its first call');
  }

  /**
   * Adds the call when it keeps the chain's per-thread order exact: the same shape and device; an
   * output written injectively; no storage the chain writes accessed at another view (thread i then
   * only reads and writes what thread i makes); and at most MAX_BUFFERS storages.
   */
  add(m: { call: number; record: EltRecord }): boolean {
    const r = m.record;
    if (this.members.length >= MAX_MEMBERS || !sameShape(r.out.shape, this.shape) || r.out.storage.device !== this.device) return false;
    if (!isNonOverlapping(this.shape, r.out.strides) || CTYPE[r.out.dtype] === undefined) return false;
    const accesses = [...r.inputs.map((ref) => ({ ref, write: false })), { ref: r.out, write: true }];
    const views = new Map<CudaStorage, Set<string>>();
    for (const [s, v] of this.views) views.set(s, new Set(v));
    for (const { ref } of accesses) {
      if (ref.storage.device !== this.device || CTYPE[ref.dtype] === undefined || ref.shape.length !== this.shape.length) return false;
      const key = viewKey(ref, this.shape);
      const set = views.get(ref.storage) ?? new Set<string>();
      set.add(key);
      views.set(ref.storage, set);
    }
    if (views.size > MAX_BUFFERS) return false;
    for (const { ref, write } of accesses) {
      if ((write || this.writtenStorages.has(ref.storage)) && views.get(ref.storage)!.size > 1) return false;
    }
    this.views.clear();
    for (const [s, v] of views) this.views.set(s, v);
    this.writtenStorages.add(r.out.storage);
    this.members.push(m);
    return true;
  }
}

/** A chain's kernel: its source (one function of the module's source) and how to launch it. */
export interface FusedKernel {
  readonly name: string;
  readonly body: string;
  readonly numel: number;
  /** The storages its ptr slots address, in slot order. */
  readonly buffers: readonly CudaStorage[];
  /** Outputs kept in registers only (deadAfter): their storages never get the chain's values. */
  readonly elided: readonly CudaStorage[];
}

/**
 * The kernel of `chain`. `dead(storage, from)` tells whether nothing reads the storage once some call of the
 * chain with index ≥ `from` has run (PrepareOptions.deadAfter).
 */
export function generate(chain: Chain, name: string, dead: (storage: CudaStorage, from: number) => boolean): FusedKernel {
  const shape = chain.shape;
  const dims = shape.map((n, d) => ({ n, d })).filter((x) => x.n > 1);
  const slots: CudaStorage[] = [];
  const slot = (s: CudaStorage) => {
    const i = slots.indexOf(s);
    return i >= 0 ? i : slots.push(s) - 1;
  };
  const lines: string[] = [];
  const index = (r: TensorRef<CudaStorage>) => [String(r.offset), ...dims.filter((x) => r.strides[x.d] !== 0).map((x) => `c${x.d} * (int64_t)${r.strides[x.d]}`)].join(' + ');
  // Coordinates of element i over the dims that iterate, innermost first.
  if (dims.length > 0) {
    lines.push('    int64_t t = i;');
    for (let k = dims.length - 1; k >= 0; k--) {
      const { n, d } = dims[k]!;
      lines.push(k === 0 ? `    const int64_t c${d} = t;` : `    const int64_t c${d} = t % ${n}; t /= ${n};`);
    }
  }
  // Per view: the register holding its current value (loaded, or made by a member).
  const regs = new Map<string, string>();
  const finals = new Map<string, { ref: TensorRef<CudaStorage>; reg: string; call: number }>();
  let loads = 0;
  const value = (r: TensorRef<CudaStorage>): string => {
    const key = viewKey(r, shape);
    const have = regs.get(key);
    if (have !== undefined) return have;
    const reg = `x${loads++}`;
    lines.push(`    const ${CTYPE[r.dtype]} ${reg} = reinterpret_cast<const ${CTYPE[r.dtype]}*>(a.ptr[${slot(r.storage)}])[${index(r)}];`);
    regs.set(key, reg);
    return reg;
  };
  chain.members.forEach(({ call, record: m }, k) => {
    const ins = m.inputs.map(value);
    const T = CTYPE[m.out.dtype]!;
    const r = `r${k}`;
    const load = (i: number) => `ck::Io<${CTYPE[m.inputs[i]!.dtype]}>::load(&${ins[i]})`;
    switch (m.kind) {
      case 'unary':
        lines.push(`    ${T} ${r}; ck::Io<${T}>::store(&${r}, ck::applyUnary<${T}>(${m.op}, ${load(0)}));`);
        break;
      case 'binary': {
        const rn = FLOATS.has(m.out.dtype) ? RN[m.op] : undefined;
        const expr = rn !== undefined ? `${rn}(${load(0)}, ${load(1)})` : `ck::applyBinary<${T}>(${m.op}, ${load(0)}, ${load(1)})`;
        lines.push(`    ${T} ${r}; ck::Io<${T}>::store(&${r}, ${expr});`);
        break;
      }
      case 'compare':
        lines.push(`    const uint8_t ${r} = ck::compareValues(${m.op}, ${load(0)}, ${load(1)}) ? 1 : 0;`);
        break;
      case 'where':
        // As ck_where_w*: raw elements, chosen by the condition byte.
        lines.push(`    const ${T} ${r} = ${ins[0]} ? ${ins[1]} : ${ins[2]};`);
        break;
      case 'cast':
        lines.push(`    ${T} ${r}; ck::castOne<${CTYPE[m.inputs[0]!.dtype]}, ${T}>(&${ins[0]}, &${r});`);
        break;
      case 'copy':
        lines.push(`    const ${T} ${r} = ${ins[0]};`);
        break;
    }
    // A float32 result of an op's own formula (a library function's last multiply, say) must not be
    // contracted into the next op's first add, neither by NVVM nor by ptxas: its bits pass through an
    // XOR with a zero (a launch argument) that no compiler can see through.
    if (m.out.dtype === 'float32' && (m.kind === 'unary' || (m.kind === 'binary' && RN[m.op] === undefined))) {
      lines.push(`    ${r} = ck::bitsFloat(ck::floatBits(${r}) ^ a.zero);`);
    }
    const key = viewKey(m.out, shape);
    regs.set(key, r);
    finals.set(key, { ref: m.out, reg: r, call });
  });
  const elided: CudaStorage[] = [];
  for (const { ref, reg, call } of finals.values()) {
    if (dead(ref.storage, call)) {
      elided.push(ref.storage);
      continue;
    }
    lines.push(`    reinterpret_cast<${CTYPE[ref.dtype]}*>(a.ptr[${slot(ref.storage)}])[${index(ref)}] = ${reg};`);
  }
  const body = [
    `extern "C" __global__ void ${name}(ck_fused_args a) {`,
    '  CK_GRID_LOOP(i, a.numel) {',
    ...lines,
    '  }',
    '}',
  ].join('\n');
  return { name, body, numel: numelOf(shape), buffers: slots, elided };
}

/** The module source of a program's fused kernels: the addon's elementwise header (embedded, NVRTC headers) and the kernels. */
export function moduleSource(kernels: readonly FusedKernel[]): string {
  return [
    '// Generated by @core/backend-cuda (src/fusion.ts) for compile(): elementwise fusion.',
    '#include "elementwise.cuh"',
    `struct ck_fused_args { long long numel; char* ptr[${MAX_BUFFERS}]; unsigned int zero; };`,
    ...kernels.map((k) => k.body),
    '',
  ].join('\n');
}
