// WGSL generation: bindings and typed accessors per operand, and the strided index walk.
//
// Each operand `X` of a kernel gets, by its dtype and storage layout:
//   X_raw(p) -> u32        the element's bits (16-bit floats in the low half)
//   X_ld(p)  -> f32 | i32  the element's value (half types decoded exactly; bool as 0/1)
//   X_wraw(p, bits)        store bits (outputs only)
//   X_st(p, v)             store a value, converting to the dtype (RNE for half types)
// Packed 16-bit outputs are written with atomicAnd/atomicOr on their word, so two threads
// storing the two halves of one u32 never lose each other's update.
import type { DTypeName } from '@core/tensor';
import { LIB } from './lib.js';
import type { Access } from '../runtime.js';

export const MAX_RANK = 8;
export const WORKGROUP = 64;

export type Layout = 'u32' | 'p16' | 'n16';
export type ValueType = 'f32' | 'i32';

export interface ShaderEnv {
  /** float16 storages are array<f16> (the device has shader-f16). */
  readonly f16Native: boolean;
}

export interface Operand {
  readonly name: string;
  readonly dtype: DTypeName;
  readonly access: Access;
}

export function layoutOf(env: ShaderEnv, dtype: DTypeName): Layout {
  if (dtype === 'float16') return env.f16Native ? 'n16' : 'p16';
  if (dtype === 'bfloat16') return 'p16';
  return 'u32';
}

export function valueType(dtype: DTypeName): ValueType {
  return dtype === 'int32' || dtype === 'bool' ? 'i32' : 'f32';
}

export function isFloat(dtype: DTypeName): boolean {
  return dtype === 'float32' || dtype === 'float16' || dtype === 'bfloat16';
}

/** A short tag of an operand for cache keys: dtype and layout. */
export function tag(env: ShaderEnv, dtype: DTypeName): string {
  return `${dtype}:${layoutOf(env, dtype)}`;
}

/** How an element's bits (a u32, 16-bit types in the low half) and its value convert into each other, in WGSL. */
export interface BitsCodec {
  /** The value (f32 or i32, see valueType) of the bits `raw`. */
  value(raw: string): string;
  /** The bits stored for the value `v` (rounded to nearest even for the half types). */
  bits(v: string): string;
}

/**
 * The conversions of `dtype`'s elements between bits and values, as every accessor does them; null
 * for native f16 storage, whose accessors read and write f16 directly.
 */
export function bitsCodec(env: ShaderEnv, dtype: DTypeName): BitsCodec | null {
  switch (dtype) {
    case 'float32': return { value: (r) => `bitcast<f32>(${r})`, bits: (v) => `bitcast<u32>(${v})` };
    case 'float16': return layoutOf(env, dtype) === 'n16' ? null : { value: (r) => `f16_to_f32(${r})`, bits: (v) => `f32_to_f16(${v})` };
    case 'bfloat16': return { value: (r) => `bf16_to_f32(${r})`, bits: (v) => `f32_to_bf16(${v})` };
    case 'int32': return { value: (r) => `bitcast<i32>(${r})`, bits: (v) => `bitcast<u32>(${v})` };
    case 'bool': return { value: (r) => `select(0i, 1i, ${r} != 0u)`, bits: (v) => `select(0u, 1u, ${v} != 0i)` };
    default: throw new TypeError(`webgpu: no kernels for ${dtype}`);
  }
}

function accessors(env: ShaderEnv, op: Operand, binding: number): string {
  const { name: X, dtype, access } = op;
  const layout = layoutOf(env, dtype);
  const w = access === 'w';
  const lines: string[] = [];
  const elem = layout === 'n16' ? 'f16' : layout === 'p16' && w ? 'atomic<u32>' : 'u32';
  lines.push(`@group(0) @binding(${binding}) var<storage, ${w ? 'read_write' : 'read'}> ${X}: array<${elem}>;`);
  // raw bits
  if (layout === 'u32') lines.push(`fn ${X}_raw(p: u32) -> u32 { return ${X}[p]; }`);
  else if (layout === 'n16') lines.push(`fn ${X}_raw(p: u32) -> u32 { return bitcast<u32>(vec2<f16>(${X}[p], 0.0h)) & 0xffffu; }`);
  else if (w) lines.push(`fn ${X}_raw(p: u32) -> u32 { return (atomicLoad(&${X}[p >> 1u]) >> ((p & 1u) * 16u)) & 0xffffu; }`);
  else lines.push(`fn ${X}_raw(p: u32) -> u32 { return (${X}[p >> 1u] >> ((p & 1u) * 16u)) & 0xffffu; }`);
  // values
  const codec = bitsCodec(env, dtype);
  const vt = valueType(dtype);
  if (codec === null) lines.push(`fn ${X}_ld(p: u32) -> f32 { return f32(${X}[p]); }`);
  else lines.push(`fn ${X}_ld(p: u32) -> ${vt} { return ${codec.value(`${X}_raw(p)`)}; }`);
  if (w) {
    if (layout === 'u32') lines.push(`fn ${X}_wraw(p: u32, v: u32) { ${X}[p] = v; }`);
    else if (layout === 'n16') lines.push(`fn ${X}_wraw(p: u32, v: u32) { ${X}[p] = bitcast<vec2<f16>>(v & 0xffffu).x; }`);
    else {
      lines.push(`fn ${X}_wraw(p: u32, v: u32) {
  let sh = (p & 1u) * 16u;
  atomicAnd(&${X}[p >> 1u], ~(0xffffu << sh));
  atomicOr(&${X}[p >> 1u], (v & 0xffffu) << sh);
}`);
    }
    lines.push(`fn ${X}_st(p: u32, v: ${vt}) { ${X}_wraw(p, ${codec === null ? 'f32_to_f16(v)' : codec.bits('v')}); }`);
  }
  return lines.join('\n');
}

