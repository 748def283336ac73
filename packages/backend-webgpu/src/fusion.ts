// Elementwise fusion for prepared programs. Each elementwise kernel (kernels.ts) describes how it
// makes an element of its output from its inputs' (an ElementBody over the op table's WGSL
// expressions); the standalone kernel wraps that in loads and a store, and a fused kernel chains
// the bodies of consecutive calls in one thread per element: an output that a later member reads
// at the same element is handed on in a register, as the very bits the standalone kernel would
// have stored (so the result is the same, bit for bit), and it is stored only when someone may
// still read it after the chain. The bits pass through an XOR with a zero the compiler cannot see,
// so no shader compiler contracts one member's product into the next member's sum (an FMA would
// round once where the standalone kernels round twice).
import { isNonOverlapping, type DTypeName } from '@core/tensor';
import type { KernelSource } from './runtime.js';
import {
  bitsCodec, extrasBase, groupsFor, MAIN_SIGNATURE, shader, tag, THREAD_INDEX, walk, walkParams, type BitsCodec, type Operand, type ShaderEnv,
} from './wgsl/gen.js';

/** How an element body reads its inputs. */
export interface ElementInputs {
  /** The value of input `k` (f32 or i32 by its dtype). */
  ld(k: number): string;
  /** The bits of input `k`. */
  raw(k: number): string;
  /** Word `j` of the call's extras (a u32 from the parameters). */
  extra(j: number): string;
  /** A u32 zero the shader compiler cannot see through (to stop contraction inside one body). */
  readonly zero: string;
}

/** What an element of the output becomes: a value of its value type (`st`), or its bits (`raw`). */
export type ElementStore = { readonly st: string } | { readonly raw: string };

/** One elementwise kernel's work on one element, as WGSL over its inputs. */
export type ElementBody = (inputs: ElementInputs) => ElementStore;

/** A strided operand of an elementwise call, over the call's shape. */
export interface ElementOperand {
  readonly buffer: GPUBuffer;
  readonly dtype: DTypeName;
  readonly strides: readonly number[];
  readonly offset: number;
}

/** An elementwise call as a fused kernel needs it: its index space, operands and body. */
export interface ElementCall {
  readonly shape: readonly number[];
  readonly inputs: readonly ElementOperand[];
  readonly out: ElementOperand;
  readonly body: ElementBody;
  /** Parameter words the body reads with `extra(j)` (a fill's value). */
  readonly extras: readonly number[];
}

/** Where a member of a fused kernel finds what a new run of its call changes. */
export interface FusedMember {
  /** Per input: its binding (an index into the fused dispatch's buffers), or -1 when it comes from a register. */
  readonly inputs: readonly number[];
  /** The parameter word its extras start at. */
  readonly extras: number;
}

/** A fused dispatch, ready to record. */
export interface FusedDispatch {
  readonly kernel: KernelSource;
  readonly buffers: readonly GPUBuffer[];
  readonly params: Uint32Array;
  readonly groups: readonly [number, number, number];
  /** Outputs kept in registers only: their storages never get the chain's values. */
  readonly elided: readonly GPUBuffer[];
  /** The buffers it writes. */
  readonly written: readonly GPUBuffer[];
  /** Per member. */
  readonly members: readonly FusedMember[];
}

/** The same dtype, offset and strides (a view of another buffer, perhaps). */
export const sameLayout = (a: ElementOperand, b: ElementOperand) =>
  a.dtype === b.dtype && a.offset === b.offset && a.strides.length === b.strides.length && a.strides.every((s, d) => s === b.strides[d]);

const sameView = (a: ElementOperand, b: ElementOperand) => a.buffer === b.buffer && sameLayout(a, b);

const sizeOf = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** A fill of one element: every thread can make its value, whatever the chain's shape. */
const isScalar = (call: ElementCall) => call.inputs.length === 0 && sizeOf(call.shape) === 1;

/** Where a member's input comes from: a binding of the fused kernel, or an earlier member's register. */
type Source = { readonly binding: number } | { readonly member: number };

/**
 * A run of elementwise calls being fused, one thread per element of their common shape (a fill of
 * one element joins any chain: every thread makes its value, and a member reading it broadcast gets
 * it). A buffer the chain writes is used at one view only, by one binding (read_write), so thread i
 * only ever touches what thread i reads and makes; a member reading it after a member wrote it gets
 * that member's register. Buffers only read may be bound at several views.
 */
