// The whole backend without a GPU: the real addon, runtime and launch geometry, with the driver
// replaced by native/cuda/test/fake_libcuda.cpp (host memory; kernels run on the CPU emulation).
// Each case runs in a child process whose LD_LIBRARY_PATH makes dlopen("libcuda.so.1") find it.
// The fake records captured launches into CUDA graphs and refuses what a capture cannot hold, so
// compile()'s replays through prepared programs (src/prepared.ts) are checked here too.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultAddonPath } from '../src/native.js';

const fakeDir = fileURLToPath(new URL('../build/fake-driver', import.meta.url));
const child = fileURLToPath(new URL('./fake-driver-run.mjs', import.meta.url));
const ready = existsSync(`${fakeDir}/libcuda.so.1`) && existsSync(defaultAddonPath());
if (!ready) console.log('[cuda] fake-driver tests skipped: the addon (nvcc) or the fake driver (g++) was not built');

/**
 * No NVRTC for these runs, whatever the machine has (a real one could not build for the emulation):
 * prepared programs are graphs of the eager kernels, and a program with elementwise calls to fuse says
 * why it does not (test/fusion.test.ts runs with the fake NVRTC).
 */
const NO_NVRTC = `${fakeDir}/absent/libnvrtc.so.13`;
const NO_FUSION = `; elementwise fusion off: NVRTC not found (${NO_NVRTC})`;

/**
 * Runs the child with the fake driver and returns its last stdout line as JSON. Asynchronous: the
 * conformance run takes a minute on a busy machine, and a synchronous spawn would stall this
 * worker's event loop (and vitest's messages to it) for all of it.
 */