/** Convert an expression of value type `from` (holding a value of dtype `fromDtype`) for storing as `to`. */
export function convert(expr: string, fromDtype: DTypeName, to: DTypeName): string {
  const from = valueType(fromDtype);
  if (to === 'bool') return from === 'f32' ? `select(0i, 1i, f_truthy(${expr}))` : `select(0i, 1i, (${expr}) != 0i)`;
  const target = valueType(to);
  if (from === target) return expr;
  // f32 → int32 truncates toward zero (WGSL saturates out-of-range values; the contract leaves them open).
  return target === 'f32' ? `f32(${expr})` : `i32(${expr})`;
}

/** A complete shader: f16 enable, the library, parameter binding, operand bindings, `body` (with fn main). */
export function shader(env: ShaderEnv, operands: readonly Operand[], body: string): string {
  const needsF16 = env.f16Native && operands.some((o) => o.dtype === 'float16');
  return [
    needsF16 ? 'enable f16;' : '',
    LIB,
    '@group(0) @binding(0) var<storage, read> P: array<u32>;',
    ...operands.map((o, i) => accessors(env, o, i + 1)),
    body,
  ].join('\n');
}

// ---- the strided walk ----

/**
 * Parameter layout of a walk over an index space of rank ≤ 8 with n operands:
 *   P[0] = elements, P[1] = rank, P[2..10) = shape,
 *   P[10 + 9k .. +8) = strides of operand k, P[10 + 9k + 8] = its offset,
 *   extras from P[10 + 9n].
 */
export function extrasBase(nOperands: number): number {
  return 2 + MAX_RANK + (MAX_RANK + 1) * nOperands;
}

/** WGSL that sets `i` (thread's element) and returns early past the end. */
export const THREAD_INDEX = `
  let i = (wg.y * nwg.x + wg.x) * ${WORKGROUP}u + li;
  if (i >= P[0]) { return; }`;

export const MAIN_SIGNATURE = `@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32)`;

/** WGSL computing `pos0..pos{n-1}` for element `i` (and `c{dim}` coordinates when asked). */
export function walk(nOperands: number, index = 'i'): string {
  const lines = [`  var rem = ${index};`];
  for (let k = 0; k < nOperands; k++) lines.push(`  var pos${k} = P[${10 + 9 * k + 8}u];`);
  lines.push('  for (var d = i32(P[1]) - 1; d >= 0; d = d - 1) {');
  lines.push('    let size = P[2u + u32(d)];');
  lines.push('    let c = rem % size;');
  lines.push('    rem = rem / size;');
  for (let k = 0; k < nOperands; k++) lines.push(`    pos${k} = pos${k} + c * P[${10 + 9 * k}u + u32(d)];`);
  lines.push('  }');
  return lines.join('\n');
}

/**
 * Merge neighbouring axes where every operand allows it and drop axes of size 1, so most views
 * become rank 1 or 2.
 */
export function coalesce(shape: readonly number[], strides: readonly (readonly number[])[]): { shape: number[]; strides: number[][] } {
  const sizes: number[] = [];
  const kept: number[][] = strides.map(() => []);
  for (let d = 0; d < shape.length; d++) {
    const size = shape[d]!;
    if (size === 1) continue;
    const last = sizes.length - 1;
    if (last >= 0 && strides.every((s, k) => kept[k]![last] === s[d]! * size)) {
      sizes[last]! *= size;
      strides.forEach((s, k) => (kept[k]![last] = s[d]!));
    } else {
      sizes.push(size);
      strides.forEach((s, k) => kept[k]!.push(s[d]!));
    }
  }
  return { shape: sizes, strides: kept };
}

/** Parameters of a walk (see extrasBase), followed by `extras`. */
export function walkParams(shape: readonly number[], strides: readonly (readonly number[])[], offsets: readonly number[], extras: readonly number[] = [], what = 'kernel'): { params: Uint32Array; numel: number } {
  const c = coalesce(shape, strides);
  if (c.shape.length > MAX_RANK) throw new RangeError(`webgpu ${what}: views of rank ${c.shape.length} after merging axes are not supported (at most ${MAX_RANK})`);
  const n = strides.length;
  const params = new Uint32Array(extrasBase(n) + extras.length);
  let numel = 1;
  for (const s of shape) numel *= s;
  params[0] = numel;
  params[1] = c.shape.length;
  c.shape.forEach((s, d) => (params[2 + d] = s));
  for (let k = 0; k < n; k++) {
    c.strides[k]!.forEach((s, d) => (params[10 + 9 * k + d] = s >>> 0));
    params[10 + 9 * k + 8] = offsets[k]! >>> 0;
  }
  extras.forEach((v, j) => (params[extrasBase(n) + j] = v >>> 0));
  return { params, numel };
}

/** Workgroup counts for `threads` threads of WORKGROUP each, folding into y past 65535. */
export function groupsFor(threads: number, perGroup = WORKGROUP): [number, number, number] {
  const groups = Math.ceil(threads / perGroup);
  if (groups <= 65535) return [groups, 1, 1];
  const y = Math.ceil(groups / 65535);
  return [Math.ceil(groups / y), y, 1];
}
