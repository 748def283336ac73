// The mixed-precision categories (autocast AC-*, gradscaler GS-*) on three backends:
// - the cpu, with its own policy table;
// - the cpu kernels under a device type with no table: the suite registers CUDA's lists with a
//   float16 default (a GPU-like third party), so the cuda policies (fp32 math, fp32-first-arg
//   reductions, promote, the banned op) run for real;
// - a backend with neither half compute nor synchronous reads: region cases become capability
//   skips, the AC-3 refusals run, and the scaler works on awaited reads alone.
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@core/backend-cpu';
import { autocastPolicy, float16, type Backend } from '@core/tensor';
import { buildCases, prepareEnv, runConformance, type Report } from '../src/index.js';

const MIXED = /^(autocast|gradscaler)\//;

function renamed(name: string): Backend<unknown> {
  return { ...(createCpuBackend() as Backend<unknown>), name };
}

function noHalfNoSync(name: string): Backend<unknown> {
  const cpu = createCpuBackend() as Backend<unknown>;
  const full = { storage: true, compute: true };
  return {
    ...cpu,
    name,
    readSync: undefined,
    capabilities: {
      ...cpu.capabilities,
      syncRead: false,
      dtypes: { float32: full, float64: full, int32: full, bool: full, float16: { storage: true, compute: false } },
    },
  };
}

function statusOf(report: Report, id: string): string | undefined {
  return report.cases.find((c) => c.id === id)?.status;
}

function failures(report: Report): string[] {
  return report.cases.filter((c) => c.status === 'fail').map((c) => `${c.id}: ${c.message}`);
}

describe('mixed precision on the cpu backend', () => {
  it('runs every AC/GS case the cpu table and capabilities allow, and they pass', async () => {
    const report = await runConformance(async () => {
      await import('@core/backend-cpu');
      return 'cpu';
    }, { filter: MIXED });
    expect(failures(report)).toEqual([]);
    expect(report.categories.autocast.pass).toBeGreaterThan(250);
    expect(report.categories.gradscaler.pass).toBeGreaterThan(70);
    // Only the cases needing a second device (or device type) are skipped.
    for (const c of report.cases.filter((x) => x.status === 'skip')) expect(c.reason).toMatch(/no second device/);
    for (const id of [
      'autocast/policy/declared',
      'autocast/AC-8/mm/bfloat16/inputs-rounded-first',
      'autocast/AC-8/matmul/float16/transposed-b-3x4@4x5',
      'autocast/AC-9/prod/bfloat16/all-3x4',
      'autocast/AC-12/cat/bfloat16/prioritize-error-float16',
      'autocast/AC-7/unlisted/exp/bfloat16/rand-3x4',
      'autocast/AC-15/stale-after-in-place/bfloat16',
      'autocast/AC-14/matmul/float16/grad-2d-3x4@4x5',
      'gradscaler/GS-9/scaler/f64-products',
      'gradscaler/GS-10/overflows-and-growth',
      'gradscaler/GS-6/bfloat16/views/fused',
      'gradscaler/GS-6/bfloat16/views/decomposed',
    ]) expect(statusOf(report, id), id).toBe('pass');
  });
});

describe('mixed precision on a GPU-like backend without a policy table', () => {
  it('registers CUDA\'s lists with a float16 default and runs the cuda policies', async () => {
    expect(autocastPolicy('gpulike')).toBeUndefined();
    const report = await runConformance(() => renamed('gpulike'), { filter: MIXED });
    expect(failures(report)).toEqual([]);
    // AC-5: a CPU scalar first does not decide the device type (the suite found this; now fixed).
    for (const d of ['float16', 'bfloat16']) expect(statusOf(report, `autocast/AC-5/cpu-scalar-first/pow/${d}`)).toBe('pass');
    expect(autocastPolicy('gpulike')?.defaultDtype).toBe(float16);
    for (const id of [
      'autocast/policy/cuda-lists-float16-registered-by-suite',
      'autocast/AC-9/exp/float16/rand-3x4',
      'autocast/AC-9/pow/bfloat16/rand-3x4',
      'autocast/AC-10/sum/float16/all-3x4',
      'autocast/AC-10/softmax/float16/explicit-dtype-float16',
      'autocast/AC-12/atan2/float16/mixed-float16+float32/rand-3x4',
      'autocast/AC-12/scatterAdd/bfloat16/prioritize-error-float16',
      'autocast/AC-13/binaryCrossEntropy/float16',
      'autocast/AC-14/softmax/bfloat16/grad-dim-1-3x4',
    ]) expect(statusOf(report, id), id).toBe('pass');
    // A second instantiation for the same device type keeps the case ids (expectations stay valid).
    const again = buildCases(await prepareEnv(() => renamed('gpulike'))).map((c) => c.id);
    expect(again).toContain('autocast/policy/cuda-lists-float16-registered-by-suite');
  });
});

describe('mixed precision on a backend without half compute or synchronous reads', () => {
  it('skips region cases for the declared capabilities, checks the refusals, and runs the scaler on awaited reads', async () => {
    const report = await runConformance(() => noHalfNoSync('nohalf'), { filter: MIXED });
    expect(failures(report)).toEqual([]);
    for (const c of report.cases.filter((x) => x.status === 'skip')) {
      expect(c.reason).toMatch(/^declared capabilities: the nohalf backend does not declare (compute|storage) for (float16|bfloat16)|no second device/);
    }
    for (const id of [
      'autocast/AC-3/float16/region',
      'autocast/AC-3/bfloat16/region',
      'autocast/AC-2/default-dtype',
      'gradscaler/GS-3/promotion/float16',
      'gradscaler/GS-5/float16-grads',
      'gradscaler/GS-9/scaler/f64-products',
      'gradscaler/GS-12/mirror-after-tensor-update',
      'gradscaler/GS-13/round-trip',
    ]) expect(statusOf(report, id), id).toBe('pass');
    expect(statusOf(report, 'autocast/AC-8/mm/float16/inputs-rounded-first')).toBe('skip');
  });
});
