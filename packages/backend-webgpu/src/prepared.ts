// Prepared programs (Backend.prepare): a list of calls recorded once as device commands, with
// their pipelines, bind groups and parameters built at prepare, then queued at every run into one
// command encoder. Recording runs each call with the runtime's work sent here instead of to the
// device: a dispatch gets its own parameter slot in the program's buffer and a bind group over it;
// a host write becomes a copy from a buffer the program owns, in its place among the dispatches; a
// temporary stays the program's. At each run, the calls whose arguments change run again against
// their recorded commands: their parameters are rewritten (their slots come first in the program's
// buffer, so one writeBuffer covers them), their uploads refilled, a bind group rebuilt only where
// a storage changed. Nothing is queued when one of them now queues other work: run() says so.
import type { DTypeName, PreparedCall, PreparedProgram } from '@core/tensor';
import { WebGPUError } from './errors.js';
import { PARAM_SLOT_BYTES, PARAM_SLOT_WORDS, type CommandSink, type KernelSource, type Runtime } from './runtime.js';
import { Usage, WebGPUStorage } from './storage.js';

interface Dispatch {
  readonly kind: 'dispatch';
  readonly key: string;
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
  /** Its parameter slot: the dispatches of varying calls come first, so one writeBuffer covers them. */
  slot: number;
  /** Recorded for a call that varies. */
  readonly varies: boolean;
  buffers: readonly GPUBuffer[];
  bindGroup: GPUBindGroup;
  groups: readonly [number, number, number];
}

interface Copy {
  readonly kind: 'copy';
  src: GPUBuffer;
  srcOffset: number;
  dst: GPUBuffer;
  dstOffset: number;
  bytes: number;
  /** A host write's data lives in `src`, a buffer of the program's. */
  readonly upload: boolean;
}

type Command = Dispatch | Copy;

interface Call {
  readonly run: () => void;
  readonly varies: boolean;
  readonly commands: [first: number, count: number];
  readonly temps: [first: number, count: number];
}

/** How the program gets and gives back temporaries: the backend's own storage pool. */
export interface TempAllocator {
  allocate(dtype: DTypeName, numel: number): WebGPUStorage;
  release(storage: WebGPUStorage): void;
}

/** A varying call queued other work at run than at prepare. */
class Mismatch extends Error {}

const sameBuffers = (a: readonly GPUBuffer[], b: readonly GPUBuffer[]) => a.length === b.length && a.every((x, i) => x === b[i]);

export class WebGPUPreparedProgram implements PreparedProgram, CommandSink {
  private readonly commands: Command[] = [];
  private readonly calls: Call[] = [];
  private readonly temps: WebGPUStorage[] = [];
  /** Storages the calls that do not vary use: checked at each run, since their bind groups are never rebuilt. */
  private readonly storages = new Set<WebGPUStorage>();
  private readonly uploads: GPUBuffer[] = [];
  private readonly pendingUploads: { buffer: GPUBuffer; data: ArrayBufferView }[] = [];
  private readonly params: Uint32Array<ArrayBuffer>;
  private readonly paramBuffer: GPUBuffer;
  /** Each dispatch's parameters while recording, in order. */
  private recorded: Uint32Array[] = [];
  private dispatchCount = 0;
  /** Slots 0..varyingSlots-1 belong to the dispatches of varying calls. */
  private varyingSlots = 0;
  /** While updating: the next command and temporary a call's work must match. */
  private cursor = -1;
  private tempCursor = -1;
  /** `rt.submits` when this program was last encoded: while equal, that batch is not submitted yet. */
  private encodedAt = -1;
  private released = false;
  /** While recording a call that varies (the storages of the others are noted). */
  private varying = false;
  readonly description: string;

