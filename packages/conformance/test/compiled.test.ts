// The compiled run: every op-table case wrapped in compile() and called until it replays. It must
// catch a backend that is right eagerly and wrong only when a program replays, report the ops that
// cannot be captured as eager only (and fail when one of them is no longer refused), and say which
// cases have no compiled form.
import { describe, expect, it } from 'vitest';
import { createCpuBackend, CpuKernels, type CpuStorage } from '@core/backend-cpu';
import { CompileError, tensor, type TensorRef } from '@core/tensor';
import { EagerOnlyResult, underCompile } from '../src/cases/compiled.js';
import { NO_COMPILED_FORM, runConformance } from '../src/index.js';

/**
 * A cpu backend whose unary kernel skips an output it has written before, by the identity of the
 * output's ref: eager never passes the same ref twice, a replay passes the recorded one every time,
 * so its result keeps the previous call's values.
 */
function skipsRepeatedOutputs() {
  const written = new WeakSet<object>();
  return createCpuBackend({
    kernels: {
      ...CpuKernels,
      unary(op: Parameters<typeof CpuKernels.unary>[0], x: TensorRef<CpuStorage>, out: TensorRef<CpuStorage>) {
        if (written.has(out)) return;
        written.add(out);
        CpuKernels.unary(op, x, out);
      },
    },
  });
}

/** The cpu backend as it is (registered again: the mutant above replaces it under the same name). */
const cpu = () => createCpuBackend();

describe('compiled runs', () => {
  it('catch a kernel that is right eagerly and wrong in a replay, because the tracing calls see other input values', async () => {
    const filter = /^primitives\/neg\/float32\//;
    const eager = await runConformance(skipsRepeatedOutputs, { filter });
    expect(eager.counts.fail).toBe(0);
    const compiled = await runConformance(skipsRepeatedOutputs, { filter, compiled: true });
    const failed = compiled.cases.filter((c) => c.status === 'fail');
    expect(failed.map((c) => c.id)).toContain('primitives/neg/float32/rand-3x4');
    expect(failed.find((c) => c.id === 'primitives/neg/float32/rand-3x4')!.message).toMatch(/^neg float32 rand-3x4 \(compiled replay\): \d+ of 12 float32 values wrong/);
  });

  it('pass on the cpu backend, with every case of the filter replayed', async () => {
    const report = await runConformance(cpu, { filter: /^(primitives\/mul\/float32|autograd\/matmul\/float64|composites\/softmax\/float32\/dim-1)/, compiled: true });
    expect(report.counts.fail).toBe(0);
    expect(report.counts.pass).toBe(report.counts.total);
    expect(report.cases.some((c) => c.id.startsWith('autograd/'))).toBe(true);
    expect(report.cases.some((c) => c.id.endsWith('/fused'))).toBe(true);
  });

  it('report the ops compile() refuses by design as eager only, with the CompileError code', async () => {
    const report = await runConformance(cpu, { filter: /^composites\/(nonzeroAsync|multinomialAsync)\/float32\//, compiled: true });
    expect(report.counts.total).toBeGreaterThan(2);
    for (const c of report.cases) {
      expect(c.status).toBe('skip');
      expect(c.reason).toMatch(/^eager only: .* \(COMPILE_HOST_READ\)$/);
    }
  });

  it('skip the cases that have no compiled form, saying so', async () => {
    const report = await runConformance(cpu, { filter: /^promotion\//, compiled: true });
    expect(report.counts.total).toBeGreaterThan(0);
    expect(report.cases.every((c) => c.status === 'skip' && c.reason === NO_COMPILED_FORM)).toBe(true);
  });
});

describe('the eager-only listing', () => {
  const listing = { code: 'COMPILE_HOST_READ', reason: 'reads on the host' } as const;

  it('turns the listed CompileError into an eager-only result', async () => {
    const refused = underCompile('op', listing, () => Promise.reject(new CompileError('COMPILE_HOST_READ', 'read', undefined)));
    await expect(refused).rejects.toThrow(EagerOnlyResult);
    await expect(refused).rejects.toThrow('eager only: reads on the host (COMPILE_HOST_READ)');
  });

  it('fails a listed op that compiled, and any other CompileError', async () => {
    await expect(underCompile('op', listing, async () => tensor([1]))).rejects.toThrow(
      'op: listed as eager only (COMPILE_HOST_READ: reads on the host), but compile() did not refuse it: it traced and replayed',
    );
    await expect(underCompile('op', listing, () => Promise.reject(new CompileError('COMPILE_NONDETERMINISTIC', 'differs', undefined)))).rejects.toThrow('differs');
    await expect(underCompile('op', undefined, () => Promise.reject(new CompileError('COMPILE_HOST_READ', 'read', undefined)))).rejects.toThrow(CompileError);
  });
});
