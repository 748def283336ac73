// The training goldens (100 steps of four real programs; compiled, every loss, scale and parameter
// must be eager's bits) catch a backend that is right eagerly and wrong only in replays.
import { describe, expect, it } from 'vitest';
import { createCpuBackend, CpuFused, type CpuStorage } from '@core/backend-cpu';
import type { AdamSpec, TensorRef } from '@core/tensor';
import { runConformance } from '../src/index.js';

const GOLDENS = /^training\/golden-/;

/**
 * A cpu backend whose fused AdamW update keeps the first spec it is given for a parameter, by the
 * identity of the parameter's ref: eager passes a new ref every step, a replay the recorded one, so
 * only a replay steps with a stale learning rate and stale bias corrections.
 */
function staleAdamSpecInReplays() {
  const first = new WeakMap<object, AdamSpec>();
  return createCpuBackend({
    wasm: false,
    fused: {
      ...CpuFused,
      adamw(param: TensorRef<CpuStorage>, grad: TensorRef<CpuStorage>, expAvg: TensorRef<CpuStorage>, expAvgSq: TensorRef<CpuStorage>, maxExpAvgSq: TensorRef<CpuStorage> | null, spec: AdamSpec) {
        if (!first.has(param)) first.set(param, spec);
        CpuFused.adamw(param, grad, expAvg, expAvgSq, maxExpAvgSq, first.get(param)!);
      },
    },
  });
}

describe('training goldens', () => {
  it('catch an optimizer kernel that is right eagerly and steps with stale values in replays', async () => {
    // The full suite runs these on every configuration; here they must pass eagerly and be caught compiled.
    const eager = await runConformance(staleAdamSpecInReplays, { filter: GOLDENS });
    expect(eager.cases.map((c) => [c.id, c.status])).toEqual([
      ['training/golden-mlp-sgd/float32', 'pass'],
      ['training/golden-mlp-adamw/float32', 'pass'],
      ['training/golden-cnn-sgd/float32', 'pass'],
      ['training/golden-gpt-bf16-gradscaler/bfloat16', 'pass'],
    ]);
    const compiled = await runConformance(staleAdamSpecInReplays, { filter: GOLDENS, compiled: true });
    const failed = compiled.cases.filter((c) => c.status === 'fail');
    expect(failed.map((c) => c.id).sort()).toEqual(['training/golden-gpt-bf16-gradscaler/bfloat16', 'training/golden-mlp-adamw/float32']);
    expect(failed.find((c) => c.id.includes('mlp-adamw'))!.message).toMatch(/^training golden mlp-adamw: the compiled loss at step \d+ is [-\d.e]+, eager's [-\d.e]+ \(compared bit for bit/);
  });
});
