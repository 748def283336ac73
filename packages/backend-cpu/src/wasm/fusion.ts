// Elementwise fusion in prepared programs (prepared.ts): consecutive bound elementwise_task calls
// over one element count become one fused_task (kernels.c), which runs all their ops on a tile
// before moving to the next. Tiling changes the order in which elements are computed, never what
// each element is: so a chain only takes a call whose memory accesses cannot see that order (an
// access that overlaps a write of another op of the chain must be that very access pattern), and
// every op runs through the same C function as its standalone call, giving the same bits.
import type { CpuStorage } from '../storage.js';
import { BINARY_CODES, COMPARE_CODES, COMPARE_I32_CODES, FUSED_CODES, MOVE_CODES, UNARY_CODES } from '../generated/op-codes.js';

/** Elements per tile: per op and tile, fused_task pays a call and loop set-up (~10 ns measured), which 4096 elements amortise; slots of 16 KiB stay in L2. */
export const TILE = 4096;
const SLOT_BYTES = TILE * 4;
/** Slots one chain may use at once; a value past them is written to memory instead (always allowed). */
const MAX_SLOTS = 16;
/** Ops in one chain (its argument block grows by OP_WORDS per op). */
const MAX_OPS = 64;
/**
 * Narrowest rows a chain walks as a 2-D view: an op with a broadcast row runs row by row, which
 * over shorter rows costs more in calls than fusing saves.
 */
const MIN_COLS = 64;

// EltArgs (kernels.c) words in a bound elementwise_task block.
const MAX_DIMS = 8;
const W_OP = 0;
const W_NDIM = 1;
const W_X = 2; // then y, z, out
const W_SHAPE = 6;
const W_STRIDES = W_SHAPE + MAX_DIMS; // sx, sy, sz, so, MAX_DIMS words each
const W_NUMEL = W_SHAPE + 5 * MAX_DIMS;
const W_CHUNK = W_NUMEL + 1;
const W_TYPE = W_NUMEL + 4;

/** FusedArgs (kernels.c): header words, then per op: op, type, rows and (addr, s0, s1) of x, y, z, out. */
const HEADER_WORDS = 7;
const OP_WORDS = 3 + 4 * 3;

const FLOAT_OPS = new Set<number>([...Object.values(BINARY_CODES), ...Object.values(UNARY_CODES), FUSED_CODES.addcmul] as number[]);
const COMPARE_OPS = new Set<number>(Object.values(COMPARE_CODES));
const COMPARE_I32_OPS = new Set<number>(Object.values(COMPARE_I32_CODES));

/** Bytes per element of x, y, z and out of an elementwise_task op on element type `type` (0: f32, else 16-bit). */
function elementBytes(op: number, type: number): [number, number, number, number] {
  const float = type === 0 ? 4 : 2;
  if (FLOAT_OPS.has(op)) return [float, float, float, float];
  if (COMPARE_OPS.has(op)) return [float, float, 0, 1];
  if (COMPARE_I32_OPS.has(op)) return [4, 4, 0, 1];
  switch (op) {
    case MOVE_CODES.copy32: return [4, 0, 0, 4];
    case MOVE_CODES.copy16: return [2, 0, 0, 2];
    case MOVE_CODES.copy8: return [1, 0, 0, 1];
    case MOVE_CODES.where: return [float, float, 1, float];
    case MOVE_CODES.boolToF32: return [1, 0, 0, 4];
    case MOVE_CODES.f32ToF16: case MOVE_CODES.f32ToBf16: return [4, 0, 0, 2];
    case MOVE_CODES.f16ToF32: case MOVE_CODES.bf16ToF32: return [2, 0, 0, 4];
    default: throw new Error(`cpu fusion: unknown elementwise op code ${op}`);
  }
}

/** One operand of an op as it walks the flat index: 1-D (stride `s`) or 2-D over [numel / cols, cols]. */
interface Access {
  readonly addr: number;
  readonly bytes: number;
  readonly s0: number; // row stride; for 1-D, s·cols once the chain's cols are known
  readonly s1: number;
  readonly flat: boolean; // 1-D: its row stride follows the chain's cols
  readonly storage: CpuStorage;
}