export class FusionChain {
  readonly members: ElementCall[] = [];
  private readonly sources: Source[][] = [];
  /** One per buffer and view read or written (one-element fills' outputs aside); a written buffer has exactly one. */
  private readonly bindings: ElementOperand[] = [];
  private shape: readonly number[] | undefined;
  private words = 0;

  /** `maxBindings` buffers at most, and `maxWords` parameter words. */
  constructor(private readonly env: ShaderEnv, private readonly maxBindings: number, private readonly maxWords: number) {}

  /** The latest member writing `buffer`, or -1. */
  private writer(buffer: GPUBuffer): number {
    for (let k = this.members.length - 1; k >= 0; k--) if (this.members[k]!.out.buffer === buffer) return k;
    return -1;
  }

  /** The binding of `view` (added to `bindings`), or -1 when its buffer is written at another view. */
  private bind(bindings: ElementOperand[], view: ElementOperand, written: (b: GPUBuffer) => boolean): number {
    const same = bindings.findIndex((b) => sameView(b, view));
    if (same >= 0) return same;
    if (written(view.buffer) && bindings.some((b) => b.buffer === view.buffer)) return -1;
    return bindings.push(view) - 1;
  }

  /** Whether member k's register holds what `input` reads at every element of `shape`. */
  private readsRegister(k: number, input: ElementOperand, shape: readonly number[]): boolean {
    const w = this.members[k]!;
    if (sameView(w.out, input)) return true;
    return isScalar(w) && input.dtype === w.out.dtype && input.offset === w.out.offset && input.strides.every((st, d) => st === 0 || shape[d] === 1);
  }

  /** Adds `call` when the chain's rules allow it; false (and the chain unchanged) otherwise. */
  add(call: ElementCall): boolean {
    const scalar = isScalar(call);
    const shape = this.shape ?? (scalar ? undefined : call.shape);
    if (!scalar && this.shape !== undefined && (this.shape.length !== call.shape.length || this.shape.some((d, i) => d !== call.shape[i]))) return false;
    if (bitsCodec(this.env, call.out.dtype) === null || (!scalar && !isNonOverlapping(call.shape, call.out.strides))) return false;
    if (this.words + call.extras.length + 1 + extrasBase(this.maxBindings) > this.maxWords) return false;
    const out = call.out.buffer;
    const written = (b: GPUBuffer) => b === out || this.writer(b) >= 0;
    const bindings = [...this.bindings];
    const sources: Source[] = [];
    for (const input of call.inputs) {
      const member = this.writer(input.buffer);
      if (member >= 0) {
        if (!this.readsRegister(member, input, call.shape)) return false;
        sources.push({ member });
        continue;
      }
      const binding = this.bind(bindings, input, written);
      if (binding < 0) return false;
      sources.push({ binding });
    }
    // The output: its buffer's only binding, at its view; a one-element fill's buffer is the chain's alone.
    if (scalar) {
      if (bindings.some((b) => b.buffer === out) || this.writer(out) >= 0) return false;
    } else {
      if (bindings.some((b) => b.buffer === out && !sameView(b, call.out))) return false;
      if (this.bind(bindings, call.out, written) < 0) return false;
      // A member before may have been a one-element fill read only through its register: all stay so.
      if (this.members.some((m) => isScalar(m) && m.out.buffer === out)) return false;
    }
    const scalars = this.members.filter(isScalar).length + (scalar ? 1 : 0);
    if (bindings.length + scalars > this.maxBindings) return false;
    this.bindings.splice(0, this.bindings.length, ...bindings);
    this.members.push(call);
    this.sources.push(sources);
    this.shape = shape;
    this.words += call.extras.length;
    return true;
  }

