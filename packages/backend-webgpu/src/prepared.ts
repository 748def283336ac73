// Prepared programs (Backend.prepare): a list of calls recorded once as device commands, with
// their pipelines, bind groups and parameters built at prepare, then queued at every run into one
// command encoder. Recording runs each call with the runtime's work sent here instead of to the
// device: a dispatch gets its own parameter slot in the program's buffer and a bind group over it;
// a host write becomes a copy from a buffer the program owns, in its place among the dispatches; a
// temporary stays the program's. At each run, the calls whose arguments change run again against
// their recorded commands: their parameters are rewritten (their slots come first in the program's
// buffer, and one writeBuffer covers the slots that changed), their uploads refilled, a bind group
// rebuilt only where a storage changed; a call with its last run's arguments stops at its kernel's
// door, and a kernel that can say its parameters for new scalars (adamw's per-step spec) gives
// just those. Nothing is queued when one of them now queues other work: run() says so.
// Runs of elementwise calls become one generated kernel each (fusion.ts); an output that core says
// nothing reads after the run stays in registers, and a varying member's new arguments are put
// into the fused dispatch.
import type { DTypeName, PreparedCall, PreparedProgram } from '@core/tensor';
import { WebGPUError } from './errors.js';
import { FusionChain, sameLayout, type ElementCall, type FusedMember } from './fusion.js';
import { PARAM_SLOT_BYTES, PARAM_SLOT_WORDS, type CommandSink, type KernelSource, type Refresh, type Runtime } from './runtime.js';
import { Usage, WebGPUStorage } from './storage.js';
import type { ShaderEnv } from './wgsl/gen.js';

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
  /** An elementwise call's description, for fusion. */
  readonly element?: ElementCall;
  /** The kernel's parameters for its call's new arguments (see Refresh): set by the kernel's last run. */
  refresh?: Refresh;
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
  commands: [first: number, count: number];
  readonly temps: [first: number, count: number];
  /** A varying call fused into another dispatch: where its new arguments go. */
  member?: Member;
  /** A varying call's kernel arguments at its last run (arrays copied), or null: see `unchanged`. */
  args: readonly unknown[] | null;
}

/** A call's part of a fused dispatch. */
interface Member {
  readonly fusion: Fusion;
  /** The kernel it queued, as recorded. */
  readonly key: string;
  readonly element: ElementCall;
  readonly at: FusedMember;
  /** The buffers of its inputs now (a varying call's change at each run). */
  readonly inputs: GPUBuffer[];
}

/** A fused dispatch with a varying member, and what its members need. */
interface Fusion {
  readonly dispatch: Dispatch;
  readonly members: readonly Member[];
  /** The buffers it writes: no input may be rebound to them. */
  readonly written: readonly GPUBuffer[];
}

/** How the program gets and gives back temporaries: the backend's own storage pool. */
export interface TempAllocator {
  allocate(dtype: DTypeName, numel: number): WebGPUStorage;
  release(storage: WebGPUStorage): void;
}

/** A varying call queued other work at run than at prepare. */
class Mismatch extends Error {}

