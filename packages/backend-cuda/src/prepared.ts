// Prepared programs (Backend.prepare) of the cuda backend: CUDA graphs. At prepare the addon arms a
// stream capture and each call runs once: its kernel launches and device copies are captured on the
// compute stream, not run. A call that cannot join a capture (a host write or read, an allocation,
// cuBLASLt, another device) throws a NotCapturable error before it queues anything; it ends the
// graph under way and is made as a call at every run, between graphs. Varying calls (new input
// storages, learning rates, Adam's spec) are made as calls too, so run() never has to refuse. A
// graph bakes in device addresses: run() first checks that every storage a captured call addresses
// is still allocated.
//
// Elementwise fusion (compile() phase 2, src/fusion.ts): the first capture also records each call's
// elementwise kernel. Where NVRTC is loaded and runs of consecutive elementwise calls exist, their
// generated kernels are compiled into one module per device, the first graphs are dropped and the
// calls captured again with each run replaced by one launch of its fused kernel. Without NVRTC, or
// when it fails, the program keeps its first capture (the eager kernels) and its description says why.
import type { PreparedCall, PreparedProgram, PrepareOptions } from '@core/tensor';
import { Chain, generate, moduleSource, type EltRecord, type FusedKernel } from './fusion.js';
import type { CudaAddon } from './native.js';
import type { CudaStorage } from './storage.js';

/** Where the backend's `ref()` notes the storages a call addresses while it is captured, and its kernels their elementwise calls. */
export interface CaptureHooks {
  storages: Set<CudaStorage> | null;
  records: EltRecord[] | null;
}

type Step = { readonly device: number; readonly graph: number } | { readonly call: number };

const NOT_CAPTURABLE = 'CUDA_NOT_CAPTURABLE';
const OTHER_DEVICE = 'CUDA_CAPTURE_OTHER_DEVICE';
/** The addon's error code when NVRTC rejects a fused module (its message carries NVRTC's log). */
const FUSION_COMPILE = 'CUDA_FUSION_COMPILE';
/** The most of NVRTC's log a description quotes. */
const LOG_CHARS = 2000;

const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
const codeOf = (e: unknown): unknown => (e instanceof Error ? (e as Error & { code?: unknown }).code : undefined);

function checkLive(storages: readonly CudaStorage[]): void {
  for (const s of storages) {
    if (!s.live) {
      throw new Error(
        `cuda: a prepared program (CUDA graph) uses a ${s.dtype} storage of ${s.numel} elements on cuda:${s.device} that has been freed; keep the tensors its calls use alive, or compile the function again`,
      );
    }
  }
}

/** Whether and how the backend fuses: the addon's NVRTC, or why there is none. */
export type FusionSupport = { readonly version: string } | { readonly off: string };

/** A fused run as the second capture makes it: one launch at its first call, nothing at the others. */
interface FusedRun {
  readonly first: number;
  readonly last: number;
  readonly launch: () => void;
}

interface Capture {
  steps: Step[];
  storages: CudaStorage[];
  graphs: number;
  nodes: number;
  captured: number;
  /** Per call: its one elementwise kernel (recorded by the first capture), or null. */
  records: (EltRecord | null)[];
}

export class CudaPreparedProgram implements PreparedProgram {
  readonly description: string;
  private steps: Step[] = [];
  private readonly runs: (() => void)[];
  /** The storages the captured calls address. */
  private storages: CudaStorage[] = [];
  private released = false;

