// The WebAssembly memory that holds CPU tensors when the wasm kernels are on, and its allocator.
// Blocks are 64-byte aligned. Freed blocks are kept by exact size (a training loop allocates the
// same sizes every step); when the heap would have to grow, free neighbours are merged first and
// the best-fitting merged block is split.
import { reclaimsSynchronously } from '@core/tensor';
import { binding } from '../bind.js';

const PAGE = 65536;
const ALIGN = 64;

/**
 * Garbage collection pressure. Tensors are freed by finalizers, which run only after the JS
 * engine collects their handles; the engine collects old objects when its own heap or the
 * external memory it accounts for (ArrayBuffers still reachable) grows — it never sees bytes
 * handed out inside a wasm memory. So every PRESSURE_BYTES handed out, the heap hands the new
 * block's owner a ballast ArrayBuffer of that size to hold until it is freed: the engine then
 * counts wasm tensors about as it counts typed arrays, and collects as often as it would for them
 * (a dropped buffer would not do: it dies young and never counts against the old generation). In
 * Node the ballast comes from Buffer.allocUnsafeSlow, which skips zero-filling: the memory is never
 * touched, so it costs ~30 µs per 8 MiB and no resident memory.
 */
const PRESSURE_BYTES = 8 << 20;
// Where core reclaims synchronously (Node), it counts wasm tensors and asks for collections itself,
// and the ballast is skipped: it made V8 run a marking cycle over the whole JS heap every 8 MiB of
// tensors, which with a large heap on 2 cores took a core from the kernels (an MLP step at 150
// instead of 167 steps/s next to a 175 MiB heap; 255 → 273 with a small one).

type UnzeroedAlloc = (bytes: number) => unknown;
const allocBallast: UnzeroedAlloc =
  (globalThis as { Buffer?: { allocUnsafeSlow?: UnzeroedAlloc } }).Buffer?.allocUnsafeSlow ?? ((bytes) => new ArrayBuffer(bytes));

/**
 * Bytes at the bottom of the wasm memory left to the kernels module's static data (constant
 * tables the compiler makes); tensors start above. The runtime checks the module's __heap_base
 * against it when it instantiates the module.
 */
export const RESERVED_BYTES = 64 * 1024;

function alignUp(bytes: number): number {
  return Math.ceil(Math.max(bytes, 1) / ALIGN) * ALIGN;
}

export interface HeapStats {
  /** Bytes in live blocks. */
  readonly liveBytes: number;
  /** Bytes of wasm memory in use (live or cached free blocks). */
  readonly reservedBytes: number;
}

export class WasmHeap {
  readonly memory: WebAssembly.Memory;
  /** True when the memory is a SharedArrayBuffer, so worker threads can run kernels on it. */
  readonly shared: boolean;
  private top = RESERVED_BYTES;
  private liveBytes = 0;
  private readonly freeBySize = new Map<number, number[]>();
  private freeBytes = 0;
  /** A block was freed since the last merge of neighbours. */
  private freedSinceCoalesce = false;
  private readonly maxBytes: number;
  /** The memory's size in bytes; only this heap grows it. (Reading memory.buffer on every allocation costs.) */
  private capacity: number;
  private sincePressure = 0;

  constructor(memory: WebAssembly.Memory, shared: boolean, maxPages: number) {
    this.memory = memory;
    this.capacity = memory.buffer.byteLength;
    this.shared = shared;
    this.maxBytes = maxPages * PAGE;
  }

  /** The address of a new block of at least `bytes` bytes, or -1 when the heap cannot hold it. */
  alloc(bytes: number): number {
    // A kernel that takes temporaries cannot be bound to a prepared program (bind.ts).
    if (binding.record !== null) binding.record.allocations++;
    const size = alignUp(bytes);
    let address = this.takeFree(size);
    if (address < 0 && this.top + size > this.capacity && this.freeBytes >= size) {
      // Growing is the last resort: first merge free neighbours (once per batch of frees: merging
      // sorts every free block) and reuse the best fit.
      if (this.freedSinceCoalesce) {
        this.coalesce();
        this.freedSinceCoalesce = false;
      }
      address = this.takeBestFit(size);
    }
    if (address < 0) address = this.bump(size);
    if (address < 0) return -1;
    this.liveBytes += size;
    this.sincePressure += size;
    return address;
  }

  /** A ballast buffer for the owner of the block just allocated to hold, once per PRESSURE_BYTES handed out; else null. */
  takeBallast(): unknown {
    if (this.sincePressure < PRESSURE_BYTES || reclaimsSynchronously()) return null;
    this.sincePressure -= PRESSURE_BYTES;
    return allocBallast(PRESSURE_BYTES);
  }

  /**
   * Returns a block of `bytes` (what alloc was asked for) to the heap. The owner passes the size:
   * a map from address to size cost more per tensor than the rest of an allocation.
   */
  free(address: number, bytes: number): void {
    const size = alignUp(bytes);
    this.liveBytes -= size;
    this.pushFree(address, size);
    this.freedSinceCoalesce = true;
  }

  stats(): HeapStats {
    return { liveBytes: this.liveBytes, reservedBytes: this.top };
  }

  private pushFree(address: number, size: number): void {
    const list = this.freeBySize.get(size);
    if (list) list.push(address);
    else this.freeBySize.set(size, [address]);
    this.freeBytes += size;
  }

  private takeFree(size: number): number {
    const list = this.freeBySize.get(size);
    const address = list?.pop();
    if (address === undefined) return -1;
    if (list!.length === 0) this.freeBySize.delete(size);
    this.freeBytes -= size;
    return address;
  }

  /** Merges adjacent free blocks and gives a free block at the top back to the bump pointer. */
  private coalesce(): void {
    const blocks: [number, number][] = [];
    for (const [size, list] of this.freeBySize) for (const address of list) blocks.push([address, size]);
    blocks.sort((x, y) => x[0] - y[0]);
    this.freeBySize.clear();
    this.freeBytes = 0;
    const merged: [number, number][] = [];
    for (const block of blocks) {
      const last = merged[merged.length - 1];
      if (last && last[0] + last[1] === block[0]) last[1] += block[1];
      else merged.push([block[0], block[1]]);
    }
    const last = merged[merged.length - 1];
    if (last && last[0] + last[1] === this.top) {
      this.top = last[0];
      merged.pop();
    }
    for (const [address, size] of merged) this.pushFree(address, size);
  }

  private takeBestFit(size: number): number {
    let best = -1;
    for (const candidate of this.freeBySize.keys()) {
      if (candidate >= size && (best < 0 || candidate < best)) best = candidate;
    }
    if (best < 0) return -1;
    const address = this.takeFree(best);
    if (best > size) this.pushFree(address + size, best - size);
    return address;
  }

  private bump(size: number): number {
    const end = this.top + size;
    if (end > this.maxBytes) return -1;
    const have = this.capacity;
    if (end > have) {
      // Grow by at least half the current size so growth stays amortised.
      const want = Math.min(this.maxBytes, Math.max(end, have + (have >> 1)));
      try {
        this.memory.grow(Math.ceil((want - have) / PAGE));
      } catch {
        return -1; // the engine refused the memory: the caller falls back to a host array
      }
      this.capacity = this.memory.buffer.byteLength;
    }
    const address = this.top;
    this.top = end;
    return address;
  }
}