  constructor(
    private readonly rt: Runtime,
    private readonly allocator: TempAllocator,
    calls: readonly PreparedCall[],
  ) {
    rt.sink = this;
    try {
      for (const c of calls) {
        const commands: [number, number] = [this.commands.length, 0];
        const temps: [number, number] = [this.temps.length, 0];
        this.varying = c.varies;
        c.run();
        commands[1] = this.commands.length - commands[0];
        temps[1] = this.temps.length - temps[0];
        this.calls.push({ run: c.run, varies: c.varies, commands, temps });
      }
    } catch (e) {
      this.release();
      throw e;
    } finally {
      rt.sink = null;
      this.varying = false;
    }
    const dispatches = this.commands.filter((c): c is Dispatch => c.kind === 'dispatch');
    const varying = dispatches.filter((d) => d.varies);
    const order = [...varying, ...dispatches.filter((d) => !d.varies)];
    this.varyingSlots = varying.length;
    this.params = new Uint32Array(Math.max(1, order.length) * PARAM_SLOT_WORDS);
    order.forEach((d, slot) => this.params.set(this.recorded[d.slot]!, (d.slot = slot) * PARAM_SLOT_WORDS));
    this.recorded = [];
    this.paramBuffer = rt.device.createBuffer({ size: this.params.byteLength, usage: Usage.STORAGE | Usage.COPY_DST });
    rt.device.queue.writeBuffer(this.paramBuffer, 0, this.params);
    for (const d of dispatches) d.bindGroup = this.bindGroup(d.layout, d.slot, d.buffers);
    const copies = this.commands.length - this.dispatchCount;
    this.description =
      `webgpu: ${this.dispatchCount} dispatches${copies > 0 ? ` and ${copies} copies` : ''} with bind groups built once, ` +
      `one command buffer per run, ${this.calls.filter((c) => c.varies).length} of ${calls.length} calls run again per replay for their new arguments`;
  }

  /** True while a varying call runs again in run(): its work is matched against what it recorded. */
  private get updating(): boolean {
    return this.cursor >= 0;
  }

  private next(kind: Command['kind']): Command {
    const c = this.commands[this.cursor++];
    if (c === undefined || c.kind !== kind) throw new Mismatch();
    return c;
  }

