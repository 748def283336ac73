// Prepared programs (Backend.prepare) of the cuda backend: CUDA graphs. At prepare the addon arms a
// stream capture and each call runs once: its kernel launches and device copies are captured on the
// compute stream, not run. A call that cannot join a capture (a host write or read, an allocation,
// cuBLASLt, another device) throws a NotCapturable error before it queues anything; it ends the
// graph under way and is made as a call at every run, between graphs. Varying calls (new input
// storages, learning rates, Adam's spec) are made as calls too, so run() never has to refuse. A
// graph bakes in device addresses: run() first checks that every storage a captured call addresses
// is still allocated.
import type { PreparedCall, PreparedProgram } from '@core/tensor';
import type { CudaAddon } from './native.js';
import type { CudaStorage } from './storage.js';

/** Where the backend's `ref()` notes the storages a call addresses while it is captured. */
export interface CaptureHooks {
  storages: Set<CudaStorage> | null;
}

type Step = { readonly device: number; readonly graph: number } | { readonly call: number };

const NOT_CAPTURABLE = 'CUDA_NOT_CAPTURABLE';
const OTHER_DEVICE = 'CUDA_CAPTURE_OTHER_DEVICE';

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

export class CudaPreparedProgram implements PreparedProgram {
  readonly description: string;
  private readonly steps: Step[] = [];
  private readonly runs: (() => void)[];
  /** The storages the captured calls address. */
  private readonly storages: CudaStorage[];
  private released = false;

  constructor(private readonly addon: CudaAddon, hooks: CaptureHooks, calls: readonly PreparedCall[]) {
    this.runs = calls.map((c) => c.run);
    const storages = new Set<CudaStorage>();
    let graphs = 0, nodes = 0, captured = 0;
    // The capture under way: its calls so far and the storages they address.
    let open: { calls: number; storages: Set<CudaStorage> } | null = null;
    const close = () => {
      if (open === null) return;
      const segment = open;
      open = null;
      const end = addon.captureEnd();
      // Graph 0: its calls queued nothing (empty tensors), and being fixed they never will.
      if (end === null || end.graph === 0) return;
      this.steps.push({ device: end.device, graph: end.graph });
      graphs++;
      nodes += end.nodes;
      captured += segment.calls;
      for (const s of segment.storages) storages.add(s);
    };
    try {
      calls.forEach((c, i) => {
        if (c.varies) {
          close();
          this.steps.push({ call: i });
          return;
        }
        // Two tries: a call refused for being on another device than the capture starts one of its own.
        for (let attempt = 0; attempt < 2; attempt++) {
          if (open === null) {
            addon.captureBegin();
            open = { calls: 0, storages: new Set() };
          }
          const before = addon.captureNodes();
          const mine = new Set<CudaStorage>();
          hooks.storages = mine;
          try {
            c.run();
            open.calls++;
            for (const s of mine) open.storages.add(s);
            return;
          } catch (e) {
            const code = codeOf(e);
            if (code !== NOT_CAPTURABLE && code !== OTHER_DEVICE) throw e;
            // A refusal comes before the call queues anything; a call that queued first would leave half of itself in the graph.
            if (addon.captureNodes() !== before) throw new Error(`cuda prepare: call ${i} queued kernels before an operation a CUDA graph cannot hold (${(e as Error).message})`);
            const alone = open.calls === 0;
            close();
            if (code === NOT_CAPTURABLE || alone) {
              this.steps.push({ call: i });
              return;
            }
          } finally {
            hooks.storages = null;
          }
        }
      });
      close();
    } catch (e) {
      // Leave the stream usable and give back the graphs made so far; core then makes the calls itself.
      addon.captureAbort();
      this.release();
      throw e;
    }
    this.storages = [...storages];
    const made = this.steps.length - graphs;
    // Calls that queued nothing outside any graph (empty tensors) are left out of every run.
    const empty = calls.length - captured - made;
    this.description = `cuda: ${count(calls.length, 'call')}, ${count(graphs, 'CUDA graph')} of ${count(captured, 'call')} (${nodes} kernels and copies), ${made} made as calls${empty > 0 ? `, ${empty} empty` : ''}`;
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
