// The runner's contract: capability-driven instantiation, expectations (skip, xfail, xpass,
// stale), strict mode, and the report.
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@core/backend-cpu';
import type { Backend } from '@core/tensor';
import { buildCases, parseExpectations, prepareEnv, renderMarkdown, runCase, runConformance, type Case } from '../src/index.js';

/** The cpu kernels under another name, declaring fewer dtypes: a stand-in third-party backend. */
function limited(name: string): Backend<unknown> {
  const cpu = createCpuBackend() as Backend<unknown>;
  return {
    ...cpu,
    name,
    capabilities: {
      ...cpu.capabilities,
      dtypes: { float32: { storage: true, compute: true }, int32: { storage: true, compute: true }, bool: { storage: true, compute: true }, float16: { storage: true, compute: false } },
    },
  };
}

describe('instantiation from capabilities', () => {
  it('skips undeclared dtypes and checks that core rejects them', async () => {
    const env = await prepareEnv(() => limited('limited'));
    const cases = buildCases(env);
    const exp = cases.find((c) => c.id === 'primitives/exp/float16/rand-3x4');
    expect(exp?.skip).toMatch(/does not declare compute for float16/);
    expect(cases.find((c) => c.id === 'capabilities/exp/float16/rejects')?.skip).toBeUndefined();
    expect(cases.find((c) => c.id === 'capabilities/exp/bfloat16/rejects')).toBeDefined();
    // Data movement needs storage only: f16 views and casts still run.
    expect(cases.find((c) => c.id === 'views/transpose/float16/2x3x4-(0,2)')?.skip).toBeUndefined();
    expect(cases.find((c) => c.id === 'primitives/to(float32)/float16/rand-3x4')?.skip).toBeUndefined();
    const report = await runConformance(() => limited('limited2'), { filter: /^(capabilities|views\/transpose|primitives\/to\(float32\))/ });
    expect(report.counts.fail).toBe(0);
    expect(report.counts.pass).toBeGreaterThan(20);
  });
});

describe('expectations', () => {
  it('needs a reason, a known status and unique ids', () => {
    expect(() => parseExpectations({ expectations: [{ id: 'a', status: 'xfail' }] })).toThrow(/reason/);
    expect(() => parseExpectations({ expectations: [{ id: 'a', status: 'maybe', reason: 'because of things' }] })).toThrow(/status/);
    expect(() => parseExpectations({ expectations: [{ id: 'a', status: 'skip', reason: 'because of things' }, { id: 'a', status: 'skip', reason: 'because of things' }] })).toThrow(/duplicate/);
  });
  it('reports skips, xfails, passing xfails and stale ids; strict fails on the last two', async () => {
    const expectations = {
      backend: 'cpu',
      expectations: [
        { id: 'primitives/add/float32/rand-3x4', status: 'skip', reason: 'skipped to test the runner' },
        { id: 'primitives/neg/float32/rand-3x4', status: 'xfail', reason: 'listed to test xpass reporting' },
        { id: 'primitives/no-such-op/float32/x', status: 'skip', reason: 'a stale entry for the test' },
      ],
    };
    const filter = /^primitives\/(add|neg)\/float32\/rand-3x4$/;
    const loose = await runConformance(() => createCpuBackend(), { expectations, filter });
    expect(loose.counts).toMatchObject({ skip: 1, xpass: 1, fail: 0 });
    expect(loose.ok).toBe(true);
    const strict = await runConformance(() => createCpuBackend(), { expectations, strict: true, filter });
    expect(strict.ok).toBe(false);
    const all = await runConformance(() => createCpuBackend(), { expectations, strict: true, filter: (c) => c.id.startsWith('storage/identity') });
    expect(all.staleExpectations).toEqual([]); // stale ids are only judged on unfiltered runs
  });
  it('an xfail that fails is an expected failure, with its message kept', async () => {
    const broken = createCpuBackend({ kernels: { ...(createCpuBackend().kernels), unary: () => { throw new Error('broken on purpose'); } } });
    const report = await runConformance(() => broken, {
      filter: /^primitives\/neg\/float32\/rand-3x4$/,
      expectations: { expectations: [{ id: 'primitives/neg/float32/rand-3x4', status: 'xfail', reason: 'the unary kernel is broken here' }] },
    });
    expect(report.cases[0]).toMatchObject({ status: 'xfail', reason: 'the unary kernel is broken here' });
    expect(report.cases[0]!.message).toContain('broken on purpose');
    expect(report.ok).toBe(true);
  });
});

describe('report', () => {
  it('renders a deterministic support matrix', async () => {
    const report = await runConformance(() => createCpuBackend(), { filter: /^primitives\/(add|exp)\/(float32|float16)\// });
    const md = renderMarkdown(report);
    expect(md).toMatch(/\| `add` \| ✓ 9 \| ✓ 9 \|/);
    expect(md).toMatch(/\| `exp` \| ✓ \d+ \| ✓ \d+ \|/);
    expect(renderMarkdown({ ...report, durationMs: 12345 })).toBe(md);
    expect(report.matrix.find((c) => c.op === 'exp' && c.dtype === 'float16')!.maxRel).toBe(0);
  });
});

describe('hang guard', () => {
  const slow = (timeoutMs?: number): Case => ({
    id: 'training/slow/-', category: 'training', op: 'slow', dtype: '-', ...(timeoutMs ? { timeoutMs } : {}),
    run: () => new Promise<void>((resolve) => setTimeout(resolve, 300)),
  });

  it("a case that runs past the run's limit fails as a hang, unless it declares a longer guard of its own", async () => {
    const hung = await runCase(slow(), undefined, 50);
    expect(hung.status).toBe('fail');
    expect(hung.message).toContain('did not finish within 50 ms');
    expect((await runCase(slow(60_000), undefined, 50)).status).toBe('pass');
  });
});