const sameBuffers = (a: readonly GPUBuffer[], b: readonly GPUBuffer[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether an argument (a storage, a reference to one, or an array of them) holds a freed storage. */
function holdsFreed(a: unknown): boolean {
  if (a instanceof WebGPUStorage) return a.freed;
  if (Array.isArray(a)) return a.some(holdsFreed);
  return typeof a === 'object' && a !== null && 'storage' in a && a.storage instanceof WebGPUStorage && a.storage.freed;
}

/** A kernel's arguments as `sameArgs` compares them later: arrays copied (core refills their items in place). */
const snapshotArgs = (args: readonly unknown[]): readonly unknown[] => args.map((a) => (Array.isArray(a) ? a.slice() : a));

/**
 * The same arguments: the same values and objects (storage references, specs), arrays item by
 * item. A host array (a typed array) is never the same: its contents may have changed in place.
 */
function sameArgs(was: readonly unknown[], now: readonly unknown[]): boolean {
  if (was.length !== now.length) return false;
  for (let i = 0; i < now.length; i++) {
    const a = was[i];
    const b = now[i];
    if (Array.isArray(b)) {
      if (!Array.isArray(a) || a.length !== b.length) return false;
      for (let j = 0; j < b.length; j++) if (!Object.is(a[j], b[j]) || ArrayBuffer.isView(b[j])) return false;
    } else if (!Object.is(a, b) || ArrayBuffer.isView(b)) {
      return false;
    }
  }
  return true;
}

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
  /** The slots whose parameters changed since the last run wrote them: [dirtyFirst, dirtyEnd). */
  private dirtyFirst = Number.POSITIVE_INFINITY;
  private dirtyEnd = 0;
  /** `WebGPUStorage.releases` when `storages` were last checked: no storage was freed since while it is equal. */
  private checkedAt = -1;
  /** While updating: the next command and temporary a call's work must match. */
  private cursor = -1;
  private tempCursor = -1;
  /** `rt.submits` when this program was last encoded: while equal, that batch is not submitted yet. */
  private encodedAt = -1;
  private released = false;
  /** While recording a call that varies (the storages of the others are noted). */
  private varying = false;
  /** Outputs of fused calls kept in registers: their storages do not get those values. */
  private readonly elided = new Set<GPUBuffer>();
  /** While updating a fused varying call: its member, and whether its dispatch came. */
  private member: Member | null = null;
  private memberSeen = false;
  /** The fused dispatches with varying members. */
  private readonly fusions: Fusion[] = [];
  /** While a varying call records or runs again, until its kernel is entered: where its arguments go (see `unchanged`). */
  private entering: { args: readonly unknown[] | null } | null = null;
  /** While updating: the varying call running again, and how many uploads were pending before it. */
  private current: Call | null = null;
  private uploadsBefore = 0;
  /**
   * At the last run (for tests and profiling): the varying calls whose kernels ran again, and those
   * whose kernel only recomputed its parameters (see Refresh); the others had their last run's arguments.
   */
  reran = 0;
  refreshed = 0;
  /** While updating: the current call's kernel did not run (`unchanged`). */
  private skipped = false;
  readonly description: string;

  /** `deadAfter`: per call, the storages nothing reads after it (PrepareOptions.deadAfter). */
  constructor(
    private readonly rt: Runtime,
    private readonly allocator: TempAllocator,
    calls: readonly PreparedCall[],
    env: ShaderEnv,
    deadAfter?: readonly (readonly WebGPUStorage[])[],
  ) {
    rt.sink = this;
    try {
      for (const c of calls) {
        const commands: [number, number] = [this.commands.length, 0];
        const temps: [number, number] = [this.temps.length, 0];
        this.varying = c.varies;
        const seen: { args: readonly unknown[] | null } = { args: null };
        this.entering = c.varies ? seen : null;
        c.run();
        this.entering = null;
        commands[1] = this.commands.length - commands[0];
        temps[1] = this.temps.length - temps[0];
        this.calls.push({ run: c.run, varies: c.varies, commands, temps, args: seen.args });
      }
    } catch (e) {
      this.release();
      throw e;
    } finally {
      rt.sink = null;
      this.varying = false;
      this.entering = null;
    }
    const fused = this.fuse(env, deadAfter);
    const dispatches = this.commands.filter((c): c is Dispatch => c.kind === 'dispatch');
    this.dispatchCount = dispatches.length;
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
      (fused.kernels > 0 ? `${fused.kernels} of them fused elementwise kernels in place of ${fused.calls} calls, ` : '') +
      `one command buffer per run, ${this.calls.filter((c) => c.varies).length} of ${calls.length} calls run again per replay for their new arguments (not when they are the last run's)`;
  }

  /** True while a varying call runs again in run(): its work is matched against what it recorded. */
  private get updating(): boolean {
    return this.cursor >= 0;
  }

  private next(kind: Command['kind']): Command {
    if (this.member !== null) throw new Mismatch();
    const c = this.commands[this.cursor++];
    if (c === undefined || c.kind !== kind) throw new Mismatch();
    return c;
  }

  private bindGroup(layout: GPUBindGroupLayout, slot: number, buffers: readonly GPUBuffer[]): GPUBindGroup {
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: this.paramBuffer, offset: slot * PARAM_SLOT_BYTES, size: PARAM_SLOT_BYTES } }];
    buffers.forEach((buffer, i) => entries.push({ binding: i + 1, resource: { buffer } }));
    return this.rt.device.createBindGroup({ layout, entries });
  }

  dispatch(kernel: KernelSource, buffers: readonly GPUBuffer[], params: Uint32Array, groups: readonly [number, number, number], element?: ElementCall, refresh?: Refresh): void {
    if (this.member !== null) {
      this.updateMember(this.member, kernel, element);
      return;
    }
    if (this.updating) {
      const d = this.next('dispatch') as Dispatch;
      if (d.key !== kernel.key) throw new Mismatch();
      this.setParams(d.slot, 0, params, PARAM_SLOT_WORDS);
      d.groups = groups;
      d.refresh = refresh;
      if (!sameBuffers(d.buffers, buffers)) {
        if (buffers.some((b) => this.elided.has(b) && !d.buffers.includes(b))) throw new Mismatch();
        d.buffers = [...buffers];
        d.bindGroup = this.bindGroup(d.layout, d.slot, d.buffers);
      }
      return;
    }
    const { pipeline, layout } = this.rt.pipeline(kernel);
    // The slot is the dispatch's index until every dispatch is known; the bind group comes then too.
    const slot = this.dispatchCount++;
    this.recorded.push(params.slice());
    this.commands.push({ kind: 'dispatch', key: kernel.key, pipeline, layout, slot, varies: this.varying, buffers: [...buffers], bindGroup: null as unknown as GPUBindGroup, groups, element, refresh });
  }

  /**
   * Words `at`..`at + length - 1` of `slot`'s parameters become `words` (then zeros): the slot is
   * written to the device at the next run only when one of them changed.
   */
  private setParams(slot: number, at: number, words: ArrayLike<number>, length: number): void {
    const params = this.params;
    const base = slot * PARAM_SLOT_WORDS + at;
    let changed = false;
    for (let i = 0; i < length; i++) {
      const w = i < words.length ? words[i]! >>> 0 : 0;
      if (params[base + i] !== w) {
        params[base + i] = w;
        changed = true;
      }
    }
    if (!changed) return;
    if (slot < this.dirtyFirst) this.dirtyFirst = slot;
    if (slot + 1 > this.dirtyEnd) this.dirtyEnd = slot + 1;
  }

  /**
   * Replaces each run of consecutive calls that queued one elementwise dispatch each by one fused
   * dispatch (see FusionChain); a member's output stays in registers when `deadAfter` says nothing
   * reads it after the run. A varying member's new arguments go to the fused dispatch (see
   * updateMember). Returns how many fused kernels replace how many calls.
   */
  private fuse(env: ShaderEnv, deadAfter: readonly (readonly WebGPUStorage[])[] | undefined): { kernels: number; calls: number } {
    const dead = this.calls.map((_, i) => new Set((deadAfter?.[i] ?? []).map((s) => s.buffer)));
    const maxBindings = this.rt.device.limits.maxStorageBuffersPerShaderStage - 1;
    const commands: Command[] = [];
    const result = { kernels: 0, calls: 0 };
    let run: { calls: number[]; chain: FusionChain } | null = null;
    const keep = (ci: number) => {
      const [first, count] = this.calls[ci]!.commands;
      this.calls[ci]!.commands = [commands.length, count];
      commands.push(...this.commands.slice(first, first + count));
    };
    const close = () => {
      if (run === null) return;
      const { calls, chain } = run;
      run = null;
      const f = calls.length > 1 ? chain.build((k, until) => !calls.slice(k, until).some((ci) => dead[ci]!.has(chain.members[k]!.out.buffer))) : null;
      if (f === null) {
        calls.forEach(keep);
        return;
      }
      const { pipeline, layout } = this.rt.pipeline(f.kernel);
      const slot = this.recorded.push(f.params) - 1;
      const varies = calls.some((ci) => this.calls[ci]!.varies);
      const dispatch: Dispatch = { kind: 'dispatch', key: f.kernel.key, pipeline, layout, slot, varies, buffers: f.buffers, bindGroup: null as unknown as GPUBindGroup, groups: f.groups };
      const members: Member[] = [];
      const fusion: Fusion = { dispatch, members, written: f.written };
      calls.forEach((ci, k) => {
        const c = this.calls[ci]!;
        const element = chain.members[k]!;
        const member: Member = { fusion, key: (this.commands[c.commands[0]] as Dispatch).key, element, at: f.members[k]!, inputs: element.inputs.map((i) => i.buffer) };
        members.push(member);
        c.commands = [commands.length, 0];
        if (c.varies) c.member = member;
      });
      if (varies) this.fusions.push(fusion);
      commands.push(dispatch);
      for (const b of f.elided) this.elided.add(b);
      result.kernels++;
      result.calls += calls.length;
    };
    this.calls.forEach((c, ci) => {
      const only = c.commands[1] === 1 && c.temps[1] === 0 ? this.commands[c.commands[0]] : undefined;
      const element = only?.kind === 'dispatch' ? only.element : undefined;
      if (element === undefined) {
        close();
        keep(ci);
        return;
      }
      if (run?.chain.add(element)) {
        run.calls.push(ci);
        return;
      }
      close();
      const chain = new FusionChain(env, maxBindings, PARAM_SLOT_WORDS);
      if (chain.add(element)) run = { calls: [ci], chain };
      else keep(ci);
    });
    close();
    this.commands.splice(0, this.commands.length, ...commands);
    return result;
  }

  /**
   * A varying call fused into a dispatch ran again: the same kernel over the same shape and
   * layouts, its output where it was. Its new extras are written into the dispatch's parameters; an
   * input now in another buffer is rebound, where the buffer is none the dispatch writes (update()
   * checks that the members sharing a binding agree). Anything else is a Mismatch.
   */
  private updateMember(m: Member, kernel: KernelSource, element: ElementCall | undefined): void {
    const was = m.element;
    const d = m.fusion.dispatch;
    if (this.memberSeen || kernel.key !== m.key || element === undefined || element.inputs.length !== was.inputs.length || element.extras.length !== was.extras.length) throw new Mismatch();
    if (element.out.buffer !== was.out.buffer || !sameLayout(element.out, was.out) || element.shape.some((n, i) => n !== was.shape[i])) throw new Mismatch();
    this.memberSeen = true;
    let buffers = d.buffers;
    element.inputs.forEach((input, i) => {
      const b = m.at.inputs[i]!;
      if (!sameLayout(input, was.inputs[i]!)) throw new Mismatch();
      if (input.buffer === m.inputs[i]) return;
      if (b < 0 || m.fusion.written.includes(buffers[b]!) || m.fusion.written.includes(input.buffer) || this.elided.has(input.buffer)) throw new Mismatch();
      m.inputs[i] = input.buffer;
      buffers = buffers.map((x, j) => (j === b ? input.buffer : x));
    });
    this.setParams(d.slot, m.at.extras, element.extras, element.extras.length);
    if (buffers !== d.buffers) {
      d.buffers = buffers;
      d.bindGroup = this.bindGroup(d.layout, d.slot, buffers);
    }
  }

  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void {
    if (this.updating) {
      const c = this.next('copy') as Copy;
      if (c.upload || (this.elided.has(src) && c.src !== src) || (this.elided.has(dst) && c.dst !== dst)) throw new Mismatch();
      Object.assign(c, { src, srcOffset, dst, dstOffset, bytes });
      return;
    }
    this.commands.push({ kind: 'copy', src, srcOffset, dst, dstOffset, bytes, upload: false });
  }

  upload(buffer: GPUBuffer, byteOffset: number, data: ArrayBufferView): void {
    const bytes = data.byteLength;
    if (this.updating || this.member !== null) {
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
      if (this.member !== null) throw new Mismatch();
      const t = this.temps[this.tempCursor++];
      if (t === undefined || t.dtype !== dtype || t.numel !== numel) throw new Mismatch();
      return t;
    }
    const t = this.allocator.allocate(dtype, numel);
    this.temps.push(t);
    return t;
  }

  /**
   * A kernel is called (backend.ts, before it runs) with `args`. The first kernel a varying call
   * enters is its own: its arguments are noted, and when the call runs again, before any of its
   * work, with the very arguments of its last run (the same storage references and scalars: a
   * replay with the input tensors and scalar values of the last one), its recorded commands stand
   * as they are; when it is one dispatch whose kernel gave a Refresh that accepts the new
   * arguments (adamw with the next step's spec), only its parameters are rewritten. Either way
   * true says the kernel need not run. Anything the call queues after that is work it did not
   * record: a Mismatch, as ever.
   */
  unchanged(args: readonly unknown[]): boolean {
    const entering = this.entering;
    if (entering === null) return false;
    this.entering = null;
    const c = this.current;
    if (this.updating && c !== null && entering.args !== null && this.cursor === c.commands[0] && this.tempCursor === c.temps[0] &&
      !this.memberSeen && this.pendingUploads.length === this.uploadsBefore && !args.some(holdsFreed)) {
      if (sameArgs(entering.args, args)) {
        this.cursor = c.commands[0] + c.commands[1];
        this.tempCursor = c.temps[0] + c.temps[1];
        if (c.member !== undefined) this.memberSeen = true;
        this.skipped = true;
        return true;
      }
      // One dispatch whose kernel can say its new parameters: they are all that changes.
      const d = c.commands[1] === 1 && c.temps[1] === 0 && c.member === undefined ? this.commands[c.commands[0]] : undefined;
      const params = d?.kind === 'dispatch' && d.refresh !== undefined ? d.refresh(args) : null;
      if (params !== null) {
        if (params.length > PARAM_SLOT_WORDS) throw new Mismatch();
        this.setParams((d as Dispatch).slot, 0, params, PARAM_SLOT_WORDS);
        this.cursor++;
        this.skipped = true;
        this.refreshed++;
        entering.args = snapshotArgs(args);
        return true;
      }
    }
    entering.args = snapshotArgs(args);
    return false;
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
    if (this.checkedAt !== WebGPUStorage.releases) {
      for (const s of this.storages) {
        if (s.freed) {
          throw new WebGPUError(`webgpu: a prepared program uses a ${s.dtype} storage of ${s.numel} elements that has been freed; keep the tensors its calls use alive, or compile the function again`);
        }
      }
      this.checkedAt = WebGPUStorage.releases;
    }
    if (!this.update()) return false;
    const { rt } = this;
    // Parameters and uploads are rewritten in place: the last run's commands must be submitted first.
    if (this.encodedAt === rt.submits) rt.flush();
    // Only the slots whose parameters changed (a call run again with its last arguments changes none).
    if (this.dirtyEnd > this.dirtyFirst) {
      const first = this.dirtyFirst;
      rt.device.queue.writeBuffer(this.paramBuffer, first * PARAM_SLOT_BYTES, this.params, first * PARAM_SLOT_WORDS, (this.dirtyEnd - first) * PARAM_SLOT_WORDS);
      this.dirtyFirst = Number.POSITIVE_INFINITY;
      this.dirtyEnd = 0;
    }
    if (this.pendingUploads.length > 0) {
      for (const { buffer, data } of this.pendingUploads) rt.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
      this.pendingUploads.length = 0;
    }
    this.encode(rt.commandEncoder());
    rt.dispatches += this.dispatchCount;
    this.encodedAt = rt.submits;
    return true;
  }

  /**
   * Runs the varying calls against their recorded commands (a call with its last run's arguments
   * stops at its kernel's door: `unchanged`); false when one queued other work.
   */
  private update(): boolean {
    this.rt.sink = this;
    this.reran = 0;
    this.refreshed = 0;
    try {
      for (const c of this.calls) {
        if (!c.varies) continue;
        this.cursor = c.commands[0];
        this.tempCursor = c.temps[0];
        this.member = c.member ?? null;
        this.memberSeen = false;
        this.current = c;
        this.entering = c;
        this.uploadsBefore = this.pendingUploads.length;
        this.skipped = false;
        c.run();
        if (!this.skipped) this.reran++;
        if (this.cursor !== c.commands[0] + c.commands[1] || this.tempCursor !== c.temps[0] + c.temps[1] || (c.member !== undefined && !this.memberSeen)) return false;
      }
      // Every member reads what its fused dispatch binds now (inputs sharing a binding moved together).
      return this.fusions.every(({ dispatch, members }) => members.every((m) => m.at.inputs.every((b, i) => b < 0 || dispatch.buffers[b] === m.inputs[i])));
    } catch (e) {
      if (e instanceof Mismatch) return false;
      throw e;
    } finally {
      this.cursor = -1;
      this.tempCursor = -1;
      this.member = null;
      this.current = null;
      this.entering = null;
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