function run(args: string[], env: Record<string, string> = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [child, ...args], {
      encoding: 'utf8',
      env: { ...process.env, LD_LIBRARY_PATH: fakeDir, CORE_CUDA_NVRTC: NO_NVRTC, ...env },
      timeout: WHOLE_RUN_MS,
      maxBuffer: 256 * 2 ** 20,
    }, (error, stdout, stderr) => {
      if (error) reject(new Error(`child failed (${error.code ?? error.message}): ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
    });
  });
}

/**
 * The whole suite through the emulated driver: about 45 s of CPU, but its wall time grows with the
 * machine's load (over 10 minutes with both cores shared by many processes), so its limit is for
 * hangs only.
 */
const WHOLE_RUN_MS = 1_800_000;

describe.skipIf(!ready)('cuda through the fake driver', () => {
  it('with a current driver and a device, cuda is available (cuBLASLt loaded)', async () => {
    expect(await run(['probe'])).toMatchObject({ type: 'cuda', available: true, deviceCount: 1 });
  });

  it('a driver older than CUDA 13.0 is reported as too old', async () => {
    expect(await run(['probe'], { FAKE_CUDA_VERSION: '12040' })).toMatchObject({
      available: false,
      reason: 'driver too old: needs ≥ CUDA 13.0 (an R580 or newer driver), found CUDA 12.4',
    });
  });

  it('a driver without devices is reported as no device', async () => {
    expect(await run(['probe'], { FAKE_CUDA_DEVICES: '0' })).toMatchObject({ available: false, reason: 'no device (the driver reports no CUDA device)' });
  });

  it('a GPU older than sm_80 is reported as no usable device', async () => {
    expect(await run(['probe'], { FAKE_CUDA_CC_MAJOR: '7' })).toMatchObject({
      available: false,
      reason: 'no device: Fake CUDA device (CPU emulation) has compute capability 7.0; this build has kernels for 8.0 and newer',
    });
  });

  it('fused attention through the addon matches the contract\'s formula in float64 (each dtype, shared mask, causal L < S and L > S, two column blocks)', async () => {
    const r = await run(['attention']) as {
      ok: boolean;
      results: { name: string; ok: boolean }[];
      transposedQueryError: string | null;
      contractVersion: string;
    };
    expect(r.results.filter((c) => !c.ok)).toEqual([]);
    expect(r.results.map((c) => c.name.split(',')[0])).toEqual(['float32', 'float16', 'bfloat16']);
    expect(r.ok).toBe(true);
    expect(r.transposedQueryError).toMatch(/cuda attention: q, k, v, out and logSumExp must be contiguous \(q \[1, 2, 2\]/);
    expect(r.contractVersion).toBe('1.6.0');
  });

  it('the conformance suite passes (strict) on cuda with our GEMM kernels', async () => {
    const r = await run(['conformance', '', 'own']) as {
      counts: { pass: number; fail: number; xpass: number; skip: number };
      failed: { id: string; message: string }[];
      stats: { wmmaCalls: number; tiledCalls: number; launches: number };
    };
    expect(r.failed).toEqual([]);
    expect(r.counts.fail).toBe(0);
    expect(r.counts.xpass).toBe(0);
    expect(r.counts.pass).toBeGreaterThan(3000);
    // Both of our GEMMs ran: tensor cores for the half types, the tiled kernel for float32.
    expect(r.stats.wmmaCalls).toBeGreaterThan(0);
    expect(r.stats.tiledCalls).toBeGreaterThan(0);
  }, WHOLE_RUN_MS);

  it('an isolated run (no cpu backend in the process) passes the cases where core reads values on the host', async () => {
    const r = await run(['isolated', '', 'auto']) as {
      counts: { pass: number; fail: number };
      failed: { id: string; message: string }[];
      cpu: { presence: string; skipped: number };
      backends: string[];
    };
    expect(r.failed).toEqual([]);
    expect(r.backends).toEqual(['cuda']);
    expect(r.cpu.presence).toBe('absent');
    expect(r.cpu.skipped).toBeGreaterThan(0); // cuda has one device here: the transfers need the cpu
    expect(r.counts.pass).toBeGreaterThan(300);
  }, WHOLE_RUN_MS);

  it('matmul and everything built on it pass with cuBLASLt (a fake libcublasLt.so.13: column-major, strided batches)', async () => {
    const r = await run(['conformance', 'matmul', 'auto']) as {
      counts: { pass: number; fail: number };
      failed: { id: string; message: string }[];
      stats: { cublasLtCalls: number; wmmaCalls: number; tiledCalls: number };
    };
    expect(r.failed).toEqual([]);
    expect(r.counts.pass).toBeGreaterThan(50);
    // cuBLASLt took the layouts it supports; the rest (e.g. no unit stride, int32) fell back to ours.
    expect(r.stats.cublasLtCalls).toBeGreaterThan(r.stats.wmmaCalls + r.stats.tiledCalls);
  });

  it('the conformance suite passes compiled (every case wrapped in compile(), replays through CUDA graphs)', async () => {
    const r = await run(['compiled', '', 'own']) as {
      counts: { pass: number; fail: number; xpass: number };
      failed: { id: string; message: string }[];
      prepares: { ok: number; failed: number; errors: string[] };
      stats: { graphLaunches: number; graphs: number };
    };
    expect(r.failed).toEqual([]);
    expect(r.counts.fail).toBe(0);
    expect(r.counts.xpass).toBe(0);
    expect(r.counts.pass).toBeGreaterThan(1000);
    // Every program core handed over was captured: none fell back to replaying call by call.
    expect(r.prepares.errors).toEqual([]);
    expect(r.prepares.ok).toBeGreaterThan(500);
    expect(r.stats.graphLaunches).toBeGreaterThan(1000);
  }, WHOLE_RUN_MS);

  it('the training cases pass with cuBLASLt', async () => {
    const r = await run(['conformance', 'training/', 'auto']) as { counts: { pass: number }; failed: unknown[]; stats: { cublasLtCalls: number } };
    expect(r.failed).toEqual([]);
    expect(r.counts.pass).toBeGreaterThan(0);
    expect(r.stats.cublasLtCalls).toBeGreaterThan(0);
  });
});

/** What test/graph-check.mjs reports (checkGraphs). */
interface GraphChecks {
  segments: {
    description: string;
    afterPrepare: { n: number[]; m: number[]; x: number[] };
    runs: { x0: number[]; n: number[]; s: number[]; m: number[]; fresh: number[] }[];
    eager: { n: number[]; s: number[]; m: number[] };
    graphLaunches: number;
    launches: number;
    liveGraphs: number;
    graphsAfterRelease: number;
    runAfterRelease: string | null;
  };
  varying: { description: string; got: number[][]; want: number[][] };
  freed: { error: string | null; launchedAfterFree: number };
  failedCapture: { error: string | null; out: number[]; x: number[]; y: number[]; graphsLeft: number };
  empties: { none: string; mixed: string; out: number[] };
  gemmOwn: { description: string; same: boolean };
  gemmLt: { description: string; same: boolean };
  mlpSgd: Training;
  mlpAdam: Training;
  convSgd: Training;
  mlpAdamLt: Training;
}
interface Training {
  steps: number;
  firstLossDiff: number;
  paramsSame: boolean;
  lossFell: boolean;
  replays: number;
  replay: string[];
  graphLaunches: number;
}

/** As the child's JSON line carries it (-0 becomes 0). */
const viaJson = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const seq = (n: number, scale = 0.37, shift = 0): number[] => Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i * scale + shift) * 2));
const PREPARED = /^prepared \(cuda: (\d+) calls, ([1-9]\d*) CUDA graphs? of (\d+) calls? \(\d+ kernels and copies\), (\d+) made as calls(; elementwise fusion off: NVRTC not found \(.*\))?\)$/;

describe.skipIf(!ready)('cuda prepare: CUDA graphs through the fake driver', () => {
  let checks: Promise<GraphChecks> | undefined;
  const graphs = () => (checks ??= run(['graphs']) as Promise<GraphChecks>);

  it('captures kernels into graphs around a host write (made as a call), runs nothing at prepare, and relaunches the graphs at every run', async () => {
    const { segments: s } = await graphs();
    expect(s.description).toBe(`cuda: 4 calls, 2 CUDA graphs of 3 calls (3 kernels and copies), 1 made as calls${NO_FUSION}`);
    expect(s.afterPrepare.n).toEqual(new Array(8).fill(7));
    expect(s.afterPrepare.m).toEqual(new Array(8).fill(7));
    expect(s.afterPrepare.x).toEqual(seq(8));
    // Each run: neg and add on x as it was, then the write, then mul on the new x.
    s.runs.forEach((r, i) => {
      expect(r.n).toEqual(viaJson(r.x0.map((v) => -v)));
      if (i > 0) expect(r.x0).toEqual(s.runs[i - 1]!.fresh);
    });
    expect(s.runs.at(-1)).toMatchObject(s.eager);
    expect(s.graphLaunches).toBe(6);
    expect(s.launches).toBe(9); // the graphs' kernels count as launches
  });

  it('release destroys the graphs (twice is fine); run after release throws', async () => {
    const { segments: s } = await graphs();
    expect(s.liveGraphs).toBeGreaterThanOrEqual(2);
    expect(s.graphsAfterRelease).toBe(s.liveGraphs - 2);
    expect(s.runAfterRelease).toBe('cuda: a prepared program (CUDA graph) was run after release()');
  });

  it('a varying call is made as a call at each run, with that run\'s storage', async () => {
    const { varying } = await graphs();
    expect(varying.description).toBe('cuda: 2 calls, 1 CUDA graph of 1 call (1 kernels and copies), 1 made as calls');
    expect(varying.got).toEqual(varying.want);
    expect(varying.got[0]).not.toEqual(varying.got[1]);
  });

  it('run throws, launching nothing, once a storage a graph addresses is freed', async () => {
    const { freed } = await graphs();
    expect(freed.error).toBe(
      'cuda: a prepared program (CUDA graph) uses a float32 storage of 24 elements on cuda:0 that has been freed; keep the tensors its calls use alive, or compile the function again',
    );
    expect(freed.launchedAfterFree).toBe(0);
  });

  it('a call that throws mid-capture makes prepare throw, with no graph left, nothing run and the stream usable', async () => {
    const { failedCapture: f } = await graphs();
    expect(f.error).toBe('a call failed');
    expect(f.graphsLeft).toBe(0);
    expect(f.x).toEqual(seq(4));
    expect(f.y).toEqual([5, 6, 7, 8]);
    expect(f.out).toEqual(f.x.map((v, i) => Math.fround(v + f.y[i]!)));
  });

  it('a driver error inside a capture makes prepare throw, gives back the graph made before it, and leaves the stream usable', async () => {
    const r = await run(['graph-driver-error'], { FAKE_CUDA_CAPTURE_FAIL: '3' }) as {
      error: string; graphsLeft: number; eager: number[]; x: number[]; again: { description: string; out: number[] };
    };
    expect(r.error).toBe('cuda:0: cuLaunchKernel ck_binary_f32 failed: fake driver error (CUresult 1)');
    expect(r.graphsLeft).toBe(0);
    const y = seq(4, 0.3);
    expect(r.eager).toEqual(r.x.map((v, i) => Math.fround(v - y[i]!)));
    expect(r.again.description).toBe(`cuda: 4 calls, 2 CUDA graphs of 3 calls (3 kernels and copies), 1 made as calls${NO_FUSION}`);
    expect(r.again.out).toEqual(viaJson(r.x.map((v, i) => Math.fround(Math.fround(-Math.fround(v + y[i]!)) * (i + 1)))));
  });

  it('a compiled step whose capture fails replays call by call (explain() says why) with eager\'s bits', async () => {
    const t = await run(['graph-fallback'], { FAKE_CUDA_CAPTURE_FAIL: '1' }) as Training;
    expect(t.firstLossDiff).toBe(-1);
    expect(t.paramsSame).toBe(true);
    expect(t.replays).toBeGreaterThanOrEqual(t.steps - 3);
    expect(t.replay).toEqual([expect.stringMatching(/^interpreter \(prepare failed: cuda:0: cuLaunchKernel \w+ failed: fake driver error \(CUresult 1\)\)$/)]);
    expect(t.graphLaunches).toBe(0);
  });

  it('calls on empty tensors queue nothing: no graph for them alone, and none run beside a write', async () => {
    const { empties } = await graphs();
    expect(empties.none).toBe('cuda: 1 call, 0 CUDA graphs of 0 calls (0 kernels and copies), 0 made as calls, 1 empty');
    // The empty call after the write shares the graph of the neg after it.
    expect(empties.mixed).toBe('cuda: 4 calls, 1 CUDA graph of 2 calls (1 kernels and copies), 1 made as calls, 1 empty');
    expect(empties.out).toEqual([-1, -2, -3, -4]);
  });

  it('calls on two devices: a graph per run of calls on one device, each launched on its own device', async () => {
    const r = await run(['graph-devices'], { FAKE_CUDA_DEVICES: '2' }) as { description: string; afterPrepare: number[][]; ran: number[][]; graphs: number[] };
    expect(r.description).toBe('cuda: 3 calls, 3 CUDA graphs of 3 calls (3 kernels and copies), 0 made as calls');
    expect(r.afterPrepare).toEqual([[9, 9, 9, 9], [9, 9, 9, 9], [9, 9, 9, 9]]);
    expect(r.ran[0]).toEqual(viaJson(seq(4).map((v) => -v)));
    seq(4, 0.3).forEach((v, i) => expect(r.ran[1]![i]).toBeCloseTo(Math.exp(v), 5));
    expect(r.ran[2]).toEqual([0, 0, 0, 0]);
    expect(r.graphs).toEqual([2, 1]);
  });

  it('our GEMM kernels are captured; cuBLASLt matmuls are made as calls (same bits either way)', async () => {
    const { gemmOwn, gemmLt } = await graphs();
    expect(gemmOwn).toEqual({ description: 'cuda: 2 calls, 1 CUDA graph of 2 calls (2 kernels and copies), 0 made as calls', same: true });
    expect(gemmLt).toEqual({ description: 'cuda: 2 calls, 1 CUDA graph of 1 call (1 kernels and copies), 1 made as calls', same: true });
  });

  it.each(['mlpSgd', 'mlpAdam', 'convSgd', 'mlpAdamLt'] as const)('a compiled training step (%s) replays through CUDA graphs with eager\'s loss and parameter bits', async (name) => {
    const t = (await graphs())[name];
    expect(t.firstLossDiff).toBe(-1);
    expect(t.paramsSame).toBe(true);
    expect(t.lossFell).toBe(true);
    expect(t.replays).toBeGreaterThanOrEqual(t.steps - 3);
    expect(t.replay).toHaveLength(1);
    const m = PREPARED.exec(t.replay[0]!);
    expect(m, t.replay[0]).not.toBeNull();
    expect(Number(m![3])).toBeGreaterThan(Number(m![4])); // most calls are in graphs
    expect(t.graphLaunches).toBeGreaterThanOrEqual(t.replays * Number(m![2]));
  });
});
