// The whole backend without a GPU: the real addon, runtime and launch geometry, with the driver
// replaced by native/cuda/test/fake_libcuda.cpp (host memory; kernels run on the CPU emulation).
// Each case runs in a child process whose LD_LIBRARY_PATH makes dlopen("libcuda.so.1") find it.
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
 * Runs the child with the fake driver and returns its last stdout line as JSON. Asynchronous: the
 * conformance run takes a minute on a busy machine, and a synchronous spawn would stall this
 * worker's event loop (and vitest's messages to it) for all of it.
 */
function run(args: string[], env: Record<string, string> = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [child, ...args], {
      encoding: 'utf8',
      env: { ...process.env, LD_LIBRARY_PATH: fakeDir, ...env },
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
    expect(r.contractVersion).toBe('1.4.0');
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

  it('the training cases pass with cuBLASLt', async () => {
    const r = await run(['conformance', 'training/', 'auto']) as { counts: { pass: number }; failed: unknown[]; stats: { cublasLtCalls: number } };
    expect(r.failed).toEqual([]);
    expect(r.counts.pass).toBeGreaterThan(0);
    expect(r.stats.cublasLtCalls).toBeGreaterThan(0);
  });
});