/** A bound elementwise call, decoded from its argument block. */
export interface EltCall {
  /** Its index in the program's calls. */
  readonly index: number;
  readonly op: number;
  readonly type: number;
  readonly numel: number;
  readonly chunk: number;
  readonly tasks: number;
  readonly threads: number;
  /** Its 2-D row length, or 0 when 1-D. */
  readonly cols: number;
  /** x, y, z (null when unused), then out. */
  readonly reads: readonly (Access | null)[];
  readonly write: Access;
}

/** A bound elementwise_task call's operands, or null when fused_task cannot walk them (more than 2 dims, negative strides). */
export function decodeElt(index: number, words: Int32Array, storages: readonly CpuStorage[], tasks: number, threads: number): EltCall | null {
  const op = words[W_OP]!;
  const ndim = words[W_NDIM]!;
  const type = words[W_TYPE]!;
  const numel = words[W_NUMEL]!;
  if (ndim < 1 || ndim > 2) return null;
  const cols = ndim === 2 ? words[W_SHAPE + 1]! : 0;
  if (ndim === 2 && cols < MIN_COLS) return null;
  const bytes = elementBytes(op, type);
  // The call noted its storages as it wrote their addresses: x, then y and z when used, then out.
  const used = [0, 1, 2, 3].filter((k) => words[W_X + k] !== 0);
  if (used.length !== storages.length || !used.includes(0) || !used.includes(3)) return null;
  const accesses: (Access | null)[] = [null, null, null, null];
  for (let u = 0; u < used.length; u++) {
    const k = used[u]!;
    const strides = W_STRIDES + k * MAX_DIMS;
    const s0 = words[strides]!;
    const s1 = ndim === 2 ? words[strides + 1]! : s0;
    if (s0 < 0 || s1 < 0 || bytes[k] === 0) return null;
    accesses[k] = { addr: words[W_X + k]!, bytes: bytes[k]!, s0, s1, flat: ndim === 1, storage: storages[u]! };
  }
  const write = accesses[3]!;
  // Each element written once, so tiles (and threads) may take them in any order.
  if (write.s1 === 0 || (ndim === 2 && write.s0 < cols * write.s1)) return null;
  return { index, op, type, numel, chunk: words[W_CHUNK]!, tasks, threads, cols, reads: accesses.slice(0, 3), write };
}

/** Row and column strides of an access in a chain whose rows are `cols` long. */
function strides(a: Access, cols: number): [number, number] {
  return a.flat ? [a.s0 * cols, a.s0] : [a.s0, a.s1];
}

function same(a: Access, b: Access, cols: number): boolean {
  const [a0, a1] = strides(a, cols);
  const [b0, b1] = strides(b, cols);
  return a.addr === b.addr && a.bytes === b.bytes && a0 === b0 && a1 === b1;
}

function overlaps(a: Access, b: Access, numel: number, cols: number): boolean {
  const end = (x: Access): number => {
    const [r, c] = strides(x, cols);
    return x.addr + ((numel / cols - 1) * r + (cols - 1) * c + 1) * x.bytes;
  };
  return a.addr < end(b) && b.addr < end(a);
}

/** A chain of calls and the geometry they share. */
export interface Chain {
  readonly calls: EltCall[];
  /** Row length of the chain's 2-D view: numel while every call is 1-D, else the 2-D calls' row length. */
  cols: number;
  /** Whether a 2-D call has fixed `cols`. */
  rows: boolean;
}

/**
 * Whether `next` may join `chain`: the same element count, rows of one length, and no access of
 * its that overlaps an access of an earlier op, one of them a write, unless the two are the same
 * pattern (then each element is read and written by the same tile, in program order).
 */
export function canJoin(chain: Chain, next: EltCall): boolean {
  const first = chain.calls[0]!;
  if (chain.calls.length >= MAX_OPS || next.numel !== first.numel) return false;
  if (next.cols !== 0 && chain.rows && chain.cols !== next.cols) return false;
  const cols = next.cols === 0 ? chain.cols : next.cols;
  const mine = [...next.reads.filter((a): a is Access => a !== null).map((a) => ({ a, write: false })), { a: next.write, write: true }];
  for (const earlier of chain.calls) {
    const theirs = [...earlier.reads.filter((a): a is Access => a !== null).map((a) => ({ a, write: false })), { a: earlier.write, write: true }];
    for (const m of mine) {
      for (const t of theirs) {
        if ((m.write || t.write) && overlaps(m.a, t.a, first.numel, cols) && !same(m.a, t.a, cols)) return false;
      }
    }
  }
  return true;
}

