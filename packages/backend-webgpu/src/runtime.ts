// The device runtime: command batching (many dispatches in one compute pass, one submit per
// batch; a batch is flushed by a read, a host write, synchronize(), a full parameter arena, or a
// microtask after the op that opened it), the pipeline cache, per-dispatch parameters in a shared
// arena, async reads through pooled staging buffers, non-blocking uploads through mapped staging
// buffers, and the sticky error state (device loss, out-of-memory, validation) that later
// operations report as typed errors. While a prepared program (prepared.ts) records or updates its
// commands, dispatches, copies and host writes go to it (`sink`) instead.
import type { ElementCall } from './fusion.js';
import { WebGPUDeviceLostError, WebGPUError, WebGPUOutOfMemoryError, WebGPUValidationError } from './errors.js';
import { BufferPool, MapMode, Usage } from './storage.js';

/** Bytes of one dispatch's parameter slot (a multiple of every minStorageBufferOffsetAlignment). */
export const PARAM_SLOT_BYTES = 512;
export const PARAM_SLOT_WORDS = PARAM_SLOT_BYTES / 4;
const ARENA_SLOTS = 256;

export type Access = 'r' | 'w';

export interface KernelSource {
  /** Cache key: a small description of the kernel (op, dtypes, layouts). */
  readonly key: string;
  /** Builds the WGSL when the key is not cached yet. */
  readonly source: () => string;
  /** Access of bindings 1..n (binding 0 is the parameter slot). */
  readonly bindings: readonly Access[];
}

/**
 * A kernel's parameters for new arguments of the same call (the kernel's arguments, as it was
 * called), or null when anything but the parameters would change (another storage, shape or
 * kernel). A prepared program calls it instead of the kernel for a call whose arguments change
 * at every replay only in what the parameters hold (an optimizer's per-step scalars).
 */
export type Refresh = (args: readonly unknown[]) => Uint32Array | null;

interface CachedPipeline {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

/**
 * Where queued work goes while a prepared program records or updates its commands (see
 * prepared.ts) instead of to the device: the runtime hands over every dispatch, copy and host write.
 */
export interface CommandSink {
  dispatch(kernel: KernelSource, buffers: readonly GPUBuffer[], params: Uint32Array, groups: readonly [number, number, number], element?: ElementCall, refresh?: Refresh): void;
  copy(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void;
  upload(buffer: GPUBuffer, byteOffset: number, data: ArrayBufferView): void;
}

export class Runtime {
  readonly device: GPUDevice;
  readonly pool: BufferPool;
  private readonly staging: BufferPool;
  private readonly pipelines = new Map<string, CachedPipeline>();
  private readonly layouts = new Map<string, GPUBindGroupLayout>();

  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private readonly arena: GPUBuffer;
  private readonly arenaData = new Uint32Array((ARENA_SLOTS * PARAM_SLOT_BYTES) / 4);
  private slots = 0;
  private flushScheduled = false;

  /** The first fatal error (device loss); every later operation throws it. */
  private fatal: WebGPUError | null = null;
  /** Errors reported asynchronously (validation, out-of-memory), raised by the next read or synchronize. */
  private pending: WebGPUError[] = [];

  /** Mapped upload staging buffers by size class, ready for `stagedWrite`. */
  private readonly mappedUploads = new Map<number, GPUBuffer[]>();
  /** Staging buffers whose copies are encoded in the current batch. */
  private inFlightUploads: { cls: number; staging: GPUBuffer }[] = [];

  /** Set while a prepared program records or updates its commands: queued work goes there. */
  sink: CommandSink | null = null;

  dispatches = 0;
  submits = 0;
  /** Host → device copies queued through mapped staging buffers. */
  stagedUploads = 0;

  constructor(device: GPUDevice) {
    this.device = device;
    const create = (size: number, usage: number) => this.createBuffer(size, usage);
    this.pool = new BufferPool(create);
    this.staging = new BufferPool(create, Usage.MAP_READ | Usage.COPY_DST, 64 * 2 ** 20);
    this.arena = device.createBuffer({ size: this.arenaData.byteLength, usage: Usage.STORAGE | Usage.COPY_DST });
    device.lost.then((info) => {
      this.fatal ??= new WebGPUDeviceLostError(
        `the WebGPU device was lost (${info.reason}): ${info.message || 'no message'}; tensors on it are gone, create them again after restarting the backend`,
        info.reason,
      );
    });
    device.onuncapturederror = (event: GPUUncapturedErrorEvent) => {
      const e = event.error;
      const isOom = typeof GPUOutOfMemoryError !== 'undefined' ? e instanceof GPUOutOfMemoryError : e.constructor?.name === 'GPUOutOfMemoryError';
      this.pending.push(isOom ? new WebGPUOutOfMemoryError(`the WebGPU device ran out of memory: ${e.message}`, 0) : new WebGPUValidationError(`WebGPU error: ${e.message}`));
    };
  }