  constructor(private readonly addon: CudaAddon, private readonly hooks: CaptureHooks, calls: readonly PreparedCall[], options: PrepareOptions<CudaStorage> | undefined,
    fusion: FusionSupport) {
    this.runs = calls.map((c) => c.run);
    let cap = this.capture(calls, null);
    let fused = '';
    const chains = findChains(cap.records);
    if (chains.length > 0) {
      if ('off' in fusion) fused = `; elementwise fusion off: ${fusion.off}`;
      else {
        const made = this.fuse(chains, options?.deadAfter);
        if ('reason' in made) fused = `; elementwise fusion off: ${made.reason}`;
        else {
          // Capture again with the fused launches (on failure, once more as the first capture was).
          const runs = made.runs;
          try {
            this.release();
            this.released = false;
            this.steps = [];
            cap = this.capture(calls, runs);
            const members = runs.reduce((n, r) => n + r.last - r.first + 1, 0);
            fused = `; ${count(runs.length, 'fused kernel')} of ${count(members, 'elementwise call')} (NVRTC ${fusion.version}${made.elided > 0 ? `, ${made.elided} intermediates kept in registers` : ''})`;
          } catch (e) {
            // The first capture's graphs were released: capture it again as it was.
            this.steps = [];
            this.released = false;
            cap = this.capture(calls, null);
            fused = `; elementwise fusion off: the fused capture failed (${(e as Error).message})`;
          }
        }
      }
    }
    this.steps = cap.steps;
    this.storages = cap.storages;
    const made = cap.steps.length - cap.graphs;
    // Calls that queued nothing outside any graph (empty tensors) are left out of every run.
    const empty = calls.length - cap.captured - made;
    this.description = `cuda: ${count(calls.length, 'call')}, ${count(cap.graphs, 'CUDA graph')} of ${count(cap.captured, 'call')} (${cap.nodes} kernels and copies), ${made} made as calls${empty > 0 ? `, ${empty} empty` : ''}${fused}`;
  }

  /** Compiles the chains' kernels (one NVRTC module per device) and makes their launches, or says why not. */
  private fuse(chains: Chain[], deadAfter: readonly (readonly CudaStorage[])[] | undefined): { runs: FusedRun[]; elided: number } | { reason: string } {
    const dead = (storage: CudaStorage, from: number, to: number) => {
      for (let i = from; i <= to; i++) if (deadAfter?.[i]?.includes(storage)) return true;
      return false;
    };
    const runs: FusedRun[] = [];
    let elided = 0;
    const byDevice = new Map<number, { chain: Chain; kernel: FusedKernel }[]>();
    chains.forEach((chain, i) => {
      const last = chain.members.at(-1)!.call;
      const kernel = generate(chain, `ck_fused_${i}`, (s, from) => dead(s, from, last));
      const list = byDevice.get(chain.device) ?? [];
      list.push({ chain, kernel });
      byDevice.set(chain.device, list);
    });
    for (const [device, list] of byDevice) {
      const source = moduleSource(list.map((k) => k.kernel));
      let module: number;
      try {
        module = this.addon.fusedBuild(device, source);
      } catch (e) {
        // NVRTC's log, cut to a readable length.
        const log = (e as Error).message.length > LOG_CHARS ? `${(e as Error).message.slice(0, LOG_CHARS)}…` : (e as Error).message;
        if (codeOf(e) === FUSION_COMPILE) return { reason: `NVRTC could not compile the fused kernels: ${log}` };
        return { reason: `the fused kernels could not be loaded: ${(e as Error).message}` };
      }
      for (const { chain, kernel } of list) {
        const ptrs = kernel.buffers.map((s) => s.ptr);
        const { buffers, numel, name } = kernel;
        const hooks = this.hooks;
        const launch = () => {
          for (const s of buffers) hooks.storages?.add(s);
          this.addon.fusedLaunch(device, module, name, numel, ptrs);
        };
        runs.push({ first: chain.members[0]!.call, last: chain.members.at(-1)!.call, launch });
        elided += kernel.elided.length;
      }
    }
    runs.sort((a, b) => a.first - b.first);
    return { runs, elided };
  }