  /**
   * The fused kernel; `stored(k, until)` says whether member k's output must reach memory, given
   * that member `until` (or nothing, when `until` is the chain's length) writes its buffer next.
   * Null when the chain's views cannot be walked together (too many axes after merging).
   */
  build(stored: (k: number, until: number) => boolean): FusedDispatch | null {
    const { env, members } = this;
    const shape = this.shape ?? members[0]!.shape;
    const next = members.map((m, k) => {
      const j = members.findIndex((o, i) => i > k && o.out.buffer === m.out.buffer);
      return j < 0 ? members.length : j;
    });
    const keep = members.map((_, k) => stored(k, next[k]!));
    // A kept one-element fill is written by thread 0 through a binding of its own, broadcast over the shape.
    const all = [...this.bindings];
    const outBinding = members.map((m, k) => {
      if (!isScalar(m)) return all.findIndex((b) => sameView(b, m.out));
      return keep[k] ? all.push({ ...m.out, strides: shape.map(() => 0) }) - 1 : -1;
    });
    const readers = new Map<number, number>();
    for (const s of this.sources.flat()) if ('binding' in s) readers.set(s.binding, (readers.get(s.binding) ?? 0) + 1);
    // Bindings in use: those read from memory and those of stored outputs, renumbered.
    const used = new Set([...readers.keys(), ...members.flatMap((_, k) => (keep[k] ? [outBinding[k]!] : []))]);
    const order = [...used].sort((a, b) => a - b);
    const index = new Map(order.map((b, i) => [b, i]));
    const operands = order.map((b) => all[b]!);
    const writes = new Set(members.flatMap((_, k) => (keep[k] ? [index.get(outBinding[k]!)!] : [])));
    const n = operands.length;
    const base = extrasBase(n) + 1;
    // Parameter words after the walk: the zero, then each member's extras.
    const extraAt: number[] = [];
    let word = base;
    for (const m of members) {
      extraAt.push(word);
      word += m.extras.length;
    }
    const extras = members.flatMap((m) => m.extras);
    let walked: { params: Uint32Array; numel: number };
    try {
      walked = walkParams(shape, operands.map((o) => o.strides), operands.map((o) => o.offset), [0, ...extras], 'fused elementwise');
    } catch (e) {
      if (e instanceof RangeError) return null;
      throw e;
    }
    const codecs = members.map((m) => bitsCodec(env, m.out.dtype) as BitsCodec);
    const at = (k: number, i: number): Source => {
      const s = this.sources[k]![i]!;
      return 'member' in s ? s : { binding: index.get(s.binding)! };
    };
    const lines = members.map((m, k) => {
      // Eager binds each input apart, so its kernel never sees one value twice; here two inputs of
      // a member may read one binding or register, and the shader compiler would then fold x − x to
      // 0 even for NaN and ±Inf (isfinite is x − x == 0). A repeat reads through the opaque zero.
      const sources = this.sources[k]!;
      const key = (s: Source) => ('member' in s ? `r${s.member}` : `b${s.binding}`);
      const repeat = sources.map((s, i) => sources.slice(0, i).filter((o) => key(o) === key(s)).length);
      const reg = (i: number, member: number) => (repeat[i]! > 0 ? `(r${member} ^ (z * ${repeat[i]}u))` : `r${member}`);
      const pos = (i: number, binding: number) => (repeat[i]! > 0 ? `pos${binding} + z * ${repeat[i]}u` : `pos${binding}`);
      const store = m.body({
        ld: (i) => {
          const s = at(k, i);
          return 'member' in s ? codecs[s.member]!.value(reg(i, s.member)) : `b${s.binding}_ld(${pos(i, s.binding)})`;
        },
        raw: (i) => {
          const s = at(k, i);
          return 'member' in s ? reg(i, s.member) : `b${s.binding}_raw(${pos(i, s.binding)})`;
        },
        extra: (j) => `P[${extraAt[k]! + j}u]`,
        zero: 'z',
      });
      const bits = 'st' in store ? codecs[k]!.bits(store.st) : store.raw;
      const b = index.get(outBinding[k]!);
      const write = `b${b}_wraw(pos${b}, r${k});`;
      return `  let r${k} = (${bits}) ^ z;${keep[k] ? `\n  ${isScalar(m) ? `if (i == 0u) { ${write} }` : write}` : ''}`;
    });
    const ops: Operand[] = operands.map((o, i) => ({ name: `b${i}`, dtype: o.dtype, access: writes.has(i) ? 'w' : 'r' }));
    const body = `${MAIN_SIGNATURE} {${THREAD_INDEX}\n${walk(n)}\n  let z = P[${base - 1}u];\n${lines.join('\n')}\n}`;
    const kernel: KernelSource = {
      key: `fused-elementwise|${ops.map((o) => `${o.access}${tag(env, o.dtype)}`).join(',')}|${body}`,
      bindings: ops.map((o) => o.access),
      source: () => shader(env, ops, body),
    };
    return {
      kernel,
      buffers: operands.map((o) => o.buffer),
      params: walked.params,
      groups: groupsFor(walked.numel),
      elided: members.flatMap((m, k) => (keep[k] ? [] : [m.out.buffer])),
      written: [...writes].map((i) => operands[i]!.buffer),
      members: members.map((m, k) => ({ inputs: m.inputs.map((_, i) => {
        const s = at(k, i);
        return 'member' in s ? -1 : s.binding;
      }), extras: extraAt[k]! })),
    };
  }
}