  /** Throw the device-lost error, if any. */
  check(): void {
    if (this.fatal) throw this.fatal;
  }

  /** Throw (once) the first error the device reported since the last check. */
  private raisePending(): void {
    this.check();
    const e = this.pending.shift();
    if (e) {
      this.pending = [];
      throw e;
    }
  }

  private createBuffer(size: number, usage: number): GPUBuffer {
    this.check();
    this.device.pushErrorScope('out-of-memory');
    const buffer = this.device.createBuffer({ size, usage });
    void this.device.popErrorScope().then((err) => {
      if (err) this.pending.push(new WebGPUOutOfMemoryError(`the WebGPU device could not allocate ${size} bytes: ${err.message}`, size));
    });
    return buffer;
  }

  // ---- pipelines ----

  private layoutFor(bindings: readonly Access[]): GPUBindGroupLayout {
    const key = bindings.join('');
    let layout = this.layouts.get(key);
    if (!layout) {
      const entries: GPUBindGroupLayoutEntry[] = [{ binding: 0, visibility: 4 /* COMPUTE */, buffer: { type: 'read-only-storage' } }];
      bindings.forEach((a, i) => entries.push({ binding: i + 1, visibility: 4, buffer: { type: a === 'w' ? 'storage' : 'read-only-storage' } }));
      layout = this.device.createBindGroupLayout({ entries });
      this.layouts.set(key, layout);
    }
    return layout;
  }

  pipeline(kernel: KernelSource): CachedPipeline {
    let cached = this.pipelines.get(kernel.key);
    if (!cached) {
      const layout = this.layoutFor(kernel.bindings);
      const module = this.device.createShaderModule({ code: kernel.source(), label: kernel.key });
      const pipeline = this.device.createComputePipeline({
        label: kernel.key,
        layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: { module, entryPoint: 'main' },
      });
      cached = { pipeline, layout };
      this.pipelines.set(kernel.key, cached);
    }
    return cached;
  }

  get pipelineCount(): number {
    return this.pipelines.size;
  }

  // ---- batching ----

  private computePass(): GPUComputePassEncoder {
    if (!this.encoder) this.encoder = this.device.createCommandEncoder();
    if (!this.pass) this.pass = this.encoder.beginComputePass();
    this.scheduleFlush();
    return this.pass;
  }

  /** The current batch's command encoder, outside any compute pass (for copies and prepared programs). */
  commandEncoder(): GPUCommandEncoder {
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    if (!this.encoder) this.encoder = this.device.createCommandEncoder();
    this.scheduleFlush();
    return this.encoder;
  }