  /** Captures the calls into graphs (the fused runs, when given, replace their calls). */
  private capture(calls: readonly PreparedCall[], fused: FusedRun[] | null): Capture {
    const { addon, hooks } = this;
    const storages = new Set<CudaStorage>();
    const records: (EltRecord | null)[] = calls.map(() => null);
    const cap: Capture = { steps: this.steps, storages: [], graphs: 0, nodes: 0, captured: 0, records };
    const runAt = new Map<number, FusedRun>();
    const skipped = new Set<number>();
    for (const r of fused ?? []) {
      runAt.set(r.first, r);
      for (let i = r.first + 1; i <= r.last; i++) skipped.add(i);
    }
    // The capture under way: its calls so far and the storages they address.
    let open: { calls: number; storages: Set<CudaStorage> } | null = null;
    const close = () => {
      if (open === null) return;
      const segment = open;
      open = null;
      const end = addon.captureEnd();
      // Graph 0: its calls queued nothing (empty tensors), and being fixed they never will.
      if (end === null || end.graph === 0) return;
      cap.steps.push({ device: end.device, graph: end.graph });
      cap.graphs++;
      cap.nodes += end.nodes;
      cap.captured += segment.calls;
      for (const s of segment.storages) storages.add(s);
    };
    try {
      calls.forEach((c, i) => {
        if (c.varies) {
          close();
          cap.steps.push({ call: i });
          return;
        }
        // A fused run's other calls: captured as part of its launch.
        if (skipped.has(i)) {
          open!.calls++;
          return;
        }
        const fusedRun = runAt.get(i);
        const run = fusedRun?.launch ?? c.run;
        // Two tries: a call refused for being on another device than the capture starts one of its own.
        for (let attempt = 0; attempt < 2; attempt++) {
          if (open === null) {
            addon.captureBegin();
            open = { calls: 0, storages: new Set() };
          }
          const before = addon.captureNodes();
          const mine = new Set<CudaStorage>();
          const recorded: EltRecord[] = [];
          hooks.storages = mine;
          hooks.records = fused === null ? recorded : null;
          try {
            run();
            open.calls++;
            for (const s of mine) open.storages.add(s);
            // Fusable: exactly one elementwise kernel, queued as one node.
            if (recorded.length === 1 && addon.captureNodes() === before + 1) records[i] = recorded[0]!;
            return;
          } catch (e) {
            const code = codeOf(e);
            if (code !== NOT_CAPTURABLE && code !== OTHER_DEVICE) throw e;
            // A refusal comes before the call queues anything; a call that queued first would leave half of itself in the graph.
            if (addon.captureNodes() !== before) throw new Error(`cuda prepare: call ${i} queued kernels before an operation a CUDA graph cannot hold (${(e as Error).message})`);
            const alone = open.calls === 0;
            close();
            if (code === NOT_CAPTURABLE || alone) {
              cap.steps.push({ call: i });
              return;
            }
          } finally {
            hooks.storages = null;
            hooks.records = null;
          }
        }
      });
      close();
    } catch (e) {
      // Leave the stream usable and give back the graphs made so far; core then makes the calls itself.
      addon.captureAbort();
      this.steps = cap.steps;
      this.release();
      throw e;
    }
    cap.storages = [...storages];
    return cap;
  }

  run(): boolean {
    if (this.released) throw new Error('cuda: a prepared program (CUDA graph) was run after release()');
    checkLive(this.storages);
    for (const step of this.steps) {
      if ('call' in step) this.runs[step.call]!();
      else this.addon.graphLaunch(step.device, step.graph);
    }
    return true;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    for (const step of this.steps) if ('graph' in step) this.addon.graphDestroy(step.device, step.graph);
  }
}

/** Runs of at least two consecutive recorded calls that a Chain takes. */
function findChains(records: readonly (EltRecord | null)[]): Chain[] {
  const chains: Chain[] = [];
  let open: Chain | null = null;
  const close = () => {
    if (open !== null && open.members.length > 1) chains.push(open);
    open = null;
  };
  records.forEach((record, call) => {
    if (record === null) {
      close();
      return;
    }
    if (open?.add({ call, record })) return;
    close();
    open = new Chain({ call, record });
  });
  close();
  return chains;
}