/** Adds `next` (canJoin said yes) to `chain`. */
export function join(chain: Chain, next: EltCall): void {
  if (next.cols !== 0) {
    chain.cols = next.cols;
    chain.rows = true;
  }
  chain.calls.push(next);
}

export function newChain(first: EltCall): Chain {
  return { calls: [first], cols: first.cols === 0 ? first.numel : first.cols, rows: first.cols !== 0 };
}

/** Words of a chain's FusedArgs block (its ops that survive are at most its calls). */
export function chainWords(chain: Chain): number {
  return HEADER_WORDS + chain.calls.length * OP_WORDS;
}

/**
 * Writes a chain's FusedArgs into `words` at `at`. `dead(storage, from, to)` tells whether nothing
 * reads the storage once some call with index in [from, to] has run (PrepareOptions.deadAfter).
 * An op's result that is dead by the chain's end is kept in a slot when a later op of the chain
 * reads it, and not computed at all when none does; every other result is written to memory, as
 * the call would. Returns the ops written.
 */
export function writeChain(
  chain: Chain, words: Int32Array, at: number, scratch: { base: number; bytes: number },
  dead: (storage: CpuStorage, from: number, to: number) => boolean,
): number {
  const { calls, cols } = chain;
  const last = calls[calls.length - 1]!.index;
  const maxSlots = Math.min(MAX_SLOTS, Math.floor(scratch.bytes / SLOT_BYTES));
  // Per op: the later ops that read its result (the same pattern, before another op writes it).
  const readers = calls.map(() => [] as number[]);
  for (let k = 0; k < calls.length; k++) {
    for (const r of calls[k]!.reads) {
      if (r === null) continue;
      for (let j = k - 1; j >= 0; j--) {
        if (same(calls[j]!.write, r, cols)) {
          readers[j]!.push(k);
          break;
        }
      }
    }
  }
  /** Per op: its result's slot, -1 when written to memory, -2 when not computed. */
  const place = new Int32Array(calls.length).fill(-1);
  const slotFreeAfter = new Int32Array(maxSlots).fill(-1); // the op after which a slot is free
  for (let k = 0; k < calls.length; k++) {
    const c = calls[k]!;
    if (!dead(c.write.storage, c.index, last)) continue;
    const lastRead = readers[k]!.length === 0 ? -1 : readers[k]![readers[k]!.length - 1]!;
    if (lastRead < 0) {
      place[k] = -2;
      continue;
    }
    // A slot whose value was last read before this op (never one this op reads: element sizes may differ).
    const slot = slotFreeAfter.findIndex((after) => after < k);
    if (slot < 0) continue; // out of slots: to memory, which is always allowed
    slotFreeAfter[slot] = lastRead;
    place[k] = slot;
  }
  const where = (a: Access | null, k: number): [number, number, number] => {
    if (a === null) return [0, 0, 0];
    for (let j = k - 1; j >= 0; j--) {
      if (same(calls[j]!.write, a, cols)) {
        if (place[j]! >= 0) return [-place[j]! - 1, 0, 1];
        break;
      }
    }
    const [s0, s1] = strides(a, cols);
    return [a.addr, s0, s1];
  };
  const first = calls[0]!;
  let w = at + HEADER_WORDS;
  let count = 0;
  for (let k = 0; k < calls.length; k++) {
    if (place[k] === -2) continue;
    const c = calls[k]!;
    const operands = [...c.reads.map((a) => where(a, k)), place[k]! >= 0 ? [-place[k]! - 1, 0, 1] : where(c.write, 0)];
    // Runs cross row ends unless some memory operand's rows are not laid end to end.
    const rows = operands.some(([addr, s0, s1]) => addr > 0 && s0 !== s1! * cols);
    words[w] = c.op;
    words[w + 1] = c.type;
    words[w + 2] = rows ? 1 : 0;
    operands.forEach((o, q) => words.set(o, w + 3 + 3 * q));
    w += OP_WORDS;
    count++;
  }
  words.set([first.numel, first.chunk, cols, count, scratch.base, scratch.bytes, TILE], at);
  return count;
}