  /** Queued work is submitted at the latest when the current task ends, so the device never idles behind a busy host. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => {
      this.flushScheduled = false;
      if (!this.fatal) this.flush();
    });
  }

  /**
   * Queue one dispatch: `params` fills the slot bound at binding 0, `buffers` are bindings 1..n,
   * `groups` the workgroup counts. `element` describes an elementwise call that a prepared program may
   * fuse; `refresh` recomputes `params` for a prepared program (see Refresh).
   */
  dispatch(kernel: KernelSource, buffers: readonly GPUBuffer[], params: Uint32Array, groups: readonly [number, number, number], element?: ElementCall, refresh?: Refresh): void {
    this.check();
    if (groups[0] === 0 || groups[1] === 0 || groups[2] === 0) return;
    if (params.length > PARAM_SLOT_WORDS) throw new Error(`webgpu: ${params.length} parameter words exceed a slot (${PARAM_SLOT_WORDS})`);
    if (this.sink) {
      this.sink.dispatch(kernel, buffers, params, groups, element, refresh);
      return;
    }
    if (this.slots === ARENA_SLOTS) this.flush();
    const { pipeline, layout } = this.pipeline(kernel);
    const slot = this.slots++;
    this.arenaData.set(params, slot * PARAM_SLOT_WORDS);
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: this.arena, offset: slot * PARAM_SLOT_BYTES, size: PARAM_SLOT_BYTES } }];
    buffers.forEach((buffer, i) => entries.push({ binding: i + 1, resource: { buffer } }));
    const bindGroup = this.device.createBindGroup({ layout, entries });
    const pass = this.computePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(groups[0], groups[1], groups[2]);
    this.dispatches++;
  }

  /** Submit everything queued so far. */
  flush(): void {
    this.check();
    if (!this.encoder) return;
    if (this.pass) {
      this.pass.end();
      this.pass = null;
    }
    if (this.slots > 0) this.device.queue.writeBuffer(this.arena, 0, this.arenaData, 0, this.slots * PARAM_SLOT_WORDS);
    const commands = this.encoder.finish();
    this.encoder = null;
    this.slots = 0;
    this.device.queue.submit([commands]);
    this.submits++;
    this.recycleUploads();
    this.pool.trim(this.pool.maxPooledBytes);
    this.staging.trim(this.staging.maxPooledBytes);
  }

  /** Host → device: submits queued work first, so the write lands after every earlier op. */
  writeBuffer(buffer: GPUBuffer, byteOffset: number, data: ArrayBufferView): void {
    if (this.sink) {
      this.sink.upload(buffer, byteOffset, data);
      return;
    }
    this.flush();
    this.device.queue.writeBuffer(buffer, byteOffset, data.buffer, data.byteOffset, data.byteLength);
  }

  /**
   * Host → device without flushing: `data` goes into a mapped staging buffer (MAP_WRITE, taken
   * mapped from a pool) and a copy into `buffer` is encoded after the queued dispatches, in the
   * same batch. Used for non-blocking copies from pinned memory; `bytes` and offsets are multiples
   * of 4. The staging buffer is mapped again once the batch has run, for the next upload.
   */
  stagedWrite(buffer: GPUBuffer, byteOffset: number, data: ArrayBufferView): void {
    this.check();
    const bytes = data.byteLength;
    if (bytes === 0) return;
    if (this.sink) {
      this.sink.upload(buffer, byteOffset, data);
      return;
    }
    const cls = stagingClass(bytes);
    const staging = this.mappedUploads.get(cls)?.pop() ?? this.device.createBuffer({ size: cls, usage: Usage.MAP_WRITE | Usage.COPY_SRC, mappedAtCreation: true });
    new Uint8Array(staging.getMappedRange(0, bytes)).set(new Uint8Array(data.buffer, data.byteOffset, bytes));
    staging.unmap();
    this.commandEncoder().copyBufferToBuffer(staging, 0, buffer, byteOffset, bytes);
    this.inFlightUploads.push({ cls, staging });
    this.stagedUploads++;
  }

  /** After a submit: map the staging buffers it used again and return them to the pool (bounded). */
  private recycleUploads(): void {
    const used = this.inFlightUploads;
    this.inFlightUploads = [];
    for (const { cls, staging } of used) {
      staging.mapAsync(MapMode.WRITE).then(() => {
        const list = this.mappedUploads.get(cls) ?? [];
        if (list.length >= 4) {
          staging.destroy();
          return;
        }
        list.push(staging);
        this.mappedUploads.set(cls, list);
      }, () => staging.destroy());
    }
  }

  /** Copy `bytes` (a multiple of 4) within the device, queued in order with the dispatches. */
  copyBuffer(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, dstOffset: number, bytes: number): void {
    this.check();
    if (bytes === 0) return;
    if (this.sink) this.sink.copy(src, srcOffset, dst, dstOffset, bytes);
    else this.commandEncoder().copyBufferToBuffer(src, srcOffset, dst, dstOffset, bytes);
  }

  /** Device → host: the first `bytes` of `buffer` once all queued work is done. */
  async read(buffer: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
    this.check();
    if (this.sink) throw new WebGPUError('webgpu read: a prepared program cannot read from the device while it records its calls');
    const size = Math.max(4, Math.ceil(bytes / 4) * 4);
    const cls = stagingClass(size);
    const staging = this.staging.acquire(cls);
    this.commandEncoder().copyBufferToBuffer(buffer, 0, staging, 0, size);
    this.flush();
    try {
      await staging.mapAsync(MapMode.READ, 0, size);
    } catch (e) {
      this.check();
      throw new WebGPUError(`webgpu read: mapping the staging buffer failed: ${(e as Error).message}`);
    }
    const out = staging.getMappedRange(0, size).slice(0, bytes);
    staging.unmap();
    this.staging.release(cls, staging);
    this.raisePending();
    return out;
  }

  async synchronize(): Promise<void> {
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    this.raisePending();
  }

  destroy(): void {
    this.device.destroy();
  }
}

function stagingClass(bytes: number): number {
  // Powers of two: staging buffers are short-lived and shared by reads of every size.
  return Math.max(256, 2 ** Math.ceil(Math.log2(bytes)));
}
