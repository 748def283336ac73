import { Generator } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { GPT } from '../src/model.js';
import { estimateLoss, getBatch, train } from '../src/train.js';
import { data, tinyRun } from './helpers.js';

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("the training loop (nanoGPT's train.py)", () => {
  it('learns: the training and validation losses fall from ln(vocab size) toward the text', async () => {
    const lrs: number[] = [];
    const r = await train(tinyRun, data, { onStep: (s) => lrs.push(s.lr) });
    expect(r.stepLosses).toHaveLength(40);
    expect(r.stepLosses.every(Number.isFinite)).toBe(true);
    expect(r.evals.map((e) => e.step)).toEqual([0, 20, 40]);
    expect(r.evals[0]!.valLoss).toBeCloseTo(Math.log(data.vocabSize), 0); // an untrained model is near uniform
    expect(mean(r.stepLosses.slice(-5))).toBeLessThan(r.stepLosses[0]! - 1);
    expect(r.evals[2]!.valLoss).toBeLessThan(r.evals[0]!.valLoss - 1);
    expect(r.amp).toBe('off');
    expect(r.model.training).toBe(false); // handed back ready to sample

    // Warmup (LinearLR from 1/5): lr·(1/5 + 4/5·i/5) at step i + 1, lr at step 6; then cosine from lr toward minLr over the remaining 35 steps.
    const { lr, minLr } = tinyRun;
    lrs.slice(0, 5).forEach((v, i) => expect(v).toBeCloseTo(lr * (0.2 + (0.8 * i) / 5), 12));
    lrs.slice(5).forEach((v, t) => expect(v).toBeCloseTo(minLr + ((lr - minLr) * (1 + Math.cos((Math.PI * t) / 35))) / 2, 12));
  });

  it('gives the same losses for the same seed and other losses for another seed', async () => {
    const run = { ...tinyRun, steps: 8, evalInterval: 8 };
    const a = await train(run, data);
    const b = await train(run, data);
    const c = await train({ ...run, seed: 4 }, data);
    expect(b.stepLosses).toEqual(a.stepLosses);
    expect(b.evals).toEqual(a.evals);
    expect(c.stepLosses).not.toEqual(a.stepLosses);
  });

  it('--amp bf16 and fp16 train under autocast (fp16 with a GradScaler) and say so', async () => {
    for (const amp of ['bf16', 'fp16'] as const) {
      const r = await train({ ...tinyRun, amp, steps: 12, evalInterval: 12 }, data);
      expect(r.amp).toBe(amp);
      expect(r.notices.join('\n')).toMatch(amp === 'fp16' ? /fp16 autocast on cpu with a GradScaler/ : /bf16/);
      expect(r.stepLosses.every(Number.isFinite)).toBe(true);
      expect(mean(r.stepLosses.slice(-3))).toBeLessThan(r.stepLosses[0]!);
    }
  });

  it('draws batches of next-token windows: y is x shifted by one character of the text', async () => {
    const tokens = Int32Array.from({ length: 50 }, (_, i) => i);
    const { x, y } = getBatch(tokens, 4, 8, new Generator(1));
    expect(x.shape).toEqual([4, 8]);
    const xs = await x.toArray() as number[][];
    const ys = await y.toArray() as number[][];
    xs.forEach((row, b) => {
      expect(row[0]).toBeGreaterThanOrEqual(0);
      expect(row[0]! + 8).toBeLessThanOrEqual(49);
      expect(row).toEqual(Array.from({ length: 8 }, (_, i) => row[0]! + i));
      expect(ys[b]).toEqual(row.map((v) => v + 1));
    });
    expect(() => getBatch(tokens.subarray(0, 8), 1, 8, new Generator(1))).toThrow(/needs more than blockSize \(8\)/);
  });

  it('estimates the validation loss on the same batches every time, in eval mode, leaving the mode as it was', async () => {
    const model = new GPT({ ...tinyRun.model, vocabSize: data.vocabSize, dropout: 0.5 });
    const options = { batches: 2, batchSize: 4, seed: 9, device: model.wte.weight.device, precision: { deviceType: 'cpu', enabled: false } };
    const first = await estimateLoss(model, data.val, options);
    expect(await estimateLoss(model, data.val, options)).toBe(first); // no dropout, same windows
    expect(model.training).toBe(true);
  });

  it('--compile replays the training step (clipping, scheduled lr, dropout) with the same losses, bit for bit', async () => {
    const run = { ...tinyRun, steps: 10, evalInterval: 5, model: { ...tinyRun.model, dropout: 0.1 } };
    const eager = await train(run, data);
    const compiled = await train({ ...run, compile: true }, data);
    expect(compiled.stepLosses).toEqual(eager.stepLosses);
    expect(compiled.evals).toEqual(eager.evals);
    expect(compiled.notices.join('\n')).toContain('compiled training step: 7 of 10 calls replayed');
  });

  it('explains an unavailable --device', async () => {
    await expect(train({ ...tinyRun, device: 'cuda' }, data)).rejects.toThrow(/--device cuda: cuda is unavailable/);
  });
});