  private bindGroup(layout: GPUBindGroupLayout, slot: number, buffers: readonly GPUBuffer[]): GPUBindGroup {
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: this.paramBuffer, offset: slot * PARAM_SLOT_BYTES, size: PARAM_SLOT_BYTES } }];
    buffers.forEach((buffer, i) => entries.push({ binding: i + 1, resource: { buffer } }));
    return this.rt.device.createBindGroup({ layout, entries });
  }

  dispatch(kernel: KernelSource, buffers: readonly GPUBuffer[], params: Uint32Array, groups: readonly [number, number, number]): void {
    if (this.updating) {
      const d = this.next('dispatch') as Dispatch;
      if (d.key !== kernel.key) throw new Mismatch();
      this.params.fill(0, d.slot * PARAM_SLOT_WORDS, (d.slot + 1) * PARAM_SLOT_WORDS);
      this.params.set(params, d.slot * PARAM_SLOT_WORDS);
      d.groups = groups;
      if (!sameBuffers(d.buffers, buffers)) {
        d.buffers = [...buffers];
        d.bindGroup = this.bindGroup(d.layout, d.slot, d.buffers);
      }
      return;
    }
    const { pipeline, layout } = this.rt.pipeline(kernel);
    // The slot is the dispatch's index until every dispatch is known; the bind group comes then too.
    const slot = this.dispatchCount++;
    this.recorded.push(params.slice());
    this.commands.push({ kind: 'dispatch', key: kernel.key, pipeline, layout, slot, varies: this.varying, buffers: [...buffers], bindGroup: null as unknown as GPUBindGroup, groups });
  }

  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void {
    if (this.updating) {
      const c = this.next('copy') as Copy;
      if (c.upload) throw new Mismatch();
      Object.assign(c, { src, srcOffset, dst, dstOffset, bytes });
      return;
    }
    this.commands.push({ kind: 'copy', src, srcOffset, dst, dstOffset, bytes, upload: false });
  }

  upload(buffer: GPUBuffer, byteOffset: number, data: ArrayBufferView): void {
    const bytes = data.byteLength;
    if (this.updating) {
      const c = this.next('copy') as Copy;
      if (!c.upload || c.bytes !== bytes) throw new Mismatch();
      c.dst = buffer;
      c.dstOffset = byteOffset;
      this.pendingUploads.push({ buffer: c.src, data });
      return;
    }
    const src = this.rt.device.createBuffer({ size: Math.max(4, bytes), usage: Usage.COPY_SRC | Usage.COPY_DST, mappedAtCreation: true });
    new Uint8Array(src.getMappedRange(0, bytes)).set(new Uint8Array(data.buffer, data.byteOffset, bytes));
    src.unmap();
    this.uploads.push(src);
    this.commands.push({ kind: 'copy', src, srcOffset: 0, dst: buffer, dstOffset: byteOffset, bytes, upload: true });
  }

  /** A temporary of a call: allocated (and kept) while recording, the same one again while updating. */
  temp(dtype: DTypeName, numel: number): WebGPUStorage {
    if (this.updating) {
      const t = this.temps[this.tempCursor++];
      if (t === undefined || t.dtype !== dtype || t.numel !== numel) throw new Mismatch();
      return t;
    }
    const t = this.allocator.allocate(dtype, numel);
    this.temps.push(t);
    return t;
  }

  /** The storages a call uses (its arguments), noted while recording the calls that do not vary. */
  uses(args: readonly unknown[]): void {
    if (this.varying || this.updating) return;
    const note = (a: unknown) => {
      if (a instanceof WebGPUStorage) this.storages.add(a);
      else if (typeof a === 'object' && a !== null && 'storage' in a && a.storage instanceof WebGPUStorage) this.storages.add(a.storage);
    };
    for (const a of args) {
      if (Array.isArray(a)) a.forEach(note);
      else note(a);
    }
  }

  run(): boolean {
    if (this.released) throw new WebGPUError('webgpu: a prepared program was run after release()');
    this.rt.check();
    for (const s of this.storages) {
      if (s.freed) {
        throw new WebGPUError(`webgpu: a prepared program uses a ${s.dtype} storage of ${s.numel} elements that has been freed; keep the tensors its calls use alive, or compile the function again`);
      }
    }
    if (!this.update()) return false;
    const { rt } = this;
    // Parameters and uploads are rewritten in place: the last run's commands must be submitted first.
    if (this.encodedAt === rt.submits) rt.flush();
    if (this.varyingSlots > 0) rt.device.queue.writeBuffer(this.paramBuffer, 0, this.params, 0, this.varyingSlots * PARAM_SLOT_WORDS);
    for (const { buffer, data } of this.pendingUploads.splice(0)) rt.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    this.encode(rt.commandEncoder());
    rt.dispatches += this.dispatchCount;
    this.encodedAt = rt.submits;
    return true;
  }

  /** Runs the varying calls against their recorded commands; false when one queued other work. */
  private update(): boolean {
    this.rt.sink = this;
    try {
      for (const c of this.calls) {
        if (!c.varies) continue;
        this.cursor = c.commands[0];
        this.tempCursor = c.temps[0];
        c.run();
        if (this.cursor !== c.commands[0] + c.commands[1] || this.tempCursor !== c.temps[0] + c.temps[1]) return false;
      }
      return true;
    } catch (e) {
      if (e instanceof Mismatch) return false;
      throw e;
    } finally {
      this.cursor = -1;
      this.tempCursor = -1;
      this.rt.sink = null;
    }
  }

  private encode(encoder: GPUCommandEncoder): void {
    let pass: GPUComputePassEncoder | null = null;
    let pipeline: GPUComputePipeline | null = null;
    for (const c of this.commands) {
      if (c.kind === 'dispatch') {
        pass ??= encoder.beginComputePass();
        if (c.pipeline !== pipeline) pass.setPipeline((pipeline = c.pipeline));
        pass.setBindGroup(0, c.bindGroup);
        pass.dispatchWorkgroups(c.groups[0], c.groups[1], c.groups[2]);
      } else {
        pass?.end();
        pass = null;
        pipeline = null;
        encoder.copyBufferToBuffer(c.src, c.srcOffset, c.dst, c.dstOffset, c.bytes);
      }
    }
    pass?.end();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.encodedAt === this.rt.submits) this.rt.flush();
    for (const b of this.uploads) b.destroy();
    // Created after recording: absent when recording failed.
    (this.paramBuffer as GPUBuffer | undefined)?.destroy();
    for (const t of this.temps) this.allocator.release(t);
  }
}
